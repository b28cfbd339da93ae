// Activities of the direct bank debit flow: B3 debit, B4 validate with the payer's sealed token or OTP.
//
// Money-moving calls are proxied with one attempt and every failure is typed (toActivityFailure):
// a refusal (BadRequest, InvalidRequest, Unauthorized, NotFound) proves nothing happened; anything
// else is an unknown outcome that the workflow settles by verifying the reference first
// (lookupTransaction, ./payment-common.ts).
//
// Nothing here logs a request body: the bank code passes through the API client and is never
// logged; only references and statuses are.
import type { DirectChargeBankRequest } from '../api';
import type { ActivityDeps } from './deps';
import type { BankPaymentInput } from '../shared/bank-payment';
import { withSealed } from './claim-check';
import { heartbeatWhile } from './heartbeat';
import { toActivityFailure } from './failures';

export function createBankPaymentActivities({ api, logger, claimCheck }: ActivityDeps) {
  return {
    /** B3. Money-moving: one attempt. */
    async chargeBank(input: BankPaymentInput): Promise<{ authModel?: string }> {
      const req: DirectChargeBankRequest = {
        transaction_reference: input.transactionRef,
        amount: input.amount,
        currency: input.currency,
        pass_charge: input.passCharge,
        bank: { bank_code: input.bank.bankCode, account_or_phoneno: input.bank.accountOrPhone },
        customer: { name: input.customer.name, email: input.customer.email },
      };
      try {
        const { data } = await heartbeatWhile(api.direct.chargeBank(req));
        logger.info({ transactionRef: input.transactionRef, authModel: data.auth_model }, 'bank debit answered');
        return { authModel: data.auth_model ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'bank debit' });
      }
    },

    /** B4 with the payer's sealed token or OTP (the handle from the Update). Money-moving: one attempt. */
    async validateBank(
      transactionRef: string,
      handle: string,
    ): Promise<{ authModel?: string; transactionStatus?: string }> {
      try {
        const { data } = await withSealed(claimCheck, handle, 'bank-code', (code: string) =>
          heartbeatWhile(
            api.direct.validateBank({ transaction_reference: transactionRef, authorization: { otp_token: code } }),
          ),
        );
        logger.info({ transactionRef, status: data.transaction_status }, 'bank validation answered');
        return { authModel: data.auth_model ?? undefined, transactionStatus: data.transaction_status ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'validate bank payment' });
      }
    },
  };
}

export type BankPaymentActivities = ReturnType<typeof createBankPaymentActivities>;
