// Workflows that give a webhook a durable home.
//
// The receiver delivers every payment webhook with signalWithStart to the workflow id that
// owns its transaction reference. When the owning flow is running, the signal lands there.
// When none is running (a payment made outside our flows, or a late duplicate after the
// flow finished), this workflow starts under that id and keeps the event for operators,
// so nothing is lost.
import type { Duration } from '@temporalio/common';
import { condition, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  paymentWebhookSignal,
  releaseUnmatchedSignal,
  unmatchedWebhookQuery,
  type PaymentWebhookEvent,
} from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';

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
  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'unmatched-webhook',
      status: 'unmatched',
      reference: workflowInfo().workflowId.replace(/^payment-/, ''),
    }),
  );
  await condition(() => released, opts.retention ?? UNMATCHED_RETENTION);
  return events;
}
