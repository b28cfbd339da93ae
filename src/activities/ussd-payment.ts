// Activities of the USSD payment flow: the initiation, which issues the code the payer dials.
//
// Money-moving calls are made once, their failures typed for the workflow (moneyCall, ./calls.ts).
import { ApplicationFailure } from '@temporalio/activity';
import type { DirectInitiateUssdRequest } from '../api';
import type { ActivityDeps } from './deps';
import { bindActivities } from './bind';
import type { UssdPaymentInput } from '../shared/ussd-payment';
import { heartbeatWhile } from './heartbeat';
import { directPayment, moneyCall } from './calls';

/** Initiates the USSD payment (B5). Creates the transaction: one attempt, settled by verify when the answer is lost. */
function initiateUssd(
  { api, logger }: ActivityDeps,
  input: UssdPaymentInput,
): Promise<{ ussdCode: string; expiresAt?: string }> {
  return moneyCall('initiate USSD', async () => {
    const ussd = { bank_code: input.bankCode as DirectInitiateUssdRequest['ussd']['bank_code'] };
    const req: DirectInitiateUssdRequest = { ...directPayment(input), ussd };
    const { data } = await heartbeatWhile(api.direct.initiateUssd(req));
    const code = data.ussd_details?.ussd_reference;
    if (!code)
      throw ApplicationFailure.nonRetryable(
        'the USSD initiation answered without ussd_details.ussd_reference',
        'OutcomeUnknown',
      );
    logger.info({ transactionRef: input.transactionRef }, 'USSD code issued');
    return { ussdCode: code, expiresAt: data.ussd_details?.expiresAt ?? undefined };
  });
}

export function createUssdPaymentActivities(deps: ActivityDeps) {
  return bindActivities(deps, { initiateUssd });
}

export type UssdPaymentActivities = ReturnType<typeof createUssdPaymentActivities>;
