// The one home of activity options: every proxyActivities / proxyLocalActivities in src/workflows
// takes one of these named policies (docs/money-decisions.md, "Send once"). Durations come from the
// timeouts table (src/shared/activity-timeouts.ts), so a policy never disagrees with the HTTP client.
import {
  ActivityCancellationType,
  type ActivityOptions,
  type LocalActivityOptions,
  type RetryPolicy,
} from '@temporalio/common';
import type { ActivityQueue } from '../../shared/task-queues';
import {
  EVENT_HAND_OVER_MS,
  GATING_READ_MS,
  HTTP_TIMEOUT_MARGIN_MS,
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
 * How many attempts start within `windowMs` when each fails at once and the next waits out the
 * backoff (from `initialInterval`, times `backoffCoefficient`, at most `maximumInterval`).
 */
export function attemptsWithin(
  windowMs: number,
  backoff: { initialIntervalMs: number; backoffCoefficient: number; maximumIntervalMs: number },
): number {
  let attempts = 1;
  let startsAt = 0;
  let wait = backoff.initialIntervalMs;
  while (startsAt + wait < windowMs) {
    startsAt += wait;
    attempts += 1;
    wait = Math.min(wait * backoff.backoffCoefficient, backoff.maximumIntervalMs);
  }
  return attempts;
}

/**
 * The hand-over's backoff: 1 s doubling to 10 s, below the SDK's localRetryThreshold (1 minute), so
 * every retry waits in the worker and adds nothing to history.
 */
const EMIT_BACKOFF = { initialIntervalMs: 1_000, backoffCoefficient: 2, maximumIntervalMs: 10_000 };

/**
 * Handing a merchant event to its delivery workflow (src/workflows/steps/merchant-events.ts): a
 * local activity that starts a workflow under the event's id, so a rerun is harmless ("already
 * started" is success). Tried for EVENT_HAND_OVER_MS; then the flow logs it and goes on. The attempts
 * are capped at what fits that minute (9): the SDK (1.24.0) drops a local activity's schedule-to-close
 * that ends during an in-worker backoff, and an uncapped retry then never ends
 * (test/sdk-repro/local-activity-schedule-to-close.test.ts). Capped, a hand-over whose every attempt
 * hangs to its start-to-close still ends within 9 × 10 s plus 55 s of backoff.
 */
export const LOCAL_EMIT: LocalActivityOptions = {
  startToCloseTimeout: '10s',
  scheduleToCloseTimeout: EVENT_HAND_OVER_MS,
  retry: {
    initialInterval: EMIT_BACKOFF.initialIntervalMs,
    backoffCoefficient: EMIT_BACKOFF.backoffCoefficient,
    maximumInterval: EMIT_BACKOFF.maximumIntervalMs,
    maximumAttempts: attemptsWithin(EVENT_HAND_OVER_MS, EMIT_BACKOFF),
  },
};

/** Work on our own stores (claim check, ledgers, credit store): short, retried until it lands. */
export const LOCAL_STORE: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', maximumInterval: '10s' },
};

// --- policies that differ from the ones above, each named for why ---

/**
 * A read retried until its schedule-to-close (minutes of reads: a requery or check timeout), not for
 * a count of attempts, so the backoff may grow further than READ_RETRY's.
 */
export const READ_UNTIL_DEADLINE_RETRY: RetryPolicy = {
  ...READ_RETRY,
  maximumAttempts: Infinity,
  maximumInterval: '30s',
};

/** A read asked until `deadlineMs` (the flow's requery or check timeout): only then is the outcome unknown. */
export function readUntil(deadlineMs: number): QueuedActivityOptions {
  return { ...READ, scheduleToCloseTimeout: deadlineMs, retry: READ_UNTIL_DEADLINE_RETRY };
}

/** The gating read's backoff: READ_UNTIL_DEADLINE_RETRY's, 1 s doubling to 30 s, all below localRetryThreshold. */
const GATING_READ_BACKOFF = { initialIntervalMs: 1_000, backoffCoefficient: 2, maximumIntervalMs: 30_000 };

/**
 * A local read that gates a sale (a meter's listing): asked for GATING_READ_MS before the sale gives
 * up. Capped at the attempts that fit that window (as LOCAL_EMIT, for the same SDK defect: its
 * backoff waits in the worker, where a schedule-to-close that ends is dropped).
 */
export const LOCAL_GATING_READ: LocalActivityOptions = {
  ...LOCAL_READ,
  scheduleToCloseTimeout: GATING_READ_MS,
  retry: {
    ...READ_UNTIL_DEADLINE_RETRY,
    initialInterval: GATING_READ_BACKOFF.initialIntervalMs,
    backoffCoefficient: GATING_READ_BACKOFF.backoffCoefficient,
    maximumInterval: GATING_READ_BACKOFF.maximumIntervalMs,
    maximumAttempts: attemptsWithin(GATING_READ_MS, GATING_READ_BACKOFF),
  },
};

