// Activities of the USSD payment flow: B5, which issues the code the payer dials.
//
// Money-moving calls are proxied with one attempt and every failure is typed (toActivityFailure):
// a refusal (BadRequest, InvalidRequest, Unauthorized, NotFound) proves nothing happened; anything
// else is an unknown outcome that the workflow settles by verifying the reference first
// (lookupTransaction, ./payment-common.ts).
import { ApplicationFailure } from '@temporalio/activity';
import type { DirectInitiateUssdRequest } from '../api';
import type { ActivityDeps } from './deps';
import type { UssdPaymentInput } from '../shared/ussd-payment';
import { heartbeatWhile } from './heartbeat';
import { toActivityFailure } from './failures';

export function createUssdPaymentActivities({ api, logger }: ActivityDeps) {
  return {
    /** B5. Creates the transaction: one attempt, settled by verify when the answer is lost. */
    async initiateUssd(input: UssdPaymentInput): Promise<{ ussdCode: string; expiresAt?: string }> {
      const req: DirectInitiateUssdRequest = {
        transaction_reference: input.transactionRef,
        amount: input.amount,
        currency: input.currency,
        pass_charge: input.passCharge,
        ussd: { bank_code: input.bankCode as DirectInitiateUssdRequest['ussd']['bank_code'] },
        customer: { name: input.customer.name, email: input.customer.email },
      };
      try {
        const { data } = await heartbeatWhile(api.direct.initiateUssd(req));
        const code = data.ussd_details?.ussd_reference;
        if (!code)
          throw ApplicationFailure.create({
            type: 'OutcomeUnknown',
            message: 'B5 answered without ussd_details.ussd_reference',
            nonRetryable: true,
          });
        logger.info({ transactionRef: input.transactionRef }, 'USSD code issued');
        return { ussdCode: code, expiresAt: data.ussd_details?.expiresAt ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'initiate USSD' });
      }
    },
  };
}

export type UssdPaymentActivities = ReturnType<typeof createUssdPaymentActivities>;
