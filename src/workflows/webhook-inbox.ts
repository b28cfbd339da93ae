// Workflows that give a webhook a durable home.
//
// The receiver delivers every payment webhook with signalWithStart to the workflow id that
// owns its transaction reference. When the owning flow is running, the signal lands there.
// When none is running (a payment made outside our flows, or a late duplicate after the
// flow finished), this workflow starts under that id and keeps the event for operators,
// so nothing is lost.
import type { Duration } from '@temporalio/common';
import { ActivityFailure, condition, defineSignal, log, patched, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { paymentWebhookSignal, unmatchedWebhookQuery, type PaymentWebhookEvent } from '../shared/payment-webhook';
import type { VirtualAccountCredit, VirtualAccountCreditOutcome } from '../shared/virtual-account-webhook';
import type { createVirtualAccountActivities } from '../activities/virtual-accounts';
import { paymentSearchAttributes } from '../shared/search-attributes';

type VirtualAccountActivities = ReturnType<typeof createVirtualAccountActivities>;

export const releaseUnmatchedSignal = defineSignal('releaseUnmatched');

export interface UnmatchedWebhookOptions {
  /** How long the events stay queryable before the workflow completes. */
  retention?: Duration;
}

export async function unmatchedPaymentWebhookWorkflow(opts: UnmatchedWebhookOptions = {}): Promise<PaymentWebhookEvent[]> {
  const events: PaymentWebhookEvent[] = [];
  let released = false;
  setHandler(paymentWebhookSignal, (event) => {
    // The same notification delivered twice is kept once.
    if (!events.some((e) => e.event === event.event && e.transactionRef === event.transactionRef && e.gatewayRef === event.gatewayRef)) {
      events.push(event);
    }
  });
  setHandler(unmatchedWebhookQuery, () => events);
  setHandler(releaseUnmatchedSignal, () => {
    released = true;
  });
  upsertSearchAttributes(
    paymentSearchAttributes({ flow: 'unmatched-webhook', status: 'unmatched', reference: workflowInfo().workflowId.replace(/^payment-/, '') }),
  );
  await condition(() => released, opts.retention ?? '30 days');
  return events;
}

export const VA_DURABLE_DEDUPE_PATCH = 'va-credit-durable-dedupe';

const { recordVirtualAccountCredit } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '30s',
  // The duplicate check must happen before anything is credited: retried until the database answers.
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});
const { confirmVirtualAccountCredit } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '30s',
  // Bounded: when the service cannot be asked, the credit stands on its signed values alone.
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5 },
});

/**
 * One workflow per delivered virtual-account credit (id va-credit-<transaction_reference>).
 *
 * The workflow id stops a redelivery while the workflow runs and, after it completed, for the
 * namespace's retention (the receiver starts it with ALLOW_DUPLICATE_FAILED_ONLY). Past that — or
 * after the execution was deleted — the durable record (va_credit_records, recordVirtualAccountCredit)
 * still answers 'duplicate': a reference is credited once, however late it comes back.
 *
 * Only signed values are credited; for v2/v3 fee_charged and transaction_date come from the
 * service's own record (C5), never from the notification body.
 */
export async function virtualAccountCreditWorkflow(credit: VirtualAccountCredit): Promise<VirtualAccountCreditOutcome | VirtualAccountCredit> {
  if (!patched(VA_DURABLE_DEDUPE_PATCH)) {
    // Runs started before the durable check: they completed at once, answering the notification.
    upsertSearchAttributes(
      paymentSearchAttributes({ flow: 'virtual-account-credit', reference: credit.transactionReference, status: 'credited', currency: credit.currency }),
    );
    return credit;
  }
  let outcome = await recordVirtualAccountCredit(credit);
  if (outcome.status === 'credited' && outcome.credit.fieldsSource === 'unconfirmed') {
    try {
      const confirmed = await confirmVirtualAccountCredit(credit);
      if (confirmed) outcome = { ...outcome, credit: confirmed };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn('virtual-account credit: the service could not confirm fee and date; credited on the signed values only', { transactionReference: credit.transactionReference });
    }
  }
  upsertSearchAttributes(
    paymentSearchAttributes({ flow: 'virtual-account-credit', reference: credit.transactionReference, status: outcome.status, currency: outcome.credit.currency }),
  );
  return outcome;
}
