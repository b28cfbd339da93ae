// Typed starters of every flow, for backends. One line per flow.
export * from './connect';
export * from './input-error';
export * from './progress';
export * from './pos-remote';
export * from './pos-terminal';
export * from './pos-refund';
export * from './pos-preauth';
export * from './vending';
export * from './mandate';
// Only the payment starters' public errors and helpers: the rest of ./payment-common is theirs.
export { DuplicateReferenceError, PaymentStepError, getDirectPaymentState, waitForState } from './payment-common';
export * from './card-payment';
export * from './bank-payment';
export * from './ussd-payment';
export * from './checkout';
export * from './recurring';
export * from './virtual-account-credit';
export * from './virtual-account-error-log-sweep';
export * from './ops';
export * from './scheduled-money';
export * from './sms';
export * from './temporal-retry';
export * from './reconciliation';
export * from './merchant-event-delivery';
// Events to the merchant's backend: the event types and the Standard Webhooks verification a backend uses.
export * from '../notify';
// The payments-service client and every error class it throws (one copy, so `instanceof` works in a backend).
export { PaymentsClient, type PaymentsClientOptions, type ApiResult, type CallOptions } from '../api/client';
export * from '../api/errors';
// The configuration a backend passes to connectStarters (loadConfig reads it from the environment).
export { ConfigError, loadConfig, type AppConfig, type Env } from '../config/config';
