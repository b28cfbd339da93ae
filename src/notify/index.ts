// Events to the merchant's backend (docs/events.md): the event shape and its types, the id rule,
// and the signing/verification helpers a merchant's backend uses. Not the delivery (./deliver) nor
// its outbound guard (./target-guard): the worker's own, imported from their files.
export {
  MERCHANT_EVENT_DATA_VERSION,
  MERCHANT_EVENT_TYPES,
  merchantEventDataSchema,
  merchantEventId,
  merchantEventSchema,
  merchantEventTargetSchema,
  type MerchantEvent,
  type MerchantEventData,
  type MerchantEventTarget,
  type MerchantEventType,
} from '../shared/merchant-event';
export {
  NOTIFY_SECRET_PATTERN,
  notifySecretEntries,
  notifySecretIssue,
  newNotifySecret,
  signEvent,
  verifyEvent,
  WebhookVerificationError,
  type SignedEvent,
} from './signing';
