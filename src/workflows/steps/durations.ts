// Durations more than one flow uses, each named for why it has its value (a flow's own sit at the top
// of its file; activity timeouts are in src/shared/activity-timeouts.ts and the activity policies in
// ./activity-options.ts). Each is the default of an input option the caller may change.

/** The pause before a request that provably never left (a refused connection) goes again: long enough for a blip to pass. */
export const UNSENT_RESEND_BACKOFF = '2s';

/**
 * The wait after a lost answer before its request is asked for by reference: an in-flight request
 * can land, and the service may not show a write at once.
 */
export const SETTLE_BEFORE_REQUERY = '3s';

/** How long a lost answer's request is asked for (reads retried) while the service cannot answer, before the outcome is unknown. */
export const REQUERY_WHILE_UNANSWERED = '10 minutes';

/**
 * The deadline of a terminal's or a vend's send (F3, H3): the terminal or the utility answers within
 * the call, slower than the service's own calls; the attempt outlives it by IN_FLIGHT_MARGIN_MS.
 */
export const DEVICE_SEND_HTTP_TIMEOUT_MS = 45_000;
