// Direct bank debit: B3, then the payer's token or OTP as an Update (B4), then confirmation by
// the webhook or by verifying the transaction.
import { ApplicationFailure, condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { createPaymentActivities } from '../activities/payments';
import { directPaymentStateQuery, submitBankCodeUpdate, type BankPaymentInput, type DirectPaymentState, type DirectStatus } from '../shared/bank-ussd';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { confirmPayment } from './confirm-payment';
import { failureOf } from './activity-failure';

const once = proxyActivities<ReturnType<typeof createPaymentActivities>>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });

export async function bankPaymentWorkflow(input: BankPaymentInput): Promise<DirectPaymentState> {
  const state: DirectPaymentState = { transactionRef: input.transactionRef, status: 'initiating', amount: input.amount };
  let webhook: PaymentWebhookEvent | undefined;
  let validating = false;
  let rejected = 0;
  const setStatus = (status: DirectStatus, reason?: string) => {
    state.status = status;
    if (reason) state.reason = reason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  setHandler(paymentWebhookSignal, (e) => {
    if (e.transactionRef === input.transactionRef && e.event === 'charge_successful') webhook ??= e;
  });
  setHandler(directPaymentStateQuery, () => state);
  setHandler(
    submitBankCodeUpdate,
    async (code) => {
      validating = true;
      try {
        await once.validateBank(input.transactionRef, code);
        setStatus('confirming');
        return state;
      } catch (err) {
        const f = failureOf(err);
        if (f?.type === 'BadRequest' && ++rejected < 3) throw ApplicationFailure.create({ type: 'Rejected', message: f.message, nonRetryable: true });
        setStatus('confirming', f?.message);
        throw ApplicationFailure.create({ type: f?.type ?? 'OutcomeUnknown', message: f?.message ?? 'the payment is being verified', nonRetryable: true });
      } finally {
        validating = false;
      }
    },
    {
      validator: (code) => {
        if (state.status !== 'awaiting_code' || validating) throw new Error(`no code is expected in state ${state.status}`);
        if (typeof code !== 'string' || !/^\d{4,8}$/.test(code)) throw new Error('code must be 4 to 8 digits');
      },
    },
  );

  upsertSearchAttributes(paymentSearchAttributes({ flow: 'bank', reference: input.transactionRef, amount: input.amount, currency: input.currency, status: 'initiating' }));
  try {
    state.authModel = (await once.chargeBank(input)).authModel;
    setStatus('awaiting_code');
  } catch (err) {
    const f = failureOf(err);
    if (f?.type === 'BadRequest' || f?.type === 'InvalidRequest' || f?.type === 'Unauthorized') {
      setStatus('failed', f.message);
      return state;
    }
    setStatus('confirming', f?.message);
  }
  if (state.status === 'awaiting_code') {
    const moved = await condition(() => (state.status !== 'awaiting_code' && !validating) || webhook !== undefined, input.codeTimeoutMs ?? 5 * 60_000);
    if (!moved && state.status === 'awaiting_code') {
      setStatus('expired', 'no token or OTP before the timeout');
      return state;
    }
  }
  const c = await confirmPayment(input.transactionRef, input.amount, () => webhook, input.webhookGraceMs ?? 30_000);
  state.confirmedBy = c.confirmedBy;
  setStatus(c.status, c.reason);
  return state;
}
