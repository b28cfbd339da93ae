// What the mandate workflow suites share: the activities their fake service implements, a day in
// milliseconds, a mandate's workflow input, and what the fake services' D3 and D4 do to a mandate.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { createMandateActivities, MandateDebitRequest } from '../../src/activities/mandate';
import type { MandateInput } from '../../src/shared/mandate';
import type { TransactionLookup } from '../../src/shared/payment-common';

/** The mandate activities plus the transaction lookup (D5) the workflow reads through. */
export type MandateTestActivities = ReturnType<typeof createMandateActivities> & {
  lookupTransaction(ref: string): Promise<TransactionLookup>;
};

export const DAY = 24 * 3600 * 1000;

/** YYYY-MM-DD of an epoch ms (UTC). */
export const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * A VARIABLE mandate of 1 200 000 kobo starting on `today` (the test server's time), with the BVN as
 * the given claim-check handle; `over` on top.
 */
export const mandateInput = (today: number, bvnHandle: string, over: Partial<MandateInput> = {}): MandateInput => ({
  mandateRef: `M${randomUUID().slice(0, 8)}`,
  debitType: 'variable',
  amount: 1_200_000,
  accountNumber: '0123456789',
  bankCode: '058',
  description: 'Gym',
  // Far-off end: awaiting a result inside a test may move the clock ten years.
  startDate: day(today),
  endDate: day(today + 80 * 365 * DAY),
  customerEmail: 'c@example.com',
  customer: { bvnHandle, firstName: 'Ada', lastName: 'Obi', address: '1 Way', phone: '08012345678' },
  ...over,
});

/** A fake service's mandate, as D3 (debit) and D4 (cancel) change it. */
export interface FakeMandate {
  balance: number;
  total: number;
  status: string;
}

/**
 * D3 on a fake service's mandate: refused (BadRequest, the service's words) when the balance is
 * short, else applied: balance down, total up, the amount kept in `applied` by reference.
 */
export function applyFakeDebit(m: FakeMandate, req: MandateDebitRequest, applied: Map<string, number>): void {
  if (req.amount > m.balance)
    throw ApplicationFailure.create({
      type: 'BadRequest',
      message: `debit ${req.reference}: Mandate balance is lesser than debit amount`,
      nonRetryable: true,
    });
  applied.set(req.reference, req.amount);
  m.balance -= req.amount;
  m.total += req.amount;
}

/** D4 on a fake service's mandate: refused with `refusal` when given, else cancelled (a second time: already). */
export function cancelFakeMandate(m: FakeMandate, refusal: string | undefined) {
  if (refusal) return { cancelled: false, alreadyCancelled: false, reason: refusal };
  if (m.status === 'cancelled') return { cancelled: true, alreadyCancelled: true };
  m.status = 'cancelled';
  return { cancelled: true, alreadyCancelled: false };
}
