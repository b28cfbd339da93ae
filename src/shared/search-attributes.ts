// Search attributes operators use in the Web UI to find a payment.
// Deliberately small and free of personal data: no names, e-mails, PANs or account numbers.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Kind of flow: card, bank, ussd, checkout, recurring, mandate, pos-remote, pos-terminal, vend. */
export const PaymentFlow = defineSearchAttributeKey('PaymentFlow', SearchAttributeType.KEYWORD);
/** The business reference (transaction_ref, merchant_ref, mandate reference, vend reference). */
export const PaymentReference = defineSearchAttributeKey('PaymentReference', SearchAttributeType.KEYWORD);
/** Current state of the flow, e.g. awaiting_otp, success, failed, expired. */
export const PaymentStatus = defineSearchAttributeKey('PaymentStatus', SearchAttributeType.KEYWORD);
/** Amount in the lowest currency unit (kobo / cent). */
export const PaymentAmount = defineSearchAttributeKey('PaymentAmount', SearchAttributeType.INT);
/** ISO currency code, NGN or USD. */
export const PaymentCurrency = defineSearchAttributeKey('PaymentCurrency', SearchAttributeType.KEYWORD);

/** name → CLI type, for `temporal server start-dev --search-attribute` and operator registration. */
export const SEARCH_ATTRIBUTE_REGISTRATION: Record<string, 'Keyword' | 'Int'> = {
  PaymentFlow: 'Keyword',
  PaymentReference: 'Keyword',
  PaymentStatus: 'Keyword',
  PaymentAmount: 'Int',
  PaymentCurrency: 'Keyword',
};
