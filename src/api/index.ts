// The payments-service client's module: the client, its errors, the operations table and each
// operation's request and answer schemas. No Temporal imports anywhere under src/api. Not a package
// entry: a backend gets PaymentsClient and the errors from the main entry (src/starters/index.ts).
// The schema-building pieces (./schemas/common: requiredOr, paging, kobo...) are the schemas' own:
// import them from there.
export { PaymentsClient, zodIssuesToValidationIssues, type CallObserver, type CallObservation } from './client';
export type { PaymentsClientOptions, ApiResult, CallOptions } from './client';
export { DEFAULT_PATHS, resolvePaths, fillPath } from './paths';
export type { ApiPaths } from './paths';
export { OPERATIONS, OPERATION_NAMES, MONEY_MOVING_OPERATIONS } from './operations';
export type { OperationName, OperationRequest, OperationData, OperationDef, HttpCall, HttpMethod } from './operations';
export * from './errors';
export { classifyPosResponseCode } from './pos-codes';
export { DOCUMENTED_NOT_FOUND, isDocumentedNotFound, type ReferenceLookup } from './not-found';
export type { PosOutcome, PosResponseClassification } from './pos-codes';
export * from './schemas/checkout';
export * from './schemas/direct';
export * from './schemas/virtual-accounts';
export * from './schemas/mandates';
export * from './schemas/pos';
export * from './schemas/sms';
export * from './schemas/vending';