/**
 * A read that walks many pages in one attempt (SMS ids under a name, a campaign's status): its attempt gets minutes.
 */
export const PAGED_READ: QueuedActivityOptions = {
  ...READ,
  startToCloseTimeout: '2 minutes',
  scheduleToCloseTimeout: '5 minutes',
  retry: READ_UNTIL_DEADLINE_RETRY,
};

/**
 * A read that heartbeats a page at a time (a lock's acquire, transaction searches): a lost worker is noticed mid-read.
 */
export const HEARTBEATING_READ: QueuedActivityOptions = { ...READ, heartbeatTimeout: '30s' };

/**
 * A whole reconciliation window (a month of a busy merchant is many pages): the activity heartbeats
 * after each page and lookup; a window is read again with a slower backoff, riding out a few minutes
 * of service trouble.
 */
export const WINDOW_READ: QueuedActivityOptions = {
  ...READ,
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
  retry: {
    ...READ_RETRY,
    initialInterval: '10s',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 6,
  },
};

/**
 * One long poll of a request's status for its whole lifetime (heartbeating, resuming from its
 * heartbeat), retried until `deadlineMs`; a cancel waits for the poll to stop.
 */
export function longPoll(deadlineMs: number, heartbeatTimeoutMs: number): QueuedActivityOptions {
  return onQueue('reads', {
    scheduleToCloseTimeout: deadlineMs,
    heartbeatTimeout: heartbeatTimeoutMs,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { ...READ_RETRY, maximumAttempts: Infinity },
  });
}

/**
 * A money send whose activity heartbeats from its announce on, more often than a send's usual: a
 * lost worker's send is settled (searched for) sooner.
 */
export function moneySendWithHeartbeat(heartbeatTimeoutMs: number): QueuedActivityOptions {
  return { ...moneySend(), heartbeatTimeout: heartbeatTimeoutMs };
}

/**
 * One attempt of a call the flow's own loop retries (a merchant event's delivery): never retried by
 * Temporal; the attempt outlives its HTTP deadline by the margin.
 */
export function loopRetriedAttempt(httpTimeoutMs: number): ActivityOptions {
  return { startToCloseTimeout: httpTimeoutMs + HTTP_TIMEOUT_MARGIN_MS, retry: { maximumAttempts: 1 } };
}

/**
 * Cancelling a token: a read's kind of call (idempotent; any 400 is the service's refusal, never
 * retried), retried longer than a read: for about a quarter of an hour.
 */
export const TOKEN_CANCEL: QueuedActivityOptions = {
  ...READ,
  retry: { ...READ_RETRY, maximumAttempts: 20, initialInterval: '2s', maximumInterval: '60s' },
};

/** One background round of cancelling a token: a few quick attempts; the flow's loop carries the longer pause. */
export const TOKEN_CANCEL_ROUND: QueuedActivityOptions = {
  ...READ,
  retry: { ...READ_RETRY, maximumAttempts: 3, initialInterval: '2s', maximumInterval: '10s' },
};

/**
 * Asking for a debit by an Update keyed by its idempotency key: the Update waits for the debit's
 * answer (which may be requeried for a while), and is safe to retry for longer than a read (the same
 * key is the same debit); `refusals` end it.
 */
export function keyedDebitRequest(refusals: string[]): QueuedActivityOptions {
  return {
    ...READ,
    startToCloseTimeout: '2 minutes',
    retry: {
      initialInterval: '2s',
      maximumInterval: '1 minute',
      maximumAttempts: 20,
      nonRetryableErrorTypes: refusals,
    },
  };
}

/**
 * Handing a credit to the merchant's handler: not a read, asked until it takes the credit, backing
 * off for days (`retryForMs`).
 */
export function merchantHandOver(retryForMs: number): QueuedActivityOptions {
  return {
    ...READ,
    scheduleToCloseTimeout: retryForMs,
    retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10 minutes' },
  };
}

/**
 * An Update of a ledger workflow: it waits for the ledger's workflow task; bounded, so a ledger that
 * cannot be asked refuses (unverified) rather than wait; `refusals` are final.
 */
export function ledgerUpdate(refusals: string[]): ActivityOptions {
  return {
    ...LOCAL_STORE,
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: '2 minutes',
    retry: { ...LOCAL_STORE.retry, nonRetryableErrorTypes: refusals },
  };
}

/**
 * Work on our own stores that may fail harmlessly (a record's TTL ends it anyway): a few attempts, never holding the
 * flow.
 */
export const BEST_EFFORT_STORE: ActivityOptions = {
  ...LOCAL_STORE,
  retry: { ...LOCAL_STORE.retry, maximumAttempts: 3 },
};

/**
 * A read that spends what it redeems (the mandate's OTP check, the OTP validation (D2): its sealed OTP is redeemed
 * once): one attempt, never retried by Temporal; the flow decides what an unclear failure means.
 */
export const READ_ONCE: QueuedActivityOptions = { ...READ, retry: { maximumAttempts: 1 } };
