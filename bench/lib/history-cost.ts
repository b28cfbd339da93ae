// What one workflow execution costs Temporal, read from its event history: events, the history's
// encoded bytes, the bytes of the payloads in it, and Temporal Cloud Actions counted by the rules
// of the pricing page (https://docs.temporal.io/cloud/pricing, "Operations that result in Actions",
// read 2026-11-26). docs/capacity.md gives the rules and what history cannot show (queries, activity
// heartbeats), which are counted apart.
import { temporal } from '@temporalio/proto';

type Event = temporal.api.history.v1.IHistoryEvent;
const T = temporal.api.enums.v1.EventType;

export interface HistoryCost {
  events: number;
  historyBytes: number;
  payloadBytes: number;
  /** Billable Actions visible in history (no queries, no heartbeats). */
  actions: number;
  /** The Actions by rule. */
  actionsBy: Record<ActionRule, number>;
}

export const ACTION_RULES = [
  'workflowStarted',
  'timerStarted',
  'searchAttributeUpsert',
  'signal',
  'updateAccepted',
  'activityAttempt',
  'markerTask',
  'childWorkflow',
  'nexusOperation',
] as const;
export type ActionRule = (typeof ACTION_RULES)[number];

/** The versioning search attribute `patched()` sets is exempt from Action counting. */
const CHANGE_VERSION = 'TemporalChangeVersion';

/** Sum of payload sizes (metadata + data) anywhere in `value`. */
export function payloadBytes(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  if (value instanceof Uint8Array) return 0;
  const o = value as Record<string, unknown>;
  if (o.data instanceof Uint8Array && o.metadata && typeof o.metadata === 'object') {
    let n = o.data.length;
    for (const [k, v] of Object.entries(o.metadata as Record<string, unknown>))
      n += k.length + (v instanceof Uint8Array ? v.length : 0);
    return n;
  }
  let total = 0;
  for (const v of Array.isArray(value) ? value : Object.values(o)) total += payloadBytes(v);
  return total;
}

function actionsOf(events: readonly Event[]): Record<ActionRule, number> {
  const by = Object.fromEntries(ACTION_RULES.map((r) => [r, 0])) as Record<ActionRule, number>;
  // All markers (local activities, side effects, patches) recorded in one workflow task are one Action.
  const markerTasks = new Set<string>();
  for (const e of events) {
    switch (e.eventType) {
      case T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        by.workflowStarted++;
        break;
      case T.EVENT_TYPE_TIMER_STARTED:
        by.timerStarted++;
        break;
      case T.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: {
        const fields = Object.keys(
          e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {},
        );
        if (fields.some((f) => f !== CHANGE_VERSION)) by.searchAttributeUpsert++;
        break;
      }
      case T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        by.signal++;
        break;
      case T.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        by.updateAccepted++;
        break;
      case T.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        // Each start or retry is an Action; history keeps one started event with the attempt reached.
        by.activityAttempt += Math.max(1, e.activityTaskStartedEventAttributes?.attempt ?? 1);
        break;
      case T.EVENT_TYPE_MARKER_RECORDED:
        markerTasks.add(String(e.markerRecordedEventAttributes?.workflowTaskCompletedEventId ?? e.eventId));
        break;
      case T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
      case T.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
        by.childWorkflow++;
        break;
      case T.EVENT_TYPE_NEXUS_OPERATION_SCHEDULED:
        by.nexusOperation++;
        break;
      default:
        break;
    }
  }
  by.markerTask = markerTasks.size;
  return by;
}

export function historyCost(history: temporal.api.history.v1.IHistory): HistoryCost {
  const events = history.events ?? [];
  const actionsBy = actionsOf(events);
  return {
    events: events.length,
    historyBytes: temporal.api.history.v1.History.encode(history).finish().length,
    payloadBytes: payloadBytes(events),
    actions: ACTION_RULES.reduce((n, r) => n + actionsBy[r], 0),
    actionsBy,
  };
}

/** Several executions' costs added up (a payment's flow and what it starts: event deliveries, locks). */
export function addCosts(costs: readonly HistoryCost[]): HistoryCost {
  const actionsBy = Object.fromEntries(
    ACTION_RULES.map((r) => [r, costs.reduce((n, c) => n + c.actionsBy[r], 0)]),
  ) as Record<ActionRule, number>;
  return {
    events: costs.reduce((n, c) => n + c.events, 0),
    historyBytes: costs.reduce((n, c) => n + c.historyBytes, 0),
    payloadBytes: costs.reduce((n, c) => n + c.payloadBytes, 0),
    actions: costs.reduce((n, c) => n + c.actions, 0),
    actionsBy,
  };
}

/**
 * Temporal Cloud's Pay-As-You-Go price of `actions` in one month (USD), after the plan's included
 * Actions, by the pricing page's volume tiers: [up to millions of Actions, USD per million].
 */
export const PAYG_TIERS: readonly (readonly [number, number])[] = [
  [5, 50],
  [10, 45],
  [20, 40],
  [50, 35],
  [100, 30],
  [200, 25],
];

export function cloudActionsUsd(actions: number, includedActions = 0): number {
  let left = Math.max(0, actions - includedActions) / 1e6;
  let floor = 0;
  let usd = 0;
  for (const [upTo, perMillion] of PAYG_TIERS) {
    const inTier = Math.min(left, upTo - floor);
    usd += inTier * perMillion;
    left -= inTier;
    floor = upTo;
    if (left <= 0) return usd;
  }
  throw new Error(`over ${floor}M Actions a month: the pricing page says to ask Sales`);
}
