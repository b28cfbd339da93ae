// Merchant events (docs/events.md): the local activity a flow runs to hand an event to its
// delivery workflow, and the delivery workflow's one HTTP attempt.
//  - The target: the flow's own URL, else the deployment's, this worker's NOTIFY_URL, read when the
//    event is emitted (is there one at all?) and again at each attempt (the URL itself). Processes
//    that only start flows know neither the URL nor the secret.
//  - emitMerchantEvent starts merchantEventDeliveryWorkflow under the event's id through the
//    worker's Temporal client. "Already started" is success: it is this event's own delivery (a
//    replayed or retried emission), so an event is never delivered by two workflows at once.
//  - deliverMerchantEvent signs with the worker's NOTIFY_SECRET and POSTs once (10 s); its answer
//    says delivered, gone (410) or retry. The secret never enters history: only the outcome does.
//    A target this deployment never sends to (src/notify/target-guard.ts: a private address, http
//    in production, a host outside NOTIFY_ALLOWED_HOSTS) ends the delivery at once with the reason.
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { deliverOnce, type DeliveryAttempt } from '../notify/deliver';
import { outboundPolicyOf } from '../notify/target-guard';
import {
  MERCHANT_EVENT_DELIVERY_DEFAULTS,
  MERCHANT_EVENT_FLOW,
  type MerchantEvent,
  type MerchantEventDeliveryInput,
  type MerchantEventEmission,
  type MerchantEventEmitted,
} from '../shared/merchant-event';
import { flowStartOptions } from '../shared/flow-summary';
import type { ActivityDeps } from './deps';

export type MerchantEventAttempt =
  | Exclude<DeliveryAttempt, { outcome: 'refused' }>
  | { outcome: 'misconfigured'; error: string }
  | { outcome: 'not_configured'; error: string };

/** Why an event without a URL of its own goes nowhere on this worker. */
export const NO_DEPLOYMENT_TARGET = 'the event names no URL and this worker has no NOTIFY_URL';

export function createMerchantEventDeliveryActivities(deps: ActivityDeps) {
  /** The URL an event goes to: its own, else this worker's NOTIFY_URL; none: not configured. */
  const targetOf = (url: string | undefined): string | undefined => url ?? deps.config.notify?.url;

  return {
    /**
     * Starts the event's delivery (workflow id = event id); "already started" is our own. Without a
     * URL anywhere, starts nothing and answers not-configured (the flow then stops emitting).
     */
    async emitMerchantEvent(emission: MerchantEventEmission): Promise<MerchantEventEmitted> {
      if (!targetOf(emission.url)) return 'not-configured';
      if (!deps.temporal)
        throw ApplicationFailure.nonRetryable('no Temporal client on this worker: merchant events cannot be started');
      const input: MerchantEventDeliveryInput = {
        event: emission.event,
        // No URL of its own: the deployment's, resolved at each attempt (not fixed here).
        ...(emission.url !== undefined ? { url: emission.url } : {}),
        retryForMs: deps.config.notify?.retryForMs ?? MERCHANT_EVENT_DELIVERY_DEFAULTS.retryForMs,
      };
      try {
        await deps.temporal.workflow.start('merchantEventDeliveryWorkflow', {
          workflowId: emission.event.id,
          taskQueue: deps.config.temporal.taskQueue,
          args: [input],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          ...flowStartOptions('merchantEventDeliveryWorkflow', {
            flow: MERCHANT_EVENT_FLOW,
            reference: emission.event.data.reference,
            status: 'delivering',
          }),
        });
        return 'started';
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return 'already-started';
        throw err;
      }
    },

    /** One signed POST of the event (10 s); never throws for the merchant's answer. */
    async deliverMerchantEvent(input: { event: MerchantEvent; url?: string }): Promise<MerchantEventAttempt> {
      const url = targetOf(input.url);
      // One quiet outcome, not three days of retries: this deployment has no endpoint for it.
      if (!url) return { outcome: 'not_configured', error: NO_DEPLOYMENT_TARGET };
      const secret = deps.config.notify?.secret;
      if (!secret)
        return { outcome: 'misconfigured', error: 'NOTIFY_SECRET is not set on this worker: events cannot be signed' };
      const attempt = await deliverOnce(url, secret, input.event, MERCHANT_EVENT_DELIVERY_DEFAULTS.attemptTimeoutMs, {
        policy: outboundPolicyOf(deps.config),
      });
      if (attempt.outcome !== 'refused' && attempt.outcome !== 'retry') return attempt;
      const where = { eventId: input.event.id, type: input.event.type, error: attempt.error };
      const retried = attempt.outcome === 'retry';
      deps.logger.warn(where, retried ? 'merchant event not delivered; retried later' : 'merchant event refused');
      // Refused is not retried: the same URL is refused on every attempt (the workflow ends it delivery_failed).
      return retried ? attempt : { outcome: 'misconfigured', error: attempt.error };
    },
  };
}

export type MerchantEventDeliveryActivities = ReturnType<typeof createMerchantEventDeliveryActivities>;
