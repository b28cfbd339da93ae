// Direct card payment: B1 charge, then wait in the state the service answers — PIN and OTP as
// Updates (B2), 3DS while the payer completes auth_url — each with a timeout. The final state is
// confirmed by the charge_successful webhook (signal, via the receiver's signalWithStart) or,
// when none arrives, by verifying the transaction by reference.
import { ApplicationFailure, condition, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { createPaymentActivities } from '../activities/payments';
import {
  cardPaymentStateQuery, submitOtpUpdate, submitPinUpdate,
  type CardPaymentInput, type CardPaymentState, type CardPaymentStatus,
} from '../shared/card';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { failureOf } from './activity-failure';

type Activities = ReturnType<typeof createPaymentActivities>;
const once = proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });
const reads = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 5, initialInterval: '1s' } });

const MAX_REJECTED = 3;

export async function cardPaymentWorkflow(input: CardPaymentInput): Promise<CardPaymentState> {
  const state: CardPaymentState = {
    transactionRef: input.transactionRef, status: 'charging', amount: input.amount, currency: input.currency, webhooksReceived: 0, rejectedAttempts: 0,
  };
  let webhook: PaymentWebhookEvent | undefined;
  let authorizing = false;

  const setStatus = (status: CardPaymentStatus, reason?: string) => {
    state.status = status;
    if (reason) state.reason = reason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const fromService = (s: string) => {
    if (s === 'ValidatePin') setStatus('awaiting_pin');
    else if (s === 'ValidateOTP') setStatus('awaiting_otp');
    else if (s === 'ThreeDSecure') setStatus('awaiting_3ds');
    else if (s === 'Success') setStatus('confirming');
    else setStatus('failed', `the service answered ${s}`);
  };

  // Registered before the first await: a webhook that arrives early is buffered, never lost.
  setHandler(paymentWebhookSignal, (event) => {
    if (event.transactionRef !== input.transactionRef || event.event !== 'charge_successful') return;
    state.webhooksReceived += 1; // duplicates are counted, processed once
    webhook ??= event;
  });
  setHandler(cardPaymentStateQuery, () => state);

  async function authorize(authorization: { pin?: string; otp?: string }): Promise<CardPaymentState> {
    authorizing = true;
    try {
      fromService((await once.authorizeCard(input.transactionRef, authorization)).transactionStatus);
      return state;
    } catch (err) {
      const failure = failureOf(err);
      if (failure?.type === 'BadRequest') {
        state.rejectedAttempts += 1;
        if (state.rejectedAttempts >= MAX_REJECTED) setStatus('failed', failure.message);
        throw ApplicationFailure.create({ type: 'Rejected', message: failure.message, nonRetryable: true });
      }
      // The outcome is unknown: the verification below decides.
      setStatus('confirming', failure?.message);
      throw ApplicationFailure.create({ type: failure?.type ?? 'OutcomeUnknown', message: 'the answer was lost; the payment is being verified', nonRetryable: true });
    } finally {
      authorizing = false;
    }
  }

  setHandler(submitPinUpdate, (pin) => authorize({ pin }), {
    validator: (pin) => {
      if (state.status !== 'awaiting_pin' || authorizing) throw new Error(`no PIN is expected in state ${state.status}`);
      if (typeof pin !== 'string' || !/^\d{4}$/.test(pin)) throw new Error('pin must be 4 digits');
    },
  });
  setHandler(submitOtpUpdate, (otp) => authorize({ otp }), {
    validator: (otp) => {
      if (state.status !== 'awaiting_otp' || authorizing) throw new Error(`no OTP is expected in state ${state.status}`);
      if (typeof otp !== 'string' || !/^\d{4,8}$/.test(otp)) throw new Error('otp must be 4 to 8 digits');
    },
  });

  upsertSearchAttributes(paymentSearchAttributes({ flow: 'card', reference: input.transactionRef, amount: input.amount, currency: input.currency, status: 'charging' }));
  try {
    const step = await once.chargeCard(input);
    state.authUrl = step.authUrl;
    fromService(step.transactionStatus);
  } catch (err) {
    const failure = failureOf(err);
    if (failure?.type === 'BadRequest' || failure?.type === 'InvalidRequest' || failure?.type === 'Unauthorized') {
      setStatus('failed', failure.message);
      return state;
    }
    setStatus('confirming', failure?.message); // unknown outcome: verify before anything else
  }

  // Each waiting step ends by moving on, or by its timeout.
  const waits: [CardPaymentStatus, number][] = [
    ['awaiting_pin', input.pinTimeoutMs ?? 5 * 60_000],
    ['awaiting_otp', input.otpTimeoutMs ?? 5 * 60_000],
  ];
  for (;;) {
    const current = state.status;
    const wait = waits.find(([s]) => s === current);
    if (wait) {
      const moved = await condition(() => (state.status !== current && !authorizing) || webhook !== undefined, wait[1]);
      if (!moved && !authorizing) {
        setStatus('expired', `no ${current === 'awaiting_pin' ? 'PIN' : 'OTP'} before the timeout`);
        return state;
      }
      if (webhook) setStatus('confirming');
      continue;
    }
    if (current === 'awaiting_3ds') {
      await condition(() => webhook !== undefined, input.threeDsTimeoutMs ?? 15 * 60_000);
      setStatus('confirming');
      continue;
    }
    break;
  }
  if (state.status !== 'confirming') return state;

  await condition(() => webhook !== undefined, input.webhookGraceMs ?? 30_000);
  if (webhook) {
    state.confirmedBy = 'webhook';
    if (webhook.amount !== input.amount) setStatus('failed', `webhook amount ${webhook.amount} differs from ${input.amount}`);
    else setStatus('success');
    return state;
  }
  const verified = await reads.verifyTransaction(input.transactionRef);
  state.confirmedBy = 'verify';
  if (verified === 'Success') setStatus('success');
  else if (verified === 'Failed' || verified === 'Abandoned') setStatus(verified === 'Abandoned' ? 'expired' : 'failed', `verified as ${verified}`);
  else setStatus('unknown', `verified as ${verified}`);
  return state;
}
