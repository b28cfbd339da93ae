// Business metric names and the reading of a flow's PaymentStatus as an outcome, defined once for the
// workflow interceptor that counts them (src/workflows/steps/metrics-interceptor.ts), the Node-side metrics
// (src/telemetry/metrics.ts), the Grafana dashboard and the alert rules (deploy/), and the docs.
//
// Labels hold only bounded, non-personal values: flow kinds, statuses, outcomes, currencies, route
// templates, operation names. Never a reference, an amount, a card or account number, a key or a token.
//
// Prometheus names: counters get `_total` (the exporter's countersTotalSuffix), histograms
// `_bucket`/`_sum`/`_count`. Durations are in seconds and their names end in `_seconds` (the
// Prometheus convention; the SDK's own duration histograms too: useSecondsForDurations and
// unitSuffix in src/logging/temporal-logger.ts). Label names: one meaning each, snake_case; an HTTP
// status code is `status_code` (`status` is a flow's PaymentStatus), a call's outcome `result`.
import {
  finalStatusMeaning,
  SMS_ONLY_FINAL_STATUSES,
  type FinalStatusMeaning,
  type FinalStatusWord,
} from './final-statuses';

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
  /** {flow, type}: a merchant event a flow could not hand to its delivery within its minute (the flow went on; the event was not sent). */
  eventHandoversFailed: 'payflow_merchant_event_handovers_failed',
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

export type FlowOutcome = FinalStatusMeaning | 'duplicate';

/** Flows that are no payment themselves: the terminal lock, the refund ledger, the webhook inbox, reconciliation runs and marks. */
const NOT_MONEY_FLOWS = new Set([
  'pos-terminal-lock',
  'pos-refund-ledger',
  'unmatched-webhook',
  'reconciliation',
  'reconciliation-mark',
]);

/** The outcome a flow's status means, or undefined while it is under way. */
export function flowOutcomeOf(flow: string, status: string): FlowOutcome | undefined {
  if (NOT_MONEY_FLOWS.has(flow)) return undefined;
  // A mandate `approved` may be debited now (each debit is its own record); completed/cancelled/expired end it.
  if (flow === 'mandate' && status === 'approved') return undefined;
  if (flow === 'virtual-account-credit' && status === 'duplicate') return 'duplicate';
  // What each final status means is the vocabulary's (src/shared/final-statuses.ts); an SMS-only word ends no other flow.
  const smsFlow = flow === 'sms-send' || flow === 'sms-campaign';
  if (!smsFlow && SMS_ONLY_FINAL_STATUSES.includes(status as FinalStatusWord)) return undefined;
  return finalStatusMeaning(status);
}
