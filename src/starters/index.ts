// Typed starters of every flow, for backends: the client entry (./client: the flows' starters, the
// events, the config) and the operator tools and the payments-service client besides. One line per
// module, or the module's public names where it also holds the starters' own helpers. The list is
// pinned by test/foundation/public-surface.test.ts.
export * from './client';
export * from './ops';
export * from './scheduled-money';
// Not finishedProgress: the CLI's and reconcile()'s shared step, not a backend's.
export {
  CSV_COLUMNS,
  RECONCILIATION_SCHEDULE_DEFAULTS,
  ensureReconciliationSchedule,
  reconcile,
  reconciliationCsv,
  reconciliationHandle,
  renderReconciliationProgress,
  renderReconciliationReport,
  startReconciliation,
  validateReconcileInput,
  type ReconciliationScheduleOptions,
} from './reconciliation';
export * from './merchant-event-delivery';
export * from './virtual-account-error-log-sweep';
// The payments-service client and every error class it throws (one copy, so `instanceof` works in a backend).
export { PaymentsClient, type PaymentsClientOptions, type ApiResult, type CallOptions } from '../api/client';
// Not errorClassForStatus, flagsForStatus, flagsForTransport (OperationTraits): how the client picks
// a class and its flags, the client's own.
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  DependencyFailedError,
  NotFoundError,
  PaymentsApiError,
  PermissionDeniedError,
  RateLimitError,
  RequestAbortedError,
  RequestValidationError,
  ResponseValidationError,
  ServerError,
  TimeoutError,
  UnprocessableEntityError,
  WebhookSignatureVerificationError,
  isPaymentsApiError,
  type PaymentsApiErrorInit,
  type ValidationIssue,
} from '../api/errors';
