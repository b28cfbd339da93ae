// Direct bank debit (B3/B4): the payer's OTP/token, or an account without funds.
import { DuplicateReferenceError, getDirectPaymentState, startBankPayment, submitBankCode } from '../../src/starters';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { DIRECT_FINAL_STATUSES, type DirectPaymentState } from '../../src/shared/payment-common';
import { SANDBOX_OTP } from '../../src/sandbox';
import { awaitResult, drive, ownRunHandle, startOnce, type KindDriver, type Outcome } from './types';

/**
 * Bank status → money:
 *  success — debited (webhook or verify)                          → money
 *  failed  — refused code limit, insufficient funds               → no-money
 *  expired — no code before the deadline, verify showed no success → no-money
 *  unknown — lost answer not settled by verify                    → unknown
 */
export const bankOutcome = (status: string): Outcome =>
  status === 'success' ? 'money' : status === 'unknown' ? 'unknown' : 'no-money';

const VARIANTS = [
  { name: 'otp', account: '0123456789', amount: 180_000 },
  { name: 'token', account: '1234567890', amount: 75_000 },
  { name: 'insufficient', account: '0000000051', amount: 60_000 },
] as const;

export const bankDriver: KindDriver = {
  kind: 'bank',
  ledgerKinds: ['bank_debit'],
  async run(ctx, flow) {
    const v = ctx.rng.pick(VARIANTS);
    flow.variant = v.name;
    flow.workflowId = paymentWorkflowId(flow.ref);
    await startOnce(
      ctx,
      'start bank',
      () =>
        startBankPayment(ctx.starters, {
          transactionRef: flow.ref,
          amount: v.amount,
          currency: 'NGN',
          bank: { bankCode: '058', accountOrPhone: v.account },
          customer: { name: 'Chaos Payer', email: 'payer@example.com' },
          webhookGraceMs: 3_000,
        }),
      (err) => err instanceof DuplicateReferenceError,
    );
    await drive(
      ctx,
      () => getDirectPaymentState(ctx.starters, flow.ref),
      (s: DirectPaymentState) => DIRECT_FINAL_STATUSES.includes(s.status),
      async (s) => {
        if (s.status === 'awaiting_code') await submitBankCode(ctx.starters, flow.ref, SANDBOX_OTP);
      },
    );
    const result = await awaitResult<DirectPaymentState>(
      ctx,
      () => ownRunHandle(ctx, flow.workflowId!, 'bankPaymentWorkflow'),
      flow,
    );
    if (!result) return;
    flow.closed = true;
    flow.status = result.status;
    flow.resolvedByRequery =
      (result as { confirmedBy?: string }).confirmedBy === 'verify' && result.status !== 'unknown';
    flow.expectations.push({
      reference: flow.ref,
      ledgerKind: 'bank_debit',
      outcome: bankOutcome(result.status),
      status: result.status,
    });
  },
};
