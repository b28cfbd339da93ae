// Search attributes operators use in the Web UI to find a payment.
// Deliberately small and free of personal data: no names, e-mails, PANs or account numbers.
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

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
/**
 * The payments service's own reference for a flow, where it differs from ours: a POS remote
 * request's `request_ref` (the create's answer), under which the transaction list shows it. Reconciliation finds the flow by it.
 */
export const PaymentServiceReference = defineSearchAttributeKey('PaymentServiceReference', SearchAttributeType.KEYWORD);
/**
 * Reconciliation (docs/flows-reconciliation.md). On a mark (PaymentFlow reconciliation-mark, with
 * the reference): mismatch_money_without_success, mismatch_success_without_money,
 * mismatch_amount, mismatch_currency, late_payment, or resolved. On a run (PaymentFlow
 * reconciliation): running, clean, mismatches, incomplete.
 */
export const ReconciliationStatus = defineSearchAttributeKey('ReconciliationStatus', SearchAttributeType.KEYWORD);

/** name → CLI type, for `temporal server start-dev --search-attribute` and operator registration. */
export const SEARCH_ATTRIBUTE_REGISTRATION: Record<string, 'Keyword' | 'Int'> = {
  PaymentFlow: 'Keyword',
  PaymentReference: 'Keyword',
  PaymentStatus: 'Keyword',
  PaymentAmount: 'Int',
  PaymentCurrency: 'Keyword',
  ReconciliationStatus: 'Keyword',
  PaymentServiceReference: 'Keyword',
};

export interface PaymentSearchFields {
  flow?: string;
  reference?: string;
  status?: string;
  amount?: number;
  currency?: string;
  /** PaymentServiceReference: the service's reference (a POS remote request's request_ref). */
  serviceReference?: string;
}

/** Typed pairs for upsertSearchAttributes / typedSearchAttributes; undefined fields are skipped. */
export function paymentSearchAttributes(f: PaymentSearchFields): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [];
  if (f.flow !== undefined) pairs.push({ key: PaymentFlow, value: f.flow });
  if (f.reference !== undefined) pairs.push({ key: PaymentReference, value: f.reference });
  if (f.status !== undefined) pairs.push({ key: PaymentStatus, value: f.status });
  if (f.amount !== undefined && Number.isSafeInteger(f.amount)) pairs.push({ key: PaymentAmount, value: f.amount });
  if (f.currency !== undefined) pairs.push({ key: PaymentCurrency, value: f.currency });
  if (f.serviceReference !== undefined) pairs.push({ key: PaymentServiceReference, value: f.serviceReference });
  return pairs;
}
