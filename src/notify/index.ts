// Events to the merchant's backend (docs/events.md): the event shape and its types, the id rule,
// and the signing/verification helpers a merchant's backend uses.
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
export { deliverOnce, type DeliveryAttempt, type DeliveryOptions } from './deliver';
export {
  addressRefusal,
  checkTarget,
  outboundPolicyOf,
  RefusedTarget,
  urlRefusal,
  type OutboundPolicy,
} from './target-guard';
