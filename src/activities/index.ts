// The activities factory: one place that turns dependencies (the API client, logger,
// config) into the activity functions the worker registers.
import type { Logger } from 'pino';
import type { Client } from '@temporalio/client';
import type { PaymentsClient } from '../api';
import type { AppConfig } from '../config/config';
import type { ClaimCheckStore } from '../claim-check/store';
import { createPosActivities } from './pos';
import { createPosRefundActivities } from './pos-refund';
import { createVendingActivities } from './vending';
import { createMandateActivities } from './mandates';
import { createPaymentActivities } from './payments';
import { createVirtualAccountActivities } from './virtual-accounts';
import { createScheduledMoneyActivities } from './scheduled-money';
import { createReconciliationActivities } from './reconciliation';
import { createSmsActivities } from './sms';
import type { VirtualAccountCreditStore } from '../virtual-accounts/credit-store';
import type { CreditHandler } from '../virtual-accounts/credit-handler';

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
  /** The merchant's credit handler as a function; without it, VA_CREDIT_CALLBACK_URL (if set) is called over HTTP. */
  creditHandler?: CreditHandler;
  /**
   * A Temporal client (the worker's namespace), for activities that ask another workflow (a
   * scheduled mandate debit's Update) or read our own flows through visibility (reconciliation).
   * Optional: without it those activities fail non-retryably.
   */
  temporal?: Client;
}

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
