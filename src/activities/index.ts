// The activities factory: one place that turns dependencies (the API client, logger,
// config) into the activity functions the worker registers.
import { createPosRemoteActivities } from './pos-remote';
import { createPosTerminalActivities } from './pos-terminal';
import { createPosRefundActivities } from './pos-refund';
import { createVendingActivities } from './vending';
import { createMandateActivities } from './mandate';
import { createPaymentCommonActivities } from './payment-common';
import { createCardPaymentActivities } from './card-payment';
import { createBankPaymentActivities } from './bank-payment';
import { createUssdPaymentActivities } from './ussd-payment';
import { createCheckoutActivities } from './checkout';
import { createRecurringActivities } from './recurring';
import { createVirtualAccountCreditActivities } from './virtual-account-credit';
import { createVirtualAccountErrorLogSweepActivities } from './virtual-account-error-log-sweep';
import { createScheduledMoneyActivities } from './scheduled-money';
import { createReconciliationActivities } from './reconciliation';
import { createSmsActivities } from './sms';
import { createMerchantEventDeliveryActivities } from './merchant-event-delivery';
import type { ActivityDeps } from './deps';

export type { ActivityDeps };

export function createActivities(deps: ActivityDeps) {
  return {
    ...createPosRemoteActivities(deps),
    ...createPosTerminalActivities(deps),
    ...createPosRefundActivities(deps),
    ...createVendingActivities(deps),
    ...createMandateActivities(deps),
    ...createPaymentCommonActivities(deps),
    ...createCardPaymentActivities(deps),
    ...createBankPaymentActivities(deps),
    ...createUssdPaymentActivities(deps),
    ...createCheckoutActivities(deps),
    ...createRecurringActivities(deps),
    ...createVirtualAccountCreditActivities(deps),
    ...createVirtualAccountErrorLogSweepActivities(deps),
    ...createScheduledMoneyActivities(deps),
    ...createReconciliationActivities(deps),
    ...createSmsActivities(deps),
    ...createMerchantEventDeliveryActivities(deps),
  };
}

/** Every activity the worker registers. */
export type WorkerActivities = ReturnType<typeof createActivities>;
