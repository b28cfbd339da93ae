// `@payflow/temporal/client`: what a backend that only starts flows and follows them needs — the
// starters of every flow a payer or a merchant starts, their input and step errors, and the merchant
// events' verification. No operator tools (ops, reconciliation, schedules, event redelivery) and no
// payments-service client: those are in the package's main entry. Nothing here loads
// @temporalio/worker (test/ship/entry-points.test.ts); its names are pinned by
// test/foundation/public-surface.test.ts.
export * from './connect';
export * from './input-error';
export { followUntilDone } from './progress';
export * from './temporal-retry';
// Only the payment starters' public errors and helpers: the rest of ./payment-common is theirs.
export { DuplicateReferenceError, PaymentStepError, getDirectPaymentState, waitForState } from './payment-common';
// Not sealCardRequest: the check-and-seal the card starters and the Nexus sealing share.
export {
  cardPaymentInputSchema,
  getCardPaymentState,
  resubmitCard,
  startCardPayment,
  startCardPaymentForStep,
  submitOtp,
  submitPin,
  type CardPaymentRequest,
} from './card-payment';
export * from './bank-payment';
export * from './ussd-payment';
export * from './checkout';
export * from './recurring';
// Not sealMandateRequest: the check-and-seal startMandate and the Nexus sealing share.
export {
  cancelMandate,
  debitMandate,
  getMandateState,
  listAllMandates,
  listMandates,
  mandateInputSchema,
  requestMandateCancel,
  resendMandateOtp,
  resolveMandateDebit,
  startMandate,
  submitMandateOtp,
  type DebitOptions,
  type MandateListFilters,
  type MandatePage,
} from './mandate';
export * from './vending';
export * from './pos-remote';
// Not startWithSealedRead: the POS starters' shared step (seal the read, then start).
export {
  PosTerminalSession,
  openPosTerminalSession,
  posTransactionHandle,
  runPosTransaction,
  sealPosCardRead,
  startPosTransaction,
  type PosTerminalSessionOptions,
} from './pos-terminal';
export * from './pos-refund';
export * from './pos-preauth';
export * from './sms';
export * from './virtual-account-credit';
// Events to the merchant's backend: the event types and the Standard Webhooks verification a backend uses.
export * from '../notify';
// The configuration a backend passes to connectStarters (loadConfig reads it from the environment).
export { ConfigError, loadConfig, type AppConfig, type Env } from '../config/config';
