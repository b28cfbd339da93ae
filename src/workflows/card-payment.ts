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
// Card data is dropped from the workflow's memory once B1 answered; PIN and OTP live only in the
// Update's arguments and the B2 activity's input (both encrypted by the codec).
import { allHandlersFinished, condition, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import {
  CARD_FINAL_STATUSES, cardFirstStepUpdate, cardPaymentStateQuery, submitOtpUpdate, submitPinUpdate,
  type CardDetails, type CardPaymentInput, type CardPaymentState, type CardPaymentStatus,
} from '../shared/card';
import { PAYMENT_DEFAULTS, type ExpectedPayment, type FinalStatus } from '../shared/payment-common';
import { paymentSearchAttributes } from '../shared/search-attributes';
import {
  confirmPayment, describeFailure, fromLookup, listenForWebhook, lookup, once, sendUnlessReceived, updateFailure, type Confirmation, settleCodeFailure, statusSetter,
} from './payment-steps';

const WAITING: CardPaymentStatus[] = ['awaiting_pin', 'awaiting_otp'];

export async function cardPaymentWorkflow(input: CardPaymentInput): Promise<CardPaymentState> {
  const ref = input.transactionRef;
  // Taken out of the input at once: after B1 nothing references it any more.
  let card: CardDetails | undefined = input.card;
  delete (input as Partial<CardPaymentInput>).card;

  const inbox = listenForWebhook(ref);
  const expected: ExpectedPayment = { amount: input.amount, currency: input.currency, passCharge: input.passCharge === true };
  const state: CardPaymentState = { transactionRef: ref, status: 'charging', amount: input.amount, currency: input.currency, webhooksReceived: 0, refusedCodes: 0 };
  let busy = false; // a PIN/OTP is with the service
  let pinAnswerLost = false; // the PIN may have been accepted: an OTP is accepted too
  let pendingOutcome: { as: FinalStatus; reason: string } = { as: 'unknown', reason: 'verified as Pending after the service answered Success' };

  const snapshot = (): CardPaymentState => ({
    ...state,
    webhooksReceived: inbox.deliveries,
    expects: state.status === 'awaiting_pin' ? (pinAnswerLost ? 'pin_or_otp' : 'pin') : state.status === 'awaiting_otp' ? 'otp' : undefined,
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

  async function authorize(kind: 'pin' | 'otp', code: string): Promise<CardPaymentState> {
    busy = true;
    try {
      const step = await once.authorizeCard(ref, kind === 'pin' ? { pin: code } : { otp: code });
      pinAnswerLost = false;
      applyStep(step.transactionStatus);
      return snapshot();
    } catch (err) {
      // What a refusal or a lost answer meant, the service's record says.
      if ((await settleCodeFailure(ref, err, expected, { state, setStatus, conclude })) === 'confirming') return snapshot();
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
      if (state.status !== 'awaiting_pin' || busy) throw new Error(`no PIN is expected now (state ${state.status}${busy ? ', a code is being checked' : ''})`);
      if (typeof pin !== 'string' || !/^\d{4}$/.test(pin)) throw new Error('pin must be 4 digits');
    },
  });
  setHandler(submitOtpUpdate, (otp) => authorize('otp', otp), {
    validator: (otp) => {
      const expected = state.status === 'awaiting_otp' || (state.status === 'awaiting_pin' && pinAnswerLost);
      if (!expected || busy) throw new Error(`no OTP is expected now (state ${state.status}${busy ? ', a code is being checked' : ''})`);
      if (typeof otp !== 'string' || !/^\d{4,8}$/.test(otp)) throw new Error('otp must be 4 to 8 digits');
    },
  });

  upsertSearchAttributes(paymentSearchAttributes({ flow: 'card', reference: ref, amount: input.amount, currency: input.currency, status: 'charging' }));

  // ---- B1: sent once; a second time only when verify proved the first never arrived ----
  const sent = await sendUnlessReceived(ref, () => once.chargeCard({ ...input, card: card! }));
  if (sent.kind === 'answered') {
    state.authUrl = sent.answer.authUrl;
    applyStep(sent.answer.transactionStatus);
  } else if (sent.kind === 'refused') setStatus('failed', sent.failure.message);
  else if (sent.kind === 'unverified') setStatus('unknown', `the charge's answer was lost (${sent.lost}) and the transaction could not be verified`);
  else if (sent.kind === 'never-received') setStatus('failed', 'the charge never reached the service (sent twice)');
  else if (sent.found.status === 'Pending') {
    // The transaction exists but its step (PIN, OTP or 3DS) is unknown: nobody can complete it.
    setStatus('confirming', `the charge's answer was lost (${sent.lost})`);
    pendingOutcome = { as: 'failed', reason: "the charge's answer was lost: the payment cannot be continued and lapses at the service" };
  } else if (sent.found.status === 'Success') setStatus('confirming');
  else conclude(fromLookup(sent.found, expected));
  card = undefined;

  // ---- PIN / OTP: each step with its own deadline ----
  let stepOf: CardPaymentStatus | undefined;
  let deadline = 0;
  while (WAITING.includes(state.status)) {
    const current = state.status;
    const timeoutMs = current === 'awaiting_pin' ? (input.pinTimeoutMs ?? PAYMENT_DEFAULTS.pinTimeoutMs) : (input.otpTimeoutMs ?? PAYMENT_DEFAULTS.otpTimeoutMs);
    if (stepOf !== current) {
      stepOf = current;
      deadline = Date.now() + timeoutMs;
    }
    const moved = await condition(() => state.status !== current || inbox.event !== undefined, Math.max(deadline - Date.now(), 1));
    if (inbox.event && WAITING.includes(state.status)) {
      setStatus('confirming'); // paid (e.g. the OTP's answer is still on its way): the webhook decides
      break;
    }
    if (moved) continue;
    if (busy) {
      await condition(() => !busy); // a code in flight decides first
      continue;
    }
    setStatus('expired', `no ${current === 'awaiting_pin' ? 'PIN' : 'OTP'} within ${timeoutMs} ms`);
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
    conclude(await confirmPayment(ref, expected, inbox, input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs, pendingOutcome));
  }
  await condition(allHandlersFinished);
  return snapshot();
}
