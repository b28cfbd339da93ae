// What every payment flow (card, bank, USSD, checkout, recurring, and the mandate's debits) asks
// the service: the verdict on a reference (verify). A read: retried by its retry policy. Its
// answer settles an unknown outcome before anything is sent again.
import { isDocumentedNotFound } from '../api';
import type { ActivityDeps } from './deps';
import type { TransactionLookup, VerifiedStatus } from '../shared/payment-common';
import { toActivityFailure } from './failures';
import type { CardPaymentActivities } from './card-payment';
import type { BankPaymentActivities } from './bank-payment';
import type { UssdPaymentActivities } from './ussd-payment';
import type { CheckoutActivities } from './checkout';
import type { RecurringActivities } from './recurring';

export function createPaymentCommonActivities({ api }: ActivityDeps) {
  return {
    /** Verify one transaction by reference: its status, or found=false only for the documented not-found (src/api/not-found.ts). */
    async lookupTransaction(transactionRef: string): Promise<TransactionLookup> {
      try {
        const { data } = await api.transactions.verify({ transaction_ref: transactionRef });
        const d = data as typeof data & { failure_reason?: unknown };
        return {
          found: true,
          status: data.transaction_status as VerifiedStatus,
          amount: data.transaction_amount ?? undefined,
          merchantAmount: data.merchant_amount ?? undefined,
          currency: data.transaction_currency_id ?? undefined,
          transactionType: data.transaction_type ?? undefined,
          reason: typeof d.failure_reason === 'string' ? d.failure_reason : undefined,
        };
      } catch (err) {
        // Only the documented not-found is absence; any other 400 (or 404) is an error, never "not received".
        if (isDocumentedNotFound('verifyTransaction', err)) return { found: false };
        throw toActivityFailure(err, { moneyMoving: false, what: 'verify transaction' });
      }
    },
  };
}

export type PaymentCommonActivities = ReturnType<typeof createPaymentCommonActivities>;

/** Every payment flow's activities together: what the shared payment steps (src/workflows/steps/payment-steps.ts) proxy. */
export type PaymentFlowActivities = PaymentCommonActivities &
  CardPaymentActivities &
  BankPaymentActivities &
  UssdPaymentActivities &
  CheckoutActivities &
  RecurringActivities;
