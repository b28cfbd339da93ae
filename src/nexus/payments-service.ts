// The `payments` Nexus service: what a Temporal-native caller (a workflow in another namespace) may
// start here through a Nexus endpoint, one operation per flow a backend starts. A start operation is
// backed by the flow's own workflow (same workflow id, search attributes and duplicate rule as the
// starters) and answers with the flow's final result; a step on a flow the caller started (a mandate's
// OTP, debit, state or cancel; a pre-authorisation's completion or release) is that flow's Update or
// query, answered at once. A caller reaches only the flows it started (docs/nexus.md, "Who owns a flow"). The caller imports this definition from
// its workflow code, so it names types only (and nexus-rpc, which the workflow bundle preloads).
//
// Operation inputs are recorded in the caller's history: nothing secret may be in them. A card
// payment and the POS operations therefore take the card already sealed in the claim check, and the
// mandate its BVN and OTP (src/nexus/sealing.ts and the starters' sealPosCardRead, run in the
// caller's backend process).
import * as nexus from 'nexus-rpc';
import type { BankPaymentInput } from '../shared/bank-payment';
import type { CardPaymentInput, CardPaymentState } from '../shared/card-payment';
import type { CheckoutInput, CheckoutState } from '../shared/checkout';
import type { MandateDebit, MandateInput, MandateState } from '../shared/mandate';
import type { DirectPaymentState } from '../shared/payment-common';
import type {
  PosCompleteInput,
  PosCompletionAccepted,
  PosPreAuthResult,
  PosSealedPreAuthInput,
} from '../shared/pos-preauth';
import type { PosRefundResult, PosSealedRefundInput } from '../shared/pos-refund';
import type { PosRemoteInput, PosRemoteResult } from '../shared/pos-remote';
import type { PosSealedTransactionInput, PosTransactionResult } from '../shared/pos-terminal';
import type { RecurringInput, RecurringState, TokenChargeInput, TokenChargeState } from '../shared/recurring';
import type { SmsSendInput, SmsSendResult } from '../shared/sms';
import type { UssdPaymentInput } from '../shared/ussd-payment';
import type { VendInput, VendResult } from '../shared/vending';

export const PAYMENTS_NEXUS_SERVICE = 'payments';

/** A VARIABLE mandate's debit: the key is required here (a Nexus retry must find the same debit). */
export interface MandateDebitOperationInput {
  mandateRef: string;
  amount: number;
  narration?: string;
  idempotencyKey: string;
}

/** A mandate named by its reference (its state, its cancel). */
export interface MandateRefOperationInput {
  mandateRef: string;
}

/** The mandate's OTP, sealed in the caller's backend (sealMandateOtpForNexus): a claim-check handle, never the digits. */
export interface MandateOtpOperationInput {
  mandateRef: string;
  otpHandle: string;
}

/** A held pre-authorisation's completion: the same card presented again, sealed (sealPosCompletionForNexus). */
export type PosCompletionOperationInput = PosCompleteInput & { merchantRef: string };

export interface PosReleaseOperationInput {
  merchantRef: string;
  reason?: string;
}

export const paymentsNexusService = nexus.service(PAYMENTS_NEXUS_SERVICE, {
  /** The card charge (B1), the card sealed; PIN/OTP go through the starters (submitPin/submitOtp) meanwhile. */
  cardPayment: nexus.operation<CardPaymentInput, CardPaymentState>(),
  /** The direct bank debit (B3): the payer's code goes through the starters (submitBankCode) meanwhile. */
  bankPayment: nexus.operation<BankPaymentInput, DirectPaymentState>(),
  /** The USSD payment (B5): the code to dial is read with the starters (the flow's state query). */
  ussdPayment: nexus.operation<UssdPaymentInput, DirectPaymentState>(),
  /** The hosted checkout: its checkout_url is read with getCheckoutState. */
  checkoutPayment: nexus.operation<CheckoutInput, CheckoutState>(),
  /** One charge of a saved token (A4) under the caller's reference. */
  tokenCharge: nexus.operation<TokenChargeInput, TokenChargeState>(),
  vend: nexus.operation<VendInput, VendResult>(),
  posRemoteRequest: nexus.operation<PosRemoteInput, PosRemoteResult>(),
  /** A POS transaction (F3), the card read sealed. */
  posTransaction: nexus.operation<PosSealedTransactionInput, PosTransactionResult>(),
  /** A POS refund (F3) of one approved sale, the card read sealed; `refund_request_id` names the refund. */
  posRefund: nexus.operation<PosSealedRefundInput, PosRefundResult>(),
  /** A POS pre-authorisation (F3), the card read sealed; completed or released with the two operations below. */
  posPreAuth: nexus.operation<PosSealedPreAuthInput, PosPreAuthResult>(),
  posPreAuthComplete: nexus.operation<PosCompletionOperationInput, PosCompletionAccepted>(),
  posPreAuthRelease: nexus.operation<PosReleaseOperationInput, { releasedAt: string }>(),
  /** A plan: the first payment a hosted checkout, later cycles charges of its token (A4). */
  recurringPlan: nexus.operation<RecurringInput, RecurringState>(),
  /** One instant SMS send (G1). */
  smsSend: nexus.operation<SmsSendInput, SmsSendResult>(),
  /** The mandate's creation (D1), the BVN sealed (sealMandateForNexus); answers when the mandate ends. */
  mandateCreate: nexus.operation<MandateInput, MandateState>(),
  mandateOtp: nexus.operation<MandateOtpOperationInput, MandateState>(),
  mandateState: nexus.operation<MandateRefOperationInput, MandateState>(),
  mandateDebit: nexus.operation<MandateDebitOperationInput, MandateDebit>(),
  mandateCancel: nexus.operation<MandateRefOperationInput, MandateState>(),
});

export type PaymentsNexusService = typeof paymentsNexusService;
