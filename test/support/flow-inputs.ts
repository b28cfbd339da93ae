// Inputs that several suites start flows with: an electricity vend against the sandbox's test meter,
// a card payment with the sandbox's OTP, a virtual-account customer and credit, a mandate, and a `charge_successful` webhook delivered to the
// unmatched-webhook inbox.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { SANDBOX_OTP } from '../../src/sandbox';
import type { CardPaymentState } from '../../src/shared/card-payment';
import type { StarterContext } from '../../src/starters/connect';
import { waitForState } from '../../src/starters/payment-common';
import {
  getCardPaymentState,
  startCardPayment,
  submitOtp,
  type CardPaymentRequest,
} from '../../src/starters/card-payment';
import { paymentWebhookSignal, paymentWorkflowId, type PaymentWebhookEvent } from '../../src/shared/payment-webhook';
import type { MandateRequest } from '../../src/shared/mandate';
import type { VendInput } from '../../src/shared/vending';
import type { VirtualAccountCredit } from '../../src/shared/virtual-account-credit';
import type { unmatchedPaymentWebhookWorkflow } from '../../src/workflows/webhook-inbox';

/** A 5000 prepaid electricity vend (EKEDC, the sandbox's test meter), short settle and retry delays; `over` on top. */
export function electricityVend(orderRef: string, over: Partial<VendInput> = {}): VendInput {
  return {
    order_ref: orderRef,
    provider: 'EKEDC',
    meter_no: '45067198783',
    meter_type: 'prepaid',
    amount: 5000,
    phone_number: '08012345678',
    email: 'ada@example.com',
    options: { checkSettleDelay: '200ms', retryBackoff: '300ms' },
    ...over,
  };
}

/** A card payment of `amount` (NGN) with the card `number` (e.g. a sandbox TEST_CARDS entry), 10 s webhook grace. */
export function cardPayment(transactionRef: string, number: string, amount: number): CardPaymentRequest {
  return {
    transactionRef,
    amount,
    currency: 'NGN',
    card: { number, cvv: '123', expiryMonth: '12', expiryYear: '29' },
    customer: { name: 'Ada Obi', email: 'ada@example.com' },
    webhookGraceMs: 10_000,
  };
}

/**
 * A VARIABLE mandate of 1 000 000 from today to 2099 under a new reference (the sandbox's BVN, a
 * customer email of its own); `over` on top.
 */
export function newMandateRequest(over: Partial<MandateRequest> = {}): MandateRequest {
  return {
    mandateRef: `M${randomUUID().replace(/-/g, '').slice(0, 12)}`,
    debitType: 'variable',
    amount: 1_000_000,
    accountNumber: '0123456789',
    bankCode: '058',
    description: 'Gym membership',
    startDate: new Date().toISOString().slice(0, 10),
    endDate: '2099-12-31',
    customerEmail: `c-${randomUUID()}@example.com`,
    customer: { bvn: '22212345678', firstName: 'Ada', lastName: 'Obi', address: '1 Way', phone: '08012345678' },
    ...over,
  };
}

/** Starts the card payment, gives it the sandbox's OTP once it is awaiting one, and returns its result. */
export async function payCardWithOtp(starters: StarterContext, input: CardPaymentRequest): Promise<CardPaymentState> {
  const handle = await startCardPayment(starters, input);
  await waitForState(
    () => getCardPaymentState(starters, input.transactionRef),
    (s) => s.status === 'awaiting_otp',
  );
  await submitOtp(starters, input.transactionRef, SANDBOX_OTP);
  return handle.result();
}

/** A C1 virtual-account customer: a person with the sandbox's BVN, `over` on top. */
export function vaCustomer(customerIdentifier: string, over: Record<string, unknown> = {}) {
  return {
    customer_identifier: customerIdentifier,
    first_name: 'Ada',
    last_name: 'Obi',
    mobile_num: '08012345678',
    bvn: '22212345678',
    dob: '01/31/1990',
    gender: '2' as const,
    address: '1 Way',
    ...over,
  };
}

/** A successful 10 000 card charge as the webhook receiver reports it for `ref`, received now; `over` on top. */
export function chargeSuccessfulEvent(ref: string, over: Partial<PaymentWebhookEvent> = {}): PaymentWebhookEvent {
  return {
    event: 'charge_successful',
    transactionRef: ref,
    amount: 10_000,
    currency: 'NGN',
    transactionStatus: 'Success',
    transactionType: 'Card',
    isRecurring: false,
    receivedAt: new Date().toISOString(),
    ...over,
  };
}

/**
 * Delivers `event` as the webhook receiver does when no flow waits for its reference: signal-with-start
 * of the unmatched-webhook inbox (`payment-<ref>`) on `taskQueue`.
 */
export function signalUnmatchedWebhook(client: Client, taskQueue: string, event: PaymentWebhookEvent) {
  return client.workflow.signalWithStart<typeof unmatchedPaymentWebhookWorkflow, [PaymentWebhookEvent]>(
    'unmatchedPaymentWebhookWorkflow',
    {
      workflowId: paymentWorkflowId(event.transactionRef),
      taskQueue,
      args: [{}],
      signal: paymentWebhookSignal,
      signalArgs: [event],
    },
  );
}

/** A v2 credit of 5000 into 4567891234 for CUST-1, as the receiver hands it to its flow, received now; `over` on top. */
export function vaCredit(ref: string, over: Partial<VirtualAccountCredit> = {}): VirtualAccountCredit {
  return {
    transactionReference: ref,
    virtualAccountNumber: '4567891234',
    principalAmount: '5000.00',
    settledAmount: '4975.00',
    currency: 'NGN',
    customerIdentifier: 'CUST-1',
    version: 2,
    receivedAt: new Date().toISOString(),
    ...over,
  };
}
