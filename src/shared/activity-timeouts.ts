// Activity timeouts and the HTTP client's timeout must agree: an activity attempt may end only
// after its HTTP call has surely ended, or a requery (and a resend it allows) could run while the
// first request is still in flight. Config (src/config/config.ts) refuses a PAYMENTS_TIMEOUT_MS
// that breaks this; workflows take their start-to-close values from here.

/** Start-to-close of an activity that calls the service (money-moving or read). */
export const SERVICE_ACTIVITY_START_TO_CLOSE_MS = 60_000;

/** What the start-to-close must exceed the HTTP client's timeout by (scheduling, retries of a connect, clock skew). */
export const HTTP_TIMEOUT_MARGIN_MS = 10_000;

/** The largest PAYMENTS_TIMEOUT_MS that keeps the rule. */
export const MAX_HTTP_TIMEOUT_MS = SERVICE_ACTIVITY_START_TO_CLOSE_MS - HTTP_TIMEOUT_MARGIN_MS;

/**
 * Heartbeat timeout of a money-moving activity. The activity heartbeats while its HTTP call is
 * open (src/activities/heartbeat.ts), so a killed worker's attempt fails within this, and the
 * workflow's requery starts in seconds instead of after the start-to-close.
 */
export const MONEY_ACTIVITY_HEARTBEAT_TIMEOUT_MS = 10_000;

/**
 * How long a stopping worker lets its in-flight activities finish (WorkerOptions.shutdownGraceTime):
 * longer than the longest money-moving activity (a service call's start-to-close, 60 s; POS and
 * vend sends at their default 45 s + 15 s margin), so a deploy or scale-in never cuts a money call
 * off mid-flight. Process managers must wait longer still before SIGKILL: WORKER_STOP_GRACE_S.
 */
export const WORKER_SHUTDOWN_GRACE_MS = SERVICE_ACTIVITY_START_TO_CLOSE_MS + 15_000;

/** What docker-compose `stop_grace_period` and Kubernetes `terminationGracePeriodSeconds` give the worker: the grace plus time to close connections. */
export const WORKER_STOP_GRACE_S = WORKER_SHUTDOWN_GRACE_MS / 1000 + 15;

/**
 * What a send's start-to-close exceeds its own HTTP deadline by, when the call has one of its own
 * (POS F3, vend H3, SMS): the attempt never times out while its request is still open.
 */
export const IN_FLIGHT_MARGIN_MS = 15_000;

/**
 * How long a flow tries to hand a merchant event to its delivery (LOCAL_EMIT) before it logs that the
 * event was not handed over and goes on: emission is best effort, a flow's outcome never waits on it.
 */
export const EVENT_HAND_OVER_MS = 60_000;

/**
 * How long a vend asks for the meter's listing (LOCAL_GATING_READ) before the sale gives up: a
 * listing the service cannot give in minutes is a sale not to attempt.
 */
export const GATING_READ_MS = 5 * 60_000;
