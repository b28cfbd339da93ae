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
