// Activities of the USSD payment flow: B5, which issues the code the payer dials.
//
// Money-moving calls are made once, their failures typed for the workflow (moneyCall, ./calls.ts).
import { ApplicationFailure } from '@temporalio/activity';
import type { DirectInitiateUssdRequest } from '../api';
import type { ActivityDeps } from './deps';
import type { UssdPaymentInput } from '../shared/ussd-payment';
import { heartbeatWhile } from './heartbeat';
import { moneyCall } from './calls';

export function createUssdPaymentActivities({ api, logger }: ActivityDeps) {
  return {
    /** B5. Creates the transaction: one attempt, settled by verify when the answer is lost. */
    initiateUssd: (input: UssdPaymentInput): Promise<{ ussdCode: string; expiresAt?: string }> =>
      moneyCall('initiate USSD', async () => {
        const req: DirectInitiateUssdRequest = {
          transaction_reference: input.transactionRef,
          amount: input.amount,
          currency: input.currency,
          pass_charge: input.passCharge,
          ussd: { bank_code: input.bankCode as DirectInitiateUssdRequest['ussd']['bank_code'] },
          customer: { name: input.customer.name, email: input.customer.email },
        };
        const { data } = await heartbeatWhile(api.direct.initiateUssd(req));
        const code = data.ussd_details?.ussd_reference;
        if (!code)
          throw ApplicationFailure.nonRetryable('B5 answered without ussd_details.ussd_reference', 'OutcomeUnknown');
        logger.info({ transactionRef: input.transactionRef }, 'USSD code issued');
        return { ussdCode: code, expiresAt: data.ussd_details?.expiresAt ?? undefined };
      }),
  };
}

export type UssdPaymentActivities = ReturnType<typeof createUssdPaymentActivities>;
