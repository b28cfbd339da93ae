// Direct bank debit: B3 answers ValidateTOKEN or ValidateOTP; the payer's token or OTP arrives
// as an Update (B4), then the charge_successful webhook — or verify — confirms.
// B3 and B4 move money: one attempt each; a refusal proves nothing happened, anything else is
// settled by verifying the reference first (B3 is sent again only for a reference the service
// does not know). A code the service refuses fails the Update and the flow keeps waiting, up to
// MAX_REFUSED_CODES; no code within codeTimeoutMs ends the flow as expired. The code arrives
// sealed (a claim-check handle): the token or OTP itself never enters history.
import { allHandlersFinished, condition, patched, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import {
  DIRECT_FINAL_STATUSES,
  directPaymentStateQuery,
  submitBankCodeUpdate,
  type BankPaymentInput,
  type DirectPaymentState,
  type DirectStatus,
} from '../shared/bank-ussd';
import { PAYMENT_DEFAULTS, type ExpectedPayment, type FinalStatus } from '../shared/payment-common';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { isClaimHandle, SECRET_UNAVAILABLE } from '../shared/claim-check';
import {
  confirmPayment,
  parkUnknownOutcome,
  recordOutcomeOnCancel,
  describeFailure,
  fromLookup,
  listenForWebhook,
  once,
  secretUnavailable,
  sendPayment,
  updateFailure,
  type Confirmation,
  settleCodeFailure,
  statusSetter,
} from './steps/payment-steps';

export async function bankPaymentWorkflow(input: BankPaymentInput): Promise<DirectPaymentState> {
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
  let busy = false;

  const snapshot = (): DirectPaymentState => ({ ...state, webhooksReceived: inbox.deliveries });
  const setStatus = statusSetter<DirectStatus>(state, DIRECT_FINAL_STATUSES);
  const conclude = (c: Confirmation) => {
    state.confirmedBy = c.confirmedBy;
    setStatus(c.status, c.reason);
  };
  setHandler(directPaymentStateQuery, snapshot);
  setHandler(
    submitBankCodeUpdate,
    async (code) => {
      busy = true;
      try {
        // B4's 200 ('Charge attempted') is not proof of payment: the webhook or verify confirms.
        await once.validateBank(ref, code);
        setStatus('confirming');
        return snapshot();
      } catch (err) {
        // The sealed code expired before it was sent: nothing happened, the flow keeps waiting.
        if (secretUnavailable(err))
          throw updateFailure(SECRET_UNAVAILABLE, 'the code expired before it was sent: send it again');
        if ((await settleCodeFailure(ref, err, expected, { state, setStatus, conclude })) === 'confirming')
          return snapshot();
        throw updateFailure(
          'OutcomeUnknown',
          `the service's answer was lost (${describeFailure(err)}); the debit is still pending: send the code again`,
        );
      } finally {
        busy = false;
      }
    },
    {
      validator: (code) => {
        if (state.status !== 'awaiting_code' || busy)
          throw new Error(`no code is expected now (state ${state.status}${busy ? ', a code is being checked' : ''})`);
        if (!isClaimHandle(code)) throw new Error('code must be sealed: pass the claim-check handle the starter made');
      },
    },
  );

  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'bank',
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
      const sent = await sendPayment(ref, 'bank debit (B3)', () => once.chargeBank(input));
      if (sent.outcome === 'answered') {
        state.authModel = sent.answer.authModel;
        setStatus('awaiting_code');
      } else if (sent.outcome === 'refused') setStatus('failed', sent.failure.message);
      else if (sent.outcome === 'unverified')
        setStatus('unknown', `the debit's answer was lost (${sent.lost}) and the transaction could not be verified`);
      else if (sent.outcome === 'never-received')
        setStatus('failed', 'the debit never reached the service (sent twice)');
      // The debit exists: the payer has a token or receives an OTP either way; B4 is the same call.
      else if (sent.record.status === 'Pending')
        setStatus('awaiting_code', `the debit's answer was lost (${sent.lost}); the auth model is unknown`);
      else if (sent.record.status === 'Success') setStatus('confirming');
      else conclude(fromLookup(sent.record, expected));

      let pending: { as: FinalStatus; reason: string } = { as: 'unknown', reason: 'verified as Pending' };
      if (state.status === 'awaiting_code') {
        const timeoutMs = input.codeTimeoutMs ?? PAYMENT_DEFAULTS.codeTimeoutMs;
        const until = Date.now() + timeoutMs;
        while (state.status === 'awaiting_code') {
          const moved = await condition(
            () => state.status !== 'awaiting_code' || inbox.event !== undefined,
            Math.max(until - Date.now(), 1),
          );
          if (inbox.event && state.status === 'awaiting_code') setStatus('confirming');
          else if (!moved && busy) await condition(() => !busy);
          else if (!moved && patched('verify-before-expire')) {
            // A deadline is not proof: verify decides (a success found then is a success).
            pending = { as: 'expired', reason: `no token or OTP within ${timeoutMs} ms` };
            setStatus('confirming', pending.reason);
          } else if (!moved) setStatus('expired', `no token or OTP within ${timeoutMs} ms`);
        }
      }
      if (state.status === 'confirming') {
        conclude(
          await confirmPayment(ref, expected, inbox, input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs, pending),
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
