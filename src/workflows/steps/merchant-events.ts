// Emitting merchant events (docs/events.md) from a flow, in one home.
//
// A flow holds one MerchantEvents, built from its input's optional `notify` (a per-flow URL); without
// one its events go to the deployment's endpoint, the worker's NOTIFY_URL (the starter resolves
// nothing). Each event is one local activity (one marker) that starts the event's own delivery
// workflow under the event's id. Without a URL of its own, the first emission also learns whether
// the deployment has an endpoint: the local activity answers not-configured (worker without
// NOTIFY_URL) and the flow emits nothing more, so a deployment without events pays one marker per
// flow, not one delivery per event. In a long-lived (AUTO_UPGRADE) flow that emission is behind the
// patch `merchant-events-deployment-target`: flows that ran before it (no `notify`, so no events)
// move to new code mid-run and replay unchanged. A PINNED flow never meets new code mid-run
// (./versioning.ts), so it calls no patch: no marker, no TemporalChangeVersion write. Delivery runs apart
// from the flow, so it never changes or fails the flow's outcome. The local activity runs
// non-cancellable (a cancel of the flow still reports its outcome), and a failure to hand the
// event over is logged and counted (payflow_merchant_event_handovers_failed), never thrown. (Measured against a child workflow with ParentClosePolicy
// ABANDON: docs/events.md, "Emission".)
import { CancellationScope, log, metricMeter, patched, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { METRICS } from '../../shared/flow-metrics';
import type { MerchantEventDeliveryActivities } from '../../activities/merchant-event-delivery';
import {
  MERCHANT_EVENT_DATA_VERSION,
  merchantEventId,
  type MerchantEvent,
  type MerchantEventTarget,
  type MerchantEventType,
} from '../../shared/merchant-event';
import { LOCAL_EMIT } from './activity-options';
import { WORKFLOW_VERSIONING, type VersionedWorkflowType } from './versioning';

const { emitMerchantEvent } = proxyLocalActivities<MerchantEventDeliveryActivities>(LOCAL_EMIT);

/** Events of a flow without `notify` go to the deployment's endpoint (before it: nowhere). */
const DEPLOYMENT_TARGET_PATCH = 'merchant-events-deployment-target';

/** True when this flow sends events to the deployment's endpoint: a PINNED one always, others once patched. */
function deploymentTargetApplies(): boolean {
  const row = WORKFLOW_VERSIONING[workflowInfo().workflowType as VersionedWorkflowType] as
    (typeof WORKFLOW_VERSIONING)[VersionedWorkflowType] | undefined;
  return row?.behavior === 'PINNED' || patched(DEPLOYMENT_TARGET_PATCH);
}

/** What an event says of the outcome (no card data, no personal data). */
export interface OutcomeFields {
  status: string;
  reason?: string;
  amount?: number;
  currency?: string;
  /** A sub-outcome's reference (one mandate debit); part of the event id. */
  part?: string;
  /**
   * An event about another reference than the flow's own (a reconciliation's finding): its
   * `data.reference`, named in the id as a part is, and a stream of its own (sequence 1).
   */
  about?: string;
}

export class MerchantEvents {
  /** The flow's event counter (data.sequence). */
  private sequence: number;
  /** True once the flow knows its events go nowhere (no target on this deployment, or NO_EVENTS). */
  private silent = false;

  /**
   * `target`: the flow's own; undefined: the deployment's (the worker's NOTIFY_URL).
   * `emittedBefore`: the events earlier runs of the flow emitted (a continue-as-new carries it).
   */
  constructor(
    private readonly target: MerchantEventTarget | undefined,
    private readonly flow: string,
    private readonly reference: string,
    emittedBefore = 0,
  ) {
    this.sequence = emittedBefore;
  }

  /** A MerchantEvents that emits nothing (a flow before it knows its input). */
  static none(): MerchantEvents {
    const events = new MerchantEvents(undefined, '', '');
    events.silent = true;
    return events;
  }

  /** How many events the flow has emitted, earlier runs included: what a continue-as-new carries. */
  get emitted(): number {
    return this.sequence;
  }

  /** False once the flow knows its events go nowhere; until then an emission may add commands. */
  get enabled(): boolean {
    return !this.silent;
  }

  /** The event `types` names for `fields.status`, if any. */
  emitFor(types: EventTypes, fields: OutcomeFields & { passCharge?: boolean }): Promise<void> {
    const type = types[fields.status];
    if (!type) return Promise.resolve();
    const { passCharge: _ignored, ...outcome } = fields;
    return this.emit(type, outcome);
  }

  /** Hands one event to its delivery; nothing (no command) once the flow knows it has no target. */
  async emit(type: MerchantEventType, fields: OutcomeFields): Promise<void> {
    if (this.silent) return;
    // A long-lived flow from before the deployment's endpoint existed: without `notify` it emitted nothing.
    if (!this.target && !deploymentTargetApplies()) {
      this.silent = true;
      return;
    }
    const own = fields.about === undefined;
    if (own) this.sequence += 1;
    const occurredAt = new Date().toISOString();
    const event: MerchantEvent = {
      type,
      id: merchantEventId(workflowInfo().workflowId, type, fields.part ?? fields.about),
      created_at: occurredAt,
      data: {
        version: MERCHANT_EVENT_DATA_VERSION,
        flow: this.flow,
        reference: fields.about ?? this.reference,
        status: fields.status,
        ...(fields.reason !== undefined ? { reason: fields.reason } : {}),
        ...(fields.amount !== undefined && Number.isSafeInteger(fields.amount) ? { amount: fields.amount } : {}),
        ...(fields.currency !== undefined ? { currency: fields.currency.toUpperCase() } : {}),
        ...(fields.part !== undefined ? { part: fields.part } : {}),
        sequence: own ? this.sequence : 1,
        occurred_at: occurredAt,
      },
    };
    const url = this.target?.url;
    try {
      const emitted = await CancellationScope.nonCancellable(() =>
        emitMerchantEvent({ event, ...(url !== undefined ? { url } : {}) }),
      );
      // The deployment has no endpoint: asked once, the flow emits nothing more.
      if (emitted === 'not-configured') {
        this.silent = true;
        if (own) this.sequence -= 1; // not emitted: the counter counts only events handed over
      }
    } catch (err) {
      // Delivery never fails the flow: the outcome stands; the operator sees this warning and the
      // count (an alert, deploy/prometheus/alerts.yml), and redelivers with `notify replay`.
      metricMeter
        .createCounter(METRICS.eventHandoversFailed, undefined, 'Merchant events not handed to their delivery')
        .add(1, { type });
      log.warn('merchant event could not be handed to its delivery', {
        eventId: event.id,
        type,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}

/** A flow's status → the event it emits; a status not listed emits nothing. */
export type EventTypes = Readonly<Partial<Record<string, MerchantEventType>>>;

/** The card, bank, USSD, checkout and token-charge flows (PaymentFlow). */
export const PAYMENT_EVENT_TYPES: EventTypes = {
  success: 'payment.succeeded',
  failed: 'payment.failed',
  expired: 'payment.expired',
  cancelled: 'payment.cancelled',
  outcome_unknown: 'payment.needs_attention',
};

/** A flow before it knows its input: emits nothing. */
export const NO_EVENTS = MerchantEvents.none();

/** The POS terminal transactions (sale, refund, pre-authorisation, completion) by their send's outcome. */
export function posTransactionEventTypes(
  kind: 'sale' | 'refund' | 'preauth' | 'completion',
  more: EventTypes = {},
): EventTypes {
  const failed = `pos.${kind}.failed` as const;
  return {
    approved: `pos.${kind}.succeeded`,
    declined: failed,
    rejected: failed,
    not_received: failed,
    card_data_unavailable: failed,
    outcome_unknown: `pos.${kind}.needs_attention`,
    ...more,
  };
}
