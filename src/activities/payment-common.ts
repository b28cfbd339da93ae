// What every payment flow (card, bank, USSD, checkout, recurring, and the mandate's debits) asks
// the service: the verdict on a reference (verify). A read: retried by its retry policy. Its
// answer settles an unknown outcome before anything is sent again.
import type { ActivityDeps } from './deps';
import { bindActivities } from './bind';
import { lookupTransaction } from './transaction-lookup';
import type { CardPaymentActivities } from './card-payment';
import type { BankPaymentActivities } from './bank-payment';
import type { UssdPaymentActivities } from './ussd-payment';
import type { CheckoutActivities } from './checkout';
import type { RecurringActivities } from './recurring';

export function createPaymentCommonActivities(deps: ActivityDeps) {
  return bindActivities(deps, { lookupTransaction });
}

export type PaymentCommonActivities = ReturnType<typeof createPaymentCommonActivities>;

/** Every payment flow's activities together: what the shared payment steps (src/workflows/steps/payment-steps.ts) proxy. */
export type PaymentFlowActivities = PaymentCommonActivities &
  CardPaymentActivities &
  BankPaymentActivities &
  UssdPaymentActivities &
  CheckoutActivities &
  RecurringActivities;
