// Direct card payment.
//
//   charging ──B1──► awaiting_pin ──PIN (B2)──► awaiting_otp ──OTP (B2)──► confirming ──► success
//            ├─────► awaiting_otp                                              ▲        failed
//            └─────► awaiting_3ds ── payer completes auth_url (webhook/verify) ┘        expired
//                                                                                        unknown
// B1 and B2 move money: one attempt each. A refused request (400) proves nothing happened; any
// other failure is an unknown outcome, settled by verifying the reference before anything else:
// B1 is sent once more only when the service does not know the reference at all.
// PIN and OTP arrive as Updates: the validator refuses a code in the wrong state or format (so
// nothing enters history); a code the service refuses fails the Update with its message and the
// flow keeps waiting, up to MAX_REFUSED_CODES. Each step has its timeout, after which the flow
// ends as expired. The final state is the charge_successful webhook's (a signal from the
// receiver), or verify's when no webhook came within the grace.
// Card data, PIN and OTP never reach the workflow: the starter seals them into the claim-check
// store and the input and Updates carry only handles (plus BIN, last four and brand for display).
// When the sealed card expired before B1 could be sent, the flow waits in awaiting_card for the
// card again (submitCard); an expired PIN/OTP fails its Update with SecretUnavailable.
import { allHandlersFinished, condition, patched, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import {
  CARD_FINAL_STATUSES,
  cardFirstStepUpdate,
  cardPaymentStateQuery,
  submitCardUpdate,
  submitOtpUpdate,
  submitPinUpdate,
  type CardPaymentInput,
  type CardPaymentState,
  type CardPaymentStatus,
} from '../shared/card';
import { isClaimHandle, SECRET_UNAVAILABLE, type SealedCard } from '../shared/claim-check';
import { PAYMENT_DEFAULTS, type ExpectedPayment, type FinalStatus } from '../shared/payment-common';
import { paymentSearchAttributes } from '../shared/search-attributes';
import {
  confirmPayment,
  parkUnknownOutcome,
  recordOutcomeOnCancel,
  describeFailure,
  fromLookup,
  listenForWebhook,
  lookup,
  once,
  secretUnavailable,
  sendPayment,
  updateFailure,
  type Confirmation,
  settleCodeFailure,
  statusSetter,
} from './steps/payment-steps';

const WAITING: CardPaymentStatus[] = ['awaiting_pin', 'awaiting_otp'];

export async function cardPaymentWorkflow(input: CardPaymentInput): Promise<CardPaymentState> {
  const ref = input.transactionRef;
  let card: SealedCard = input.card;
  let resubmittedCard: SealedCard | undefined;

  const inbox = listenForWebhook(ref);
  const expected: ExpectedPayment = {
    amount: input.amount,
    currency: input.currency,
    passCharge: input.passCharge === true,
  };
  const state: CardPaymentState = {
    transactionRef: ref,
    status: 'charging',
    amount: input.amount,
    currency: input.currency,
    webhooksReceived: 0,
    refusedCodes: 0,
    card: { bin: card.bin, last4: card.last4, brand: card.brand },
  };
  let busy = false; // a PIN/OTP is with the service
  let pinAnswerLost = false; // the PIN may have been accepted: an OTP is accepted too
  let pendingOutcome: { as: FinalStatus; reason: string } = {
    as: 'unknown',
    reason: 'verified as Pending after the service answered Success',
  };

  const snapshot = (): CardPaymentState => ({
    ...state,
    webhooksReceived: inbox.deliveries,
    expects:
      state.status === 'awaiting_pin'
        ? pinAnswerLost
          ? 'pin_or_otp'
          : 'pin'
        : state.status === 'awaiting_otp'
          ? 'otp'
          : undefined,
  });
  const setStatus = statusSetter<CardPaymentStatus>(state, CARD_FINAL_STATUSES);
  const conclude = (c: Confirmation) => {
    state.confirmedBy = c.confirmedBy;
    setStatus(c.status, c.reason);
  };
  /** The service's step answer. Anything but a known step goes to confirmation: never "failed" on an unexpected word. */
  const applyStep = (s: string) => {
    if (s === 'ValidatePin') setStatus('awaiting_pin');
    else if (s === 'ValidateOTP') setStatus('awaiting_otp');
    else if (s === 'ThreeDSecure') setStatus('awaiting_3ds');
    else setStatus('confirming', s === 'Success' ? undefined : `the service answered ${s}`);
  };

  setHandler(cardPaymentStateQuery, snapshot);
  setHandler(cardFirstStepUpdate, async () => {
    await condition(() => state.status !== 'charging');
    return snapshot();
  });

  setHandler(
    submitCardUpdate,
    async (c) => {
      resubmittedCard = c;
      await condition(() => state.status !== 'awaiting_card' && state.status !== 'charging');
      return snapshot();
    },
    {
      validator: (c) => {
        if (state.status !== 'awaiting_card' || resubmittedCard)
          throw new Error(`no card is expected now (state ${state.status})`);
        if (!c || !isClaimHandle(c.handle))
          throw new Error('card must be sealed: pass the claim-check handle the starter made');
      },
    },
  );

  async function authorize(kind: 'pin' | 'otp', handle: string): Promise<CardPaymentState> {
    busy = true;
    try {
      const step = await once.authorizeCard(ref, kind, handle);
      pinAnswerLost = false;
      applyStep(step.transactionStatus);
      return snapshot();
    } catch (err) {
      // The sealed code expired before it was sent: nothing happened, the flow keeps waiting.
      const gone = secretUnavailable(err);
      if (gone)
        throw updateFailure(
          SECRET_UNAVAILABLE,
          `the ${kind === 'pin' ? 'PIN' : 'OTP'} expired before it was sent: send it again`,
        );
      // What a refusal or a lost answer meant, the service's record says.
      if ((await settleCodeFailure(ref, err, expected, { state, setStatus, conclude })) === 'confirming')
        return snapshot();
      // Still pending (or not verifiable): the code can be sent again safely, a transaction succeeds once.
      if (kind === 'pin') pinAnswerLost = true;
      throw updateFailure(
        'OutcomeUnknown',
        `the service's answer was lost (${describeFailure(err)}); the payment is still pending: send the ${kind === 'pin' ? 'PIN again, or the OTP if the payer received one' : 'OTP again'}`,
      );
    } finally {
      busy = false;
    }
  }

  setHandler(submitPinUpdate, (pin) => authorize('pin', pin), {
    validator: (pin) => {
      if (state.status !== 'awaiting_pin' || busy)
        throw new Error(`no PIN is expected now (state ${state.status}${busy ? ', a code is being checked' : ''})`);
      if (!isClaimHandle(pin)) throw new Error('pin must be sealed: pass the claim-check handle the starter made');
    },
  });
  setHandler(submitOtpUpdate, (otp) => authorize('otp', otp), {
    validator: (otp) => {
      const expected = state.status === 'awaiting_otp' || (state.status === 'awaiting_pin' && pinAnswerLost);
      if (!expected || busy)
        throw new Error(`no OTP is expected now (state ${state.status}${busy ? ', a code is being checked' : ''})`);
      if (!isClaimHandle(otp)) throw new Error('otp must be sealed: pass the claim-check handle the starter made');
    },
  });

  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'card',
      reference: ref,
      amount: input.amount,
      currency: input.currency,
      status: 'charging',
    }),
  );
  return recordOutcomeOnCancel(
    ref,
    expected,
    state,
    async () => {
      // ---- B1: sent once; a second time only when verify proved the first never arrived ----
      // A sealed card that no longer opens means this send was not made (nothing reached the service).
      const chargeSealed = async () =>
        once.chargeCard({ ...input, card }).catch((err: unknown) => {
          if (secretUnavailable(err)) return 'secret-unavailable' as const;
          throw err;
        });
      let sent = await sendPayment(ref, 'charge (B1)', chargeSealed);
      while (sent.outcome === 'answered' && sent.answer === 'secret-unavailable') {
        // The sealed card expired (e.g. the worker was down past its TTL): ask for it again.
        const timeoutMs = input.cardTimeoutMs ?? input.pinTimeoutMs ?? PAYMENT_DEFAULTS.pinTimeoutMs;
        setStatus('awaiting_card', 'the sealed card expired before it was sent: submit the card again');
        if (!(await condition(() => resubmittedCard !== undefined, timeoutMs))) {
          setStatus('expired', `the card was not submitted again within ${timeoutMs} ms`);
          break;
        }
        card = resubmittedCard!;
        resubmittedCard = undefined;
        state.card = { bin: card.bin, last4: card.last4, brand: card.brand };
        setStatus('charging');
        sent = await sendPayment(ref, 'charge (B1)', chargeSealed);
      }
      if (sent.outcome === 'answered') {
        const answer = sent.answer;
        // 'secret-unavailable' here: ended above as expired, no card came again.
        if (answer !== 'secret-unavailable') {
          state.authUrl = answer.authUrl;
          applyStep(answer.transactionStatus);
        }
      } else if (sent.outcome === 'refused') setStatus('failed', sent.failure.message);
      else if (sent.outcome === 'unverified')
        setStatus('unknown', `the charge's answer was lost (${sent.lost}) and the transaction could not be verified`);
      else if (sent.outcome === 'never-received')
        setStatus('failed', 'the charge never reached the service (sent twice)');
      else if (sent.record.status === 'Pending') {
        // The transaction exists but its step (PIN, OTP or 3DS) is unknown: nobody can complete it.
        setStatus('confirming', `the charge's answer was lost (${sent.lost})`);
        pendingOutcome = {
          as: 'failed',
          reason: "the charge's answer was lost: the payment cannot be continued and lapses at the service",
        };
      } else if (sent.record.status === 'Success') setStatus('confirming');
      else conclude(fromLookup(sent.record, expected));

      // ---- PIN / OTP: each step with its own deadline ----
      let stepOf: CardPaymentStatus | undefined;
      let deadline = 0;
      while (WAITING.includes(state.status)) {
        const current = state.status;
        const timeoutMs =
          current === 'awaiting_pin'
            ? (input.pinTimeoutMs ?? PAYMENT_DEFAULTS.pinTimeoutMs)
            : (input.otpTimeoutMs ?? PAYMENT_DEFAULTS.otpTimeoutMs);
        if (stepOf !== current) {
          stepOf = current;
          deadline = Date.now() + timeoutMs;
        }
        const moved = await condition(
          () => state.status !== current || inbox.event !== undefined,
          Math.max(deadline - Date.now(), 1),
        );
        if (inbox.event && WAITING.includes(state.status)) {
          setStatus('confirming'); // paid (e.g. the OTP's answer is still on its way): the webhook decides
          break;
        }
        if (moved) continue;
        if (busy) {
          await condition(() => !busy); // a code in flight decides first
          continue;
        }
        const lapsed = `no ${current === 'awaiting_pin' ? 'PIN' : 'OTP'} within ${timeoutMs} ms`;
        if (patched('verify-before-expire')) {
          // A deadline is not proof: the payer may have completed the step elsewhere. Verify decides.
          pendingOutcome = { as: 'expired', reason: lapsed };
          setStatus('confirming', lapsed);
        } else setStatus('expired', lapsed);
      }

      // ---- 3DS: the payer completes auth_url; the webhook or a requery confirms ----
      if (state.status === 'awaiting_3ds') {
        const timeoutMs = input.threeDsTimeoutMs ?? PAYMENT_DEFAULTS.threeDsTimeoutMs;
        const pollMs = input.threeDsPollMs ?? PAYMENT_DEFAULTS.threeDsPollMs;
        const until = Date.now() + timeoutMs;
        while (!inbox.event && state.status === 'awaiting_3ds') {
          const left = until - Date.now();
          if (await condition(() => inbox.event !== undefined, Math.max(Math.min(left, pollMs), 1))) break;
          const found = await lookup(ref);
          if (found?.found && found.status === 'Success') setStatus('confirming');
          else if (found?.found && found.status !== 'Pending') conclude(fromLookup(found, expected));
          else if (Date.now() >= until) {
            pendingOutcome = { as: 'expired', reason: `3DS not completed within ${timeoutMs} ms` };
            setStatus('confirming', pendingOutcome.reason);
          }
        }
        if (inbox.event && state.status === 'awaiting_3ds') setStatus('confirming');
      }

      if (state.status === 'confirming') {
        conclude(
          await confirmPayment(
            ref,
            expected,
            inbox,
            input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs,
            pendingOutcome,
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
