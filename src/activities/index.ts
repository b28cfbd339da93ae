// The activities factory: one place that turns dependencies (the API client, logger,
// config) into the activity functions the worker registers.
import { createPosActivities } from './pos';
import { createPosRefundActivities } from './pos-refund';
import { createVendingActivities } from './vending';
import { createMandateActivities } from './mandates';
import { createPaymentActivities } from './payments';
import { createVirtualAccountActivities } from './virtual-accounts';
import { createScheduledMoneyActivities } from './scheduled-money';
import { createReconciliationActivities } from './reconciliation';
import { createSmsActivities } from './sms';
import type { ActivityDeps } from './deps';

export type { ActivityDeps };

export function createActivities(deps: ActivityDeps) {
  return {
    ...createPosActivities(deps),
    ...createPosRefundActivities(deps),
    ...createVendingActivities(deps),
    ...createMandateActivities(deps),
    ...createPaymentActivities(deps),
    ...createVirtualAccountActivities(deps),
    ...createScheduledMoneyActivities(deps),
    ...createReconciliationActivities(deps),
    ...createSmsActivities(deps),
  };
}

export type PaymentActivities = ReturnType<typeof createActivities>;
