// What the payment suites share: the PaymentStepError a refused payer step rejects with.
import type { PaymentStepError } from '../../src/starters/payment-common';

/** The PaymentStepError `p` rejects with; fails the test if `p` fulfils. */
export const stepError = (p: Promise<unknown>): Promise<PaymentStepError> =>
  p.then(
    () => {
      throw new Error('expected a PaymentStepError');
    },
    (e: unknown) => e as PaymentStepError,
  );
