// Verify, the verdict on one reference: the read every payment flow (and the card activities right
// after a Success answer) asks. Its own module, so card-payment and payment-common need not import
// each other.
import type { PaymentsClient } from '../api';
import type { TransactionLookup, VerifiedStatus } from '../shared/payment-common';
import { read } from './calls';

/** Verify one transaction by reference: its status, or found=false only for the documented not-found (src/api/not-found.ts). */
export async function lookupTransaction(
  { api }: { api: PaymentsClient },
  transactionRef: string,
): Promise<TransactionLookup> {
  // Only the documented not-found is absence; any other 400 (or 404) is an error, never "not received".
  const absent = {
    notFound: 'verifyTransaction' as const,
    answer: { found: false as const },
  };
  return read(
    'verify transaction',
    async (): Promise<TransactionLookup> => {
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
    },
    absent,
  );
}
