// Workflows that give a webhook a durable home.
//
// The receiver delivers every payment webhook with signalWithStart to the workflow id that
// owns its transaction reference. When the owning flow is running, the signal lands there.
// When none is running (a payment made outside our flows, or a late duplicate after the
// flow finished), this workflow starts under that id and keeps the event for operators,
// so nothing is lost, and tells the merchant once (`webhook.unmatched`, docs/events.md).
import type { Duration } from '@temporalio/common';
import { condition, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  paymentWebhookSignal,
  releaseUnmatchedSignal,
  unmatchedWebhookQuery,
  type PaymentWebhookEvent,
} from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { MerchantEvents } from './steps/merchant-events';

export { releaseUnmatchedSignal };

/** How long an early or orphan webhook is kept for operators by default (docs/architecture.md): never lost meanwhile. */
const UNMATCHED_RETENTION: Duration = '30 days';

export interface UnmatchedWebhookOptions {
  /** How long the events stay queryable before the workflow completes. */
  retention?: Duration;
}

export async function unmatchedPaymentWebhookWorkflow(
  opts: UnmatchedWebhookOptions = {},
): Promise<PaymentWebhookEvent[]> {
  const events: PaymentWebhookEvent[] = [];
  let released = false;
  setHandler(paymentWebhookSignal, (event) => {
    // The same notification delivered twice is kept once.
    if (
      !events.some(
        (e) =>
          e.event === event.event && e.transactionRef === event.transactionRef && e.gatewayRef === event.gatewayRef,
      )
    ) {
      events.push(event);
    }
  });
  setHandler(unmatchedWebhookQuery, () => events);
  setHandler(releaseUnmatchedSignal, () => {
    released = true;
  });
  const reference = workflowInfo().workflowId.replace(/^payment-/, '');
  upsertSearchAttributes(paymentSearchAttributes({ flow: 'unmatched-webhook', status: 'unmatched', reference }));
  // No patch of its own: an inbox has no target of its own, so its event asks the deployment
  // endpoint's patch, which an inbox recorded before this change never passed (docs/events.md).
  await tellParked(reference, events[0]);
  await condition(() => released, opts.retention ?? UNMATCHED_RETENTION);
  return events;
}

/**
 * The first notification parked (signalWithStart delivers it with the start, so it is here before
 * the first await), told to the deployment's endpoint: the inbox has no `notify` of its own. Its
 * kind, amount and currency; no payer data, nothing of the signature. One event per inbox: later
 * notifications of the reference join it.
 */
async function tellParked(reference: string, first: PaymentWebhookEvent | undefined): Promise<void> {
  if (!first) return;
  await new MerchantEvents(undefined, 'unmatched-webhook', reference).emit('webhook.unmatched', {
    status: 'unmatched',
    reason: `a ${first.event} notification that no running flow owns, kept for an operator`,
    ...(moneyOf(first) ?? {}),
  });
}

/** The notification's amount (lowest unit) with its currency, when both are well formed. */
function moneyOf(event: PaymentWebhookEvent): { amount: number; currency: string } | undefined {
  const { amount, currency } = event;
  return Number.isSafeInteger(amount) && amount >= 0 && /^[A-Za-z]{3}$/.test(currency)
    ? { amount, currency }
    : undefined;
}
