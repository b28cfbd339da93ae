// The payment webhook (E-1) as workflows see it, and the signal that carries it.
// Defined once; used by the webhook receiver, the workflows and the starters.
import { defineQuery, defineSignal } from '@temporalio/workflow';

/** The parts of the payment webhook a workflow needs; personal data (email, mobile) is left out on purpose. */
export interface PaymentWebhookEvent {
  event: string; // charge_successful
  transactionRef: string;
  amount: number; // lowest unit
  currency: string;
  transactionStatus: string;
  transactionType: string;
  gatewayRef?: string;
  merchantAmount?: number;
  isRecurring: boolean;
  /** payment_information.token_id on a tokenised card's first payment. */
  tokenId?: string;
  /** The metadata sent at initiation, returned by the service. */
  meta?: Record<string, unknown>;
  receivedAt: string;
}

export const paymentWebhookSignal = defineSignal<[PaymentWebhookEvent]>('paymentWebhook');

/** Workflow id of the flow that owns a transaction reference. */
export const paymentWorkflowId = (transactionRef: string): string => `payment-${transactionRef}`;

/** Status of a webhook held by the unmatched-webhook workflow. */
export const unmatchedWebhookQuery = defineQuery<PaymentWebhookEvent[]>('unmatchedWebhooks');
/** Operator: ends an unmatched-webhook holder (its events were looked at, or forwarded to a flow). */
export const releaseUnmatchedSignal = defineSignal('releaseUnmatched');
