// Hosted checkout: A1 creates the transaction and its checkout_url, which the starter gets at
// once through update-with-start; then the flow waits for charge_successful or the checkout's
// expiry, and verifies the result by reference when no webhook came.
import { ApplicationFailure, condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { createPaymentActivities } from '../activities/payments';
import { checkoutStateQuery, checkoutUrlUpdate, type CheckoutInput, type CheckoutState } from '../shared/checkout';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { confirmPayment } from './confirm-payment';
import { failureOf } from './activity-failure';

const once = proxyActivities<ReturnType<typeof createPaymentActivities>>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });

export async function checkoutWorkflow(input: CheckoutInput): Promise<CheckoutState> {
  const state: CheckoutState = { transactionRef: input.transactionRef, status: 'initiating' };
  let webhook: PaymentWebhookEvent | undefined;
  const setStatus = (status: CheckoutState['status'], reason?: string) => {
    state.status = status;
    if (reason) state.reason = reason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  setHandler(paymentWebhookSignal, (e) => {
    if (e.transactionRef === input.transactionRef && e.event === 'charge_successful') webhook ??= e;
  });
  setHandler(checkoutStateQuery, () => state);
  setHandler(checkoutUrlUpdate, async () => {
    await condition(() => state.checkoutUrl !== undefined || state.status === 'failed');
    if (!state.checkoutUrl) throw ApplicationFailure.create({ type: 'CheckoutFailed', message: state.reason ?? 'the checkout could not be created', nonRetryable: true });
    return { checkoutUrl: state.checkoutUrl, transactionRef: input.transactionRef };
  });

  upsertSearchAttributes(paymentSearchAttributes({ flow: input.isRecurring ? 'recurring' : 'checkout', reference: input.transactionRef, amount: input.amount, currency: input.currency, status: 'initiating' }));
  try {
    state.checkoutUrl = (await once.initiateCheckout(input)).checkoutUrl;
    setStatus('open');
  } catch (err) {
    const f = failureOf(err);
    setStatus('failed', f?.message ?? 'checkout could not be created');
    // Let a waiting update-with-start caller see the failure before the workflow closes.
    await condition(() => false, 1_000);
    return state;
  }

  await condition(() => webhook !== undefined, input.expiryMs ?? 30 * 60_000);
  setStatus('confirming');
  const c = await confirmPayment(input.transactionRef, input.amount, () => webhook, webhook ? 0 : (input.webhookGraceMs ?? 30_000));
  state.confirmedBy = c.confirmedBy;
  state.tokenId = webhook?.tokenId;
  state.transactionType = webhook?.transactionType;
  setStatus(c.status, c.reason);
  return state;
}
