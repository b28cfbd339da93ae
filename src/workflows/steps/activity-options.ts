// The one home of activity options: every proxyActivities / proxyLocalActivities in src/workflows
// takes one of these named policies (docs/money-decisions.md, "Send once"). Durations come from the
// timeouts table (src/shared/activity-timeouts.ts), so a policy never disagrees with the HTTP client.
import type { ActivityOptions, LocalActivityOptions, RetryPolicy } from '@temporalio/common';
import type { ActivityQueue } from '../../shared/task-queues';
import {
  IN_FLIGHT_MARGIN_MS,
  MONEY_ACTIVITY_HEARTBEAT_TIMEOUT_MS,
  SERVICE_ACTIVITY_START_TO_CLOSE_MS,
} from '../../shared/activity-timeouts';

/**
 * The activity queue a policy's activities run on (docs/deployment.md, "Task queues"): money sends on
 * `<main>-money`, reads and polls on `<main>-reads`. A mark, not the queue's name: the name derives
 * from the calling flow's own task queue when the activity is scheduled (./activity-queues.ts), and
 * only for PINNED flows; an AUTO_UPGRADE flow keeps its activities on the main queue (moving them
 * changes its commands, which takes a patch). A symbol, so spreading a policy keeps it.
 */
export const ACTIVITY_QUEUE: unique symbol = Symbol.for('payflow.activityQueue');

/** Activity options with the activity queue their activities run on. */
export type QueuedActivityOptions = ActivityOptions & { readonly [ACTIVITY_QUEUE]?: ActivityQueue };

/** `options` with its activities on `queue` (a policy not built from `moneySend`, `READ` or `POLL`). */
export function onQueue(queue: ActivityQueue, options: ActivityOptions): QueuedActivityOptions {
  return { ...options, [ACTIVITY_QUEUE]: queue };
}

/** Errors a read never retries: the request itself was wrong, asking again changes nothing. */
export const READ_NON_RETRYABLE = ['InvalidRequest', 'BadRequest', 'Unauthorized'];

/** A read's retry: a few attempts with backoff, never on a refusal. */
export const READ_RETRY: RetryPolicy = {
  maximumAttempts: 5,
  initialInterval: '1s',
  maximumInterval: '10s',
  nonRetryableErrorTypes: READ_NON_RETRYABLE,
};

/**
 * A money-moving send (B1/B2, D1/D3, E1, F3, H3, …): one attempt, never retried by Temporal; the
 * flow's send-once rule requeries before anything is sent again. The heartbeat notices a lost
 * worker in seconds. `httpTimeoutMs`: the call's own HTTP deadline when it has one longer than the
 * client's default; the attempt then outlives it by the in-flight margin.
 */
export function moneySend(httpTimeoutMs?: number): QueuedActivityOptions {
  return {
    [ACTIVITY_QUEUE]: 'money',
    startToCloseTimeout:
      httpTimeoutMs === undefined ? SERVICE_ACTIVITY_START_TO_CLOSE_MS : httpTimeoutMs + IN_FLIGHT_MARGIN_MS,
    heartbeatTimeout: MONEY_ACTIVITY_HEARTBEAT_TIMEOUT_MS,
    retry: { maximumAttempts: 1 },
  };
}

/** A read of the service (verify, lookups, requeries): retried with backoff. */
export const READ: QueuedActivityOptions = {
  [ACTIVITY_QUEUE]: 'reads',
  startToCloseTimeout: SERVICE_ACTIVITY_START_TO_CLOSE_MS,
  retry: READ_RETRY,
};

/**
 * A read that gates the next step, run as a local activity inside the workflow task that needs it
 * (docs/performance.md, "Reads as local activities"). Only reads: on replay after a lost worker a
 * local activity runs again, which a send must never do.
 */
export const LOCAL_READ: LocalActivityOptions = {
  startToCloseTimeout: SERVICE_ACTIVITY_START_TO_CLOSE_MS,
  retry: READ_RETRY,
};

/**
 * One round of a background poll (a parked outcome's requery, a remote request's status): a few
 * attempts bounded in time; the flow's own loop carries the longer backoff between rounds.
 */
export const POLL: QueuedActivityOptions = {
  [ACTIVITY_QUEUE]: 'reads',
  startToCloseTimeout: SERVICE_ACTIVITY_START_TO_CLOSE_MS,
  scheduleToCloseTimeout: '2 minutes',
  retry: { ...READ_RETRY, maximumAttempts: 3 },
};

/**
 * Handing a merchant event to its delivery workflow (src/workflows/steps/merchant-events.ts): a
 * local activity that starts a workflow under the event's id, so a rerun is harmless ("already
 * started" is success). Retried for a minute; then the flow logs it and goes on.
 */
export const LOCAL_EMIT: LocalActivityOptions = {
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumInterval: '10s' },
};

/** Work on our own stores (claim check, ledgers, credit store): short, retried until it lands. */
export const LOCAL_STORE: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', maximumInterval: '10s' },
};
