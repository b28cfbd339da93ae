// Delivers one merchant event (docs/events.md) to the merchant's endpoint, apart from the flow that
// emitted it: the workflow id is the event id, so one event has one delivery at a time.
//
//   attempt (signed POST, 10 s) → 2xx: delivered · 410: gone (the endpoint asked us to stop) ·
//   anything else (another status, a timeout, a connection error): wait, exponential from 5 s
//   doubling to at most 1 h with jitter (half to all of the step), and try again under the same
//   id and body, until the window (NOTIFY_RETRY_FOR, default 3 days) ends → delivery_failed.
// An event without a URL of its own, on a worker without NOTIFY_URL, ends at once not_configured.
// PaymentStatus follows it (delivering → delivered / gone / delivery_failed / not_configured), so an operator finds
// failed deliveries by search attribute (`cli notify list --failed`) and redelivers them
// (`cli notify redeliver <id>`, a new run under the same id from this run's result).
import { ActivityFailure, proxyActivities, setHandler, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { MerchantEventDeliveryActivities } from '../activities/merchant-event-delivery';
import {
  MERCHANT_EVENT_DELIVERY_DEFAULTS,
  merchantEventDeliveryStateQuery,
  type MerchantEventDeliveryInput,
  type MerchantEventDeliveryState,
  type MerchantEventDeliveryStatus,
} from '../shared/merchant-event';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { loopRetriedAttempt } from './steps/activity-options';

/** One attempt: the HTTP call's 10 s plus a margin; the workflow's own loop does the retrying. */
const { deliverMerchantEvent } = proxyActivities<MerchantEventDeliveryActivities>(
  loopRetriedAttempt(MERCHANT_EVENT_DELIVERY_DEFAULTS.attemptTimeoutMs),
);

export async function merchantEventDeliveryWorkflow(
  input: MerchantEventDeliveryInput,
): Promise<MerchantEventDeliveryState> {
  return new MerchantEventDelivery(input).run();
}

class MerchantEventDelivery {
  // --- state ---
  private readonly state: MerchantEventDeliveryState;

  constructor(private readonly input: MerchantEventDeliveryInput) {
    this.state = {
      eventId: input.event.id,
      type: input.event.type,
      reference: input.event.data.reference,
      ...(input.url !== undefined ? { url: input.url } : {}),
      status: 'delivering',
      attempts: 0,
      input,
    };
    // --- handlers ---
    setHandler(merchantEventDeliveryStateQuery, () => ({ ...this.state }));
  }

  // --- main steps ---
  async run(): Promise<MerchantEventDeliveryState> {
    const until = Date.now() + this.input.retryForMs;
    let step: number = MERCHANT_EVENT_DELIVERY_DEFAULTS.firstBackoffMs;
    for (;;) {
      if (await this.attempt()) return this.state;
      const left = until - Date.now();
      if (left <= 0) return this.end('delivery_failed', this.state.lastError);
      // Jitter: half to all of the step, so endpoints coming back are not hit by every event at once.
      await sleep(Math.min(left, Math.round(step / 2 + (Math.random() * step) / 2)));
      step = Math.min(step * 2, MERCHANT_EVENT_DELIVERY_DEFAULTS.maxBackoffMs);
    }
  }

  /** One attempt; true when the delivery ended (delivered, gone, or cannot be signed). */
  private async attempt(): Promise<boolean> {
    this.state.attempts += 1;
    let r: Awaited<ReturnType<MerchantEventDeliveryActivities['deliverMerchantEvent']>>;
    try {
      r = await deliverMerchantEvent({
        event: this.input.event,
        ...(this.input.url !== undefined ? { url: this.input.url } : {}),
      });
    } catch (err) {
      // The worker was lost mid-attempt (or the attempt overran): an attempt like any other.
      this.state.lastError = `attempt failed: ${err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err)}`;
      return false;
    }
    if (r.outcome === 'delivered') {
      this.state.finalHttpStatus = r.httpStatus;
      this.end('delivered');
      return true;
    }
    if (r.outcome === 'gone') {
      this.state.finalHttpStatus = 410;
      this.end('gone', 'the endpoint answered 410 Gone: delivery stopped');
      return true;
    }
    // A new outcome only: histories recorded before it never reach this branch (no patch).
    if (r.outcome === 'not_configured') {
      this.end('not_configured', r.error);
      return true;
    }
    if (r.outcome === 'misconfigured') {
      this.end('delivery_failed', r.error);
      return true;
    }
    this.state.lastError = r.error;
    return false;
  }

  // --- helpers ---
  private end(status: MerchantEventDeliveryStatus, why?: string): MerchantEventDeliveryState {
    this.state.status = status;
    if (why !== undefined) this.state.lastError = why;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
    return this.state;
  }
}
