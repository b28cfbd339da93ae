// What every activity factory receives: the API client, logger and config, and the stores and
// clients some activities need. Its own module, so the factories and the index never import each other.
import type { Logger } from 'pino';
import type { Client } from '@temporalio/client';
import type { PaymentsClient } from '../api';
import type { AppConfig } from '../config/config';
import type { ClaimCheckStore } from '../claim-check/store';
import type { VirtualAccountCreditStore } from '../virtual-accounts/credit-store';
import type { CreditHandler } from '../virtual-accounts/credit-handler';

export interface ActivityDeps {
  api: PaymentsClient;
  logger: Logger;
  /** The worker's own sections (src/config/processes.ts); a full AppConfig fits too. */
  config: Omit<AppConfig, 'sandbox' | 'webhooks' | 'codec' | 'returnLinks'>;
  /** Where the starters sealed card data, PINs, OTPs and BVNs; activities redeem the handles. */
  claimCheck: ClaimCheckStore;
  /**
   * The durable record of credited virtual-account transactions (duplicate check of credit notifications). Optional so
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

/** What most flows' activities are bound over: the API client, and the logger named for the flow. */
export interface FlowDeps {
  api: PaymentsClient;
  log: Logger;
}

export const flowDeps = ({ api, logger }: Pick<ActivityDeps, 'api' | 'logger'>, flow: string): FlowDeps => ({
  api,
  log: logger.child({ flow }),
});
