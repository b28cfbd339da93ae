// USSD payment: B5 hands back the code and its expiry (to the starter at once, through
// update-with-start on `ussdCode`); the flow waits for the webhook until
// expiresAt, then verifies by reference. B5 is sent once (again only for a reference the service
// does not know); a lost answer is settled by verify.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  patched,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import {
  DIRECT_FINAL_STATUSES,
  directPaymentStateQuery,
  ussdCodeUpdate,
  type DirectPaymentState,
  type DirectStatus,
  type UssdPaymentInput,
} from '../shared/bank-ussd';
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

/** When B5 gives no parseable expiresAt, the flow waits this long (the sandbox's code lifetime). */
const FALLBACK_USSD_WAIT_MS = 10 * 60_000;

export async function ussdPaymentWorkflow(input: UssdPaymentInput): Promise<DirectPaymentState> {
  const ref = input.transactionRef;
  const inbox = listenForWebhook(ref);
  const expected: ExpectedPayment = {
    amount: input.amount,
    currency: input.currency,
    passCharge: input.passCharge === true,
  };
  const state: DirectPaymentState = {
    transactionRef: ref,
    status: 'initiating',
    amount: input.amount,
    webhooksReceived: 0,
    refusedCodes: 0,
  };
  const snapshot = (): DirectPaymentState => ({ ...state, webhooksReceived: inbox.deliveries });
  const setStatus = statusSetter<DirectStatus>(state, DIRECT_FINAL_STATUSES);
  const conclude = (c: Confirmation) => {
    state.confirmedBy = c.confirmedBy;
    setStatus(c.status, c.reason);
  };
  setHandler(directPaymentStateQuery, snapshot);
  setHandler(ussdCodeUpdate, async () => {
    await condition(() => state.ussdCode !== undefined || state.status !== 'initiating');
    if (!state.ussdCode)
      throw ApplicationFailure.create({
        type: 'UssdFailed',
        message: state.reason ?? 'no USSD code was issued',
        nonRetryable: true,
      });
    return { transactionRef: ref, ussdCode: state.ussdCode, expiresAt: state.expiresAt };
  });

  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'ussd',
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
      let pending = { as: 'expired' as const, reason: 'the USSD code expired unpaid' };
      const sent = await sendPayment(ref, 'USSD (B5)', () => once.initiateUssd(input));
      if (sent.outcome === 'answered') {
        Object.assign(state, {
          ussdCode: sent.answer.ussdCode,
          expiresAt: sent.answer.expiresAt,
          authModel: 'USSDCodeGenerated',
        });
        setStatus('awaiting_payment');
      } else if (sent.outcome === 'refused') setStatus('failed', sent.failure.message);
      else if (sent.outcome === 'unverified')
        setStatus('unknown', `B5's answer was lost (${sent.lost}) and the transaction could not be verified`);
      else if (sent.outcome === 'never-received')
        setStatus('failed', 'the USSD request never reached the service (sent twice)');
      else if (sent.record.status === 'Pending') {
        // The code exists at the service but nobody knows it: it lapses unpaid.
        setStatus('confirming', `B5's answer was lost (${sent.lost})`);
        pending = { as: 'expired', reason: "B5's answer was lost: the payer never got the code" };
      } else if (sent.record.status === 'Success') setStatus('confirming');
      else conclude(fromLookup(sent.record, expected));

      let verified = false;
      if (state.status === 'awaiting_payment') {
        const expiresAt = Date.parse(state.expiresAt ?? '');
        const waitMs = Number.isNaN(expiresAt) ? FALLBACK_USSD_WAIT_MS : expiresAt - Date.now();
        verified = await awaitPayer(
          ref,
          inbox,
          Math.max(waitMs, 1),
          input.verifyEveryMs ?? PAYMENT_DEFAULTS.verifyWhileWaitingMs,
        );
        setStatus('confirming');
      }
      if (state.status === 'confirming') {
        conclude(
          await confirmPayment(
            ref,
            expected,
            inbox,
            inbox.event || verified ? 0 : (input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs),
            pending,
          ),
        );
      }
      // An unknown outcome is parked, never final: verified again on a backoff, or resolved by an operator.
      if (state.status === 'unknown' && patched('park-unknown-outcome')) await parkUnknownOutcome(ref, expected, state);
      await condition(allHandlersFinished);
      return snapshot();
    },
    snapshot,
  );
}
