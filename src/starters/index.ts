// Typed starters of every flow, for backends: the client entry (./client: the flows' starters, the
// events, the config) and the operator tools and the payments-service client besides. One line per module.
export * from './client';
export * from './ops';
export * from './scheduled-money';
export * from './reconciliation';
export * from './merchant-event-delivery';
export * from './virtual-account-error-log-sweep';
// The payments-service client and every error class it throws (one copy, so `instanceof` works in a backend).
export { PaymentsClient, type PaymentsClientOptions, type ApiResult, type CallOptions } from '../api/client';
export * from '../api/errors';
