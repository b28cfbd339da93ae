// USSD payment: B5 hands back the code and its expiry; the flow waits for the webhook until
// expiresAt, then verifies by reference.
import { condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { createPaymentActivities } from '../activities/payments';
import { directPaymentStateQuery, type DirectPaymentState, type DirectStatus, type UssdPaymentInput } from '../shared/bank-ussd';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { confirmPayment } from './confirm-payment';
import { failureOf } from './activity-failure';

const once = proxyActivities<ReturnType<typeof createPaymentActivities>>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });

export async function ussdPaymentWorkflow(input: UssdPaymentInput): Promise<DirectPaymentState> {
  const state: DirectPaymentState = { transactionRef: input.transactionRef, status: 'initiating', amount: input.amount };
  let webhook: PaymentWebhookEvent | undefined;
  const setStatus = (status: DirectStatus, reason?: string) => {
    state.status = status;
    if (reason) state.reason = reason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  setHandler(paymentWebhookSignal, (e) => {
    if (e.transactionRef === input.transactionRef && e.event === 'charge_successful') webhook ??= e;
  });
  setHandler(directPaymentStateQuery, () => state);

  upsertSearchAttributes(paymentSearchAttributes({ flow: 'ussd', reference: input.transactionRef, amount: input.amount, currency: input.currency, status: 'initiating' }));
  try {
    const code = await once.initiateUssd(input);
    Object.assign(state, { ussdCode: code.ussdCode, expiresAt: code.expiresAt, authModel: 'USSDCodeGenerated' });
    setStatus('awaiting_payment');
  } catch (err) {
    const f = failureOf(err);
    if (f?.type === 'BadRequest' || f?.type === 'InvalidRequest' || f?.type === 'Unauthorized') {
      setStatus('failed', f.message);
      return state;
    }
    setStatus('confirming', f?.message);
  }
  if (state.status === 'awaiting_payment') {
    const until = Date.parse(state.expiresAt ?? '') - Date.now();
    await condition(() => webhook !== undefined, Math.max(until, 1));
    setStatus('confirming');
  }
  const c = await confirmPayment(input.transactionRef, input.amount, () => webhook, webhook ? 0 : (input.webhookGraceMs ?? 30_000));
  state.confirmedBy = c.confirmedBy;
  setStatus(c.status, c.reason);
  return state;
}
