// The `payments` Nexus service: what a Temporal-native caller (a workflow in another namespace) may
// start here through a Nexus endpoint, one operation per flow a backend starts. Every operation but
// the mandate debit is backed by the flow's own workflow (same workflow id, search attributes and
// duplicate rule as the starters) and answers with the flow's final result; the mandate debit is the
// mandate flow's `debitMandate` Update, answered at once. The caller imports this definition from
// its workflow code, so it names types only (and nexus-rpc, which the workflow bundle preloads).
//
// Operation inputs are recorded in the caller's history: nothing secret may be in them. A card
// payment and a POS transaction therefore take the card already sealed in the claim check
// (sealCardPaymentForNexus / the starters' sealPosCardRead in the caller's backend process).
import * as nexus from 'nexus-rpc';
import type { BankPaymentInput } from '../shared/bank-payment';
import type { CardPaymentInput, CardPaymentState } from '../shared/card-payment';
import type { CheckoutInput, CheckoutState } from '../shared/checkout';
import type { MandateDebit } from '../shared/mandate';
import type { DirectPaymentState } from '../shared/payment-common';
import type { PosRemoteInput, PosRemoteResult } from '../shared/pos-remote';
import type { PosSealedTransactionInput, PosTransactionResult } from '../shared/pos-terminal';
import type { TokenChargeInput, TokenChargeState } from '../shared/recurring';
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

export const paymentsNexusService = nexus.service(PAYMENTS_NEXUS_SERVICE, {
  /** B1 with the card sealed; PIN/OTP go through the starters (submitPin/submitOtp) meanwhile. */
  cardPayment: nexus.operation<CardPaymentInput, CardPaymentState>(),
  /** B3: the payer's code goes through the starters (submitBankCode) meanwhile. */
  bankPayment: nexus.operation<BankPaymentInput, DirectPaymentState>(),
  /** B5: the code to dial is read with the starters (the flow's state query). */
  ussdPayment: nexus.operation<UssdPaymentInput, DirectPaymentState>(),
  /** The hosted checkout: its checkout_url is read with getCheckoutState. */
  checkoutPayment: nexus.operation<CheckoutInput, CheckoutState>(),
  /** A4: one charge of a saved token under the caller's reference. */
  tokenCharge: nexus.operation<TokenChargeInput, TokenChargeState>(),
  vend: nexus.operation<VendInput, VendResult>(),
  posRemoteRequest: nexus.operation<PosRemoteInput, PosRemoteResult>(),
  /** F3 with the card read sealed. */
  posTransaction: nexus.operation<PosSealedTransactionInput, PosTransactionResult>(),
  mandateDebit: nexus.operation<MandateDebitOperationInput, MandateDebit>(),
});

export type PaymentsNexusService = typeof paymentsNexusService;
