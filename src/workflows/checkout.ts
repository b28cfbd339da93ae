// Hosted checkout: A1 creates the transaction and its checkout_url, which the starter gets at
// once through update-with-start (the `checkoutUrl` Update waits for A1's answer). The flow then
// waits for charge_successful or for the checkout's expiry, verifying the reference every minute
// meanwhile (a webhook may be lost), and verify decides the result. A1 is sent once (again only
// for a reference the service does not know).
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  patched,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { checkoutStateQuery, checkoutUrlUpdate, type CheckoutInput, type CheckoutState } from '../shared/checkout';
import { PAYMENT_DEFAULTS, type ExpectedPayment } from '../shared/payment-common';
import { paymentSearchAttributes } from '../shared/search-attributes';
import {
  awaitPayer,
  confirmPayment,
  parkUnknownOutcome,
  recordOutcomeOnCancel,
  fromLookup,
  listenForWebhook,
  once,
  sendPayment,
  type Confirmation,
  statusSetter,
} from './steps/payment-steps';

const FINAL: CheckoutState['status'][] = ['success', 'failed', 'expired', 'unknown'];

export async function checkoutWorkflow(input: CheckoutInput): Promise<CheckoutState> {
  const ref = input.transactionRef;
  const inbox = listenForWebhook(ref);
  const expected: ExpectedPayment = {
    amount: input.amount,
    currency: input.currency,
    passCharge: input.passCharge === true,
  };
  const state: CheckoutState = { transactionRef: ref, status: 'initiating', webhooksReceived: 0 };
  const snapshot = (): CheckoutState => ({ ...state, webhooksReceived: inbox.deliveries });
  const setStatus = statusSetter<CheckoutState['status']>(state, FINAL);
  const conclude = (c: Confirmation) => {
    state.confirmedBy = c.confirmedBy;
    const event = inbox.event;
    if (c.confirmedBy === 'webhook' && event) {
      state.tokenId = event.tokenId;
      state.transactionType = event.transactionType;
      state.amountPaid = event.amount;
      state.meta = event.meta;
    }
    setStatus(c.status, c.reason);
  };
  setHandler(checkoutStateQuery, snapshot);
  setHandler(checkoutUrlUpdate, async () => {
    await condition(() => state.checkoutUrl !== undefined || state.status !== 'initiating');
    if (!state.checkoutUrl)
      throw ApplicationFailure.create({
        type: 'CheckoutFailed',
        message: state.reason ?? 'the checkout could not be created',
        nonRetryable: true,
      });
    return { checkoutUrl: state.checkoutUrl, transactionRef: ref };
  });

  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: input.isRecurring ? 'recurring' : 'checkout',
      reference: ref,
      amount: input.amount,
      currency: input.currency,
      status: 'initiating',
    }),
  );
  return recordOutcomeOnCancel(
    ref,
    expected,
    state,
    async () => {
      const sent = await sendPayment(ref, 'checkout (A1)', () => once.initiateCheckout(input));
      if (sent.outcome === 'answered') {
        state.checkoutUrl = sent.answer.checkoutUrl;
        setStatus('open');
      } else if (sent.outcome === 'refused') setStatus('failed', sent.failure.message);
      else if (sent.outcome === 'unverified')
        setStatus('unknown', `A1's answer was lost (${sent.lost}) and the transaction could not be verified`);
      else if (sent.outcome === 'never-received')
        setStatus('failed', 'the checkout never reached the service (sent twice)');
      // The checkout exists but its URL was lost: nobody can open it, it lapses unpaid.
      else if (sent.record.status === 'Pending')
        setStatus('failed', `A1's answer was lost (${sent.lost}): the checkout cannot be opened`);
      else conclude(fromLookup(sent.record, expected));

      if (state.status === 'open') {
        const expiryMs = input.expiryMs ?? PAYMENT_DEFAULTS.checkoutExpiryMs;
        const verified = await awaitPayer(
          ref,
          inbox,
          expiryMs,
          input.verifyEveryMs ?? PAYMENT_DEFAULTS.verifyWhileWaitingMs,
        );
        setStatus('confirming');
        const c = await confirmPayment(
          ref,
          expected,
          inbox,
          inbox.event || verified ? 0 : (input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs),
          {
            as: 'expired',
            reason: `not paid within ${expiryMs} ms`,
          },
        );
        conclude(c);
      }
      // An unknown outcome is parked, never final: verified again on a backoff, or resolved by an operator.
      if (state.status === 'unknown' && patched('park-unknown-outcome')) await parkUnknownOutcome(ref, expected, state);
      // A caller of the checkoutUrl Update (update-with-start) sees a failure before the workflow closes.
      await condition(allHandlersFinished);
      return snapshot();
    },
    snapshot,
  );
}
