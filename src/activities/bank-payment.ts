// Activities of the direct bank debit flow: the debit, and its validation with the payer's sealed token or OTP.
//
// Money-moving calls are made once, their failures typed for the workflow (moneyCall, ./calls.ts).
//
// Nothing here logs a request body: the bank code passes through the API client and is never
// logged; only references and statuses are.
import type { DirectChargeBankRequest } from '../api';
import type { ActivityDeps } from './deps';
import { bindActivities } from './bind';
import type { BankPaymentInput } from '../shared/bank-payment';
import { withSealed } from './claim-check';
import { heartbeatWhile } from './heartbeat';
import { directPayment, moneyCall } from './calls';

/** Debits the bank account (B3). Money-moving: one attempt. */
function chargeBank({ api, logger }: ActivityDeps, input: BankPaymentInput): Promise<{ authModel?: string }> {
  return moneyCall('bank debit', async () => {
    const bank = { bank_code: input.bank.bankCode, account_or_phoneno: input.bank.accountOrPhone };
    const req: DirectChargeBankRequest = { ...directPayment(input), bank };
    const { data } = await heartbeatWhile(api.direct.chargeBank(req));
    logger.info({ transactionRef: input.transactionRef, authModel: data.auth_model }, 'bank debit answered');
    return { authModel: data.auth_model ?? undefined };
  });
}

/** Validates the bank payment (B4) with the payer's sealed token or OTP (the handle from the Update). Money-moving: one attempt. */
function validateBank(
  { api, logger, claimCheck }: ActivityDeps,
  transactionRef: string,
  handle: string,
): Promise<{ authModel?: string; transactionStatus?: string }> {
  return moneyCall('validate bank payment', async () => {
    const validate = (code: string) =>
      api.direct.validateBank({ transaction_reference: transactionRef, authorization: { otp_token: code } });
    const { data } = await withSealed(claimCheck, handle, 'bank-code', (code: string) =>
      heartbeatWhile(validate(code)),
    );
    logger.info({ transactionRef, status: data.transaction_status }, 'bank validation answered');
    return { authModel: data.auth_model ?? undefined, transactionStatus: data.transaction_status ?? undefined };
  });
}

export function createBankPaymentActivities(deps: ActivityDeps) {
  return bindActivities(deps, { chargeBank, validateBank });
}

export type BankPaymentActivities = ReturnType<typeof createBankPaymentActivities>;
