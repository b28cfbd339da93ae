// The activities factory: one place that turns dependencies (the API client, logger,
// config) into the activity functions the worker registers.
import type { Logger } from 'pino';
import type { PaymentsClient } from '../api';
import type { AppConfig } from '../config/config';
import type { ClaimCheckStore } from '../claim-check/store';
import { createPosActivities } from './pos';
import { createVendingActivities } from './vending';
import { createMandateActivities } from './mandates';
import { createPaymentActivities } from './payments';
import { createVirtualAccountActivities } from './virtual-accounts';
import { createSmsActivities } from './sms';
import type { VirtualAccountCreditStore } from '../virtual-accounts/credit-store';

export interface ActivityDeps {
  api: PaymentsClient;
  logger: Logger;
  config: AppConfig;
  /** Where the starters sealed card data, PINs, OTPs and BVNs; activities redeem the handles. */
  claimCheck: ClaimCheckStore;
  /**
   * The durable record of credited virtual-account transactions (E-2 duplicate check). Optional so
   * workers that never run the credit workflow need not open it; the credit activities fail
   * non-retryably without it.
   */
  vaCredits?: VirtualAccountCreditStore;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createPosActivities(deps),
    ...createVendingActivities(deps),
    ...createMandateActivities(deps),
    ...createPaymentActivities(deps),
    ...createVirtualAccountActivities(deps),
    ...createSmsActivities(deps),
  };
}

export type PaymentActivities = ReturnType<typeof createActivities>;
