// What the mandate workflow suites share: the activities their fake service implements and a day
// in milliseconds.
import type { createMandateActivities } from '../../src/activities/mandate';
import type { TransactionLookup } from '../../src/shared/payment-common';

/** The mandate activities plus the transaction lookup (D5) the workflow reads through. */
export type MandateTestActivities = ReturnType<typeof createMandateActivities> & {
  lookupTransaction(ref: string): Promise<TransactionLookup>;
};

export const DAY = 24 * 3600 * 1000;
