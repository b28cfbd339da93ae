// Business metric names and the reading of a flow's PaymentStatus as an outcome, defined once for the
// workflow interceptor that counts them (src/workflows/steps/metrics-interceptor.ts), the Node-side metrics
// (src/observability/metrics.ts), the Grafana dashboard and the alert rules (deploy/), and the docs.
//
// Labels hold only bounded, non-personal values: flow kinds, statuses, outcomes, currencies, route
// templates, operation names. Never a reference, an amount, a card or account number, a key or a token.
//
// Prometheus names: counters get `_total` (the exporter's countersTotalSuffix), histograms
// `_bucket`/`_sum`/`_count`. Durations are in seconds and their names end in `_seconds` (the
// Prometheus convention; the SDK's own duration histograms too: useSecondsForDurations and
// unitSuffix in src/logging/temporal-logger.ts). Label names: one meaning each, snake_case; an HTTP
// status code is `status_code` (`status` is a flow's PaymentStatus), a call's outcome `result`.

/** Counters and histograms emitted by the project (the SDK's own are `temporal_*`). */
export const METRICS = {
  /** {flow}: a flow started (its PaymentFlow first seen; continue-as-new runs are not new flows). */
  flowsStarted: 'payflow_flows_started',
  /** {flow, outcome}: a flow reached succeeded, failed, outcome_unknown or duplicate (see flowOutcomeOf). */
  flowOutcomes: 'payflow_flow_outcomes',
  /** {flow, status}: every PaymentStatus a flow entered. */
  flowStatuses: 'payflow_flow_status_changes',
  /** {flow, currency}: the amount (lowest unit, PaymentAmount) of flows that succeeded. */
  succeededAmount: 'payflow_flow_succeeded_amount_minor',
  /** {flow, outcome}: send-once's result per value request (answered, refused, found, never-received, unverified). */
  sendOutcomes: 'payflow_send_outcomes',
  /** {flow, stage, result}: requeries by reference: stage lost_answer (send-once) or awaiting_final (a pending record or an unknown outcome, unknown-outcome.ts); result found, absent, error. */
  requeries: 'payflow_requeries',
  /** {flow}: a value request sent again after requeries proved the first never arrived. */
  resendsProvedSafe: 'payflow_resends_proved_safe',
  /** {kind, result}: webhooks at the receiver: verified, rejected (signature), duplicate, invalid (body). */
  webhooks: 'payflow_webhooks',
  /** {server, route, method, status_code}: HTTP requests answered by the receiver and the codec server. */
  httpRequests: 'payflow_http_requests',
  /** {server, route}: their duration in seconds. */
  httpRequestDuration: 'payflow_http_request_duration_seconds',
  /** {operation, result}: calls to the payments service (result: a status class 2xx/4xx/5xx, timeout, connection, aborted). */
  serviceCalls: 'payflow_service_calls',
  /** {operation}: their duration in seconds. */
  serviceCallDuration: 'payflow_service_call_duration_seconds',
} as const;

/** Bucket bounds (seconds) for the project's histograms (the SDK's default buckets are coarse). */
export const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export type FlowOutcome = 'succeeded' | 'failed' | 'outcome_unknown' | 'duplicate';

/** Statuses that end a flow with the money moved (or the credit recorded). */
const SUCCEEDED = new Set(['success', 'approved', 'vended', 'completed', 'credited', 'success_after_cancel']);
/** Statuses that end a flow with no money moved. */
const FAILED = new Set([
  'failed',
  'declined',
  'rejected',
  'refused',
  'not_received',
  'not_sent',
  'not_vended',
  'card_data_unavailable',
  'expired',
  'expired_unobserved',
  'cancelled',
  'lapsed',
  'released',
  'completion_declined',
  'completion_rejected',
  'completion_not_received',
]);
/** Statuses that park a flow: the service could not say whether money moved (the alert worth having). */
const UNKNOWN = new Set(['outcome_unknown', 'create_outcome_unknown', 'poll_error', 'unknown']);

/** Flows that are no payment themselves: the terminal lock, the refund ledger, the webhook inbox, reconciliation runs and marks. */
const NOT_MONEY_FLOWS = new Set([
  'pos-terminal-lock',
  'pos-refund-ledger',
  'unmatched-webhook',
  'reconciliation',
  'reconciliation-mark',
]);

/** SMS flows: sent (all, or some: the service charged for them) or not; a campaign still pending at its end is unknown. */
const SMS_OUTCOMES: Record<string, FlowOutcome> = {
  sent: 'succeeded',
  partially_sent: 'succeeded',
  not_sent: 'failed',
  success: 'succeeded',
  failed: 'failed',
  rejected: 'failed',
  not_found: 'failed',
  still_pending: 'outcome_unknown',
  outcome_unknown: 'outcome_unknown',
};

/** The outcome a flow's status means, or undefined while it is under way. */
export function flowOutcomeOf(flow: string, status: string): FlowOutcome | undefined {
  if (NOT_MONEY_FLOWS.has(flow)) return undefined;
  // A mandate `approved` may be debited now (each debit is its own record); completed/cancelled/expired end it.
  if (flow === 'mandate' && status === 'approved') return undefined;
  if (flow === 'virtual-account-credit' && status === 'duplicate') return 'duplicate';
  if (flow === 'sms-send' || flow === 'sms-campaign')
    return Object.hasOwn(SMS_OUTCOMES, status) ? SMS_OUTCOMES[status] : undefined;
  if (SUCCEEDED.has(status)) return 'succeeded';
  if (FAILED.has(status)) return 'failed';
  if (UNKNOWN.has(status)) return 'outcome_unknown';
  return undefined;
}
