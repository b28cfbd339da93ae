// The payment workflows' logic on the time-skipping server, with activities that behave like
// the service (a small in-memory model): default timeouts of minutes and monthly schedules pass
// in seconds; lost answers, verify-first and duplicate webhooks are scripted exactly.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { paymentWebhookSignal, paymentWorkflowId, type PaymentWebhookEvent } from '../../src/shared/payment-webhook';
import {
  cardPaymentStateQuery,
  submitCardUpdate,
  submitOtpUpdate,
  submitPinUpdate,
  type CardPaymentInput,
  type CardPaymentState,
} from '../../src/shared/card-payment';
import { checkoutStateQuery, type CheckoutInput } from '../../src/shared/checkout';
import { directPaymentStateQuery } from '../../src/shared/payment-common';
import { resolveOutcomeUpdate } from '../../src/shared/outcome';
import {
  cancelRecurringSignal,
  cycleReference,
  recurringStateQuery,
  recurringWorkflowId,
  type RecurringInput,
} from '../../src/shared/recurring';
import type { PaymentFlowActivities } from '../../src/activities/payment-common';
import { cardDisplay } from '../../src/shared/claim-check';
import type { TransactionLookup, VerifiedStatus } from '../../src/shared/payment-common';
import type { cardPaymentWorkflow } from '../../src/workflows/card-payment';
import type { ussdPaymentWorkflow } from '../../src/workflows/ussd-payment';
import type { checkoutWorkflow } from '../../src/workflows/checkout';
import type { recurringChargeWorkflow } from '../../src/workflows/recurring';
import { eventually } from '../support/polling';
import { chargeSuccessfulEvent } from '../support/flow-inputs';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { activitiesByWorkflow } from '../support/activities-by-workflow';

// One worker for the file: each flow's activities are those of the fake service its test registered
// under the flow's reference (startCard, startCheckout, … below).
const byFlow = activitiesByWorkflow<PaymentFlowActivities>([
  'chargeCard',
  'authorizeCard',
  'initiateUssd',
  'initiateCheckout',
  'chargeToken',
  'cancelToken',
  'cancelTokenAnswered',
  'lookupTransaction',
]);
const TASK_QUEUE = `pay-ts-${randomUUID()}`;
const env = useTimeSkippingEnv({ worker: { taskQueue: TASK_QUEUE, activities: () => byFlow.activities } });

const refused = (message: string) => ApplicationFailure.create({ type: 'BadRequest', message, nonRetryable: true });
const lost = (what: string) =>
  ApplicationFailure.create({ type: 'OutcomeUnknown', message: `${what}: connection reset`, nonRetryable: true });

/** The service as the flows see it: transactions by reference, card steps, token charges. */
function fakeService() {
  const tx = new Map<string, { status: VerifiedStatus; amount: number; step?: 'pin' | 'otp' | '3ds' }>();
  const tokenCharges: string[] = [];
  const lookups: string[] = [];
  const cancelled: string[] = [];
  const script: {
    loseNextPinAnswer?: boolean;
    loseNextCardChargeAnswer?: boolean;
    loseChargeAnswerFor?: string;
    refuseChargeFor?: string;
    sealedGone?: Set<string>;
    dieDuringCharge?: Promise<void>;
    /** A5 answers 400 'Recurring Payment was not cancelled' this many times (the activity reads it as a refusal). */
    refuseCancels?: number;
  } = {};
  const lookupTimes: number[] = [];
  const charges: string[] = [];
  const activities: Partial<PaymentFlowActivities> = {
    async chargeCard(input) {
      // A handle whose record expired: the real activity fails before sending anything.
      if (script.sealedGone?.has(input.card.handle))
        throw ApplicationFailure.create({
          type: 'SecretUnavailable',
          message: 'the sealed card is no longer available',
          nonRetryable: true,
        });
      charges.push(input.card.handle);
      // The workflow sees the card only as a claim-check handle and its display data.
      const step = input.card.last4 === '4444' ? 'pin' : input.card.last4 === '1096' ? '3ds' : 'otp';
      tx.set(input.transactionRef, { status: 'Pending', amount: input.amount, step });
      // A worker that died mid-call: no answer and no heartbeat from here on.
      if (script.dieDuringCharge) await script.dieDuringCharge;
      if (script.loseNextCardChargeAnswer) {
        script.loseNextCardChargeAnswer = false;
        throw lost('charge card');
      }
      return {
        transactionStatus: step === 'pin' ? 'ValidatePin' : step === '3ds' ? 'ThreeDSecure' : 'ValidateOTP',
        authUrl: step === '3ds' ? 'https://3ds.example/x' : undefined,
      };
    },
    async authorizeCard(ref, step, handle) {
      if (script.sealedGone?.has(handle))
        throw ApplicationFailure.create({
          type: 'SecretUnavailable',
          message: `the sealed ${step} is no longer available`,
          nonRetryable: true,
        });
      const t = tx.get(ref)!;
      if (step === 'pin') {
        if (t.step !== 'pin') throw refused('otp is required');
        t.step = 'otp';
        if (script.loseNextPinAnswer) {
          script.loseNextPinAnswer = false;
          throw lost('authorize card payment');
        }
        return { transactionStatus: 'ValidateOTP' };
      }
      if (t.step !== 'otp') throw refused('pin is required');
      t.status = 'Success';
      t.step = undefined;
      return { transactionStatus: 'Success' };
    },
    async initiateUssd(input) {
      tx.set(input.transactionRef, { status: 'Pending', amount: input.amount });
      return {
        ussdCode: '*058*000*123456#',
        expiresAt: new Date((await env.currentTimeMs()) + 10 * 60_000).toISOString(),
      };
    },
    async initiateCheckout(input) {
      tx.set(input.transactionRef, { status: 'Pending', amount: input.amount });
      return { checkoutUrl: `https://pay.example/checkout/${input.transactionRef}` };
    },
    async chargeToken(req) {
      if (tx.has(req.reference)) throw refused('Duplicate transaction reference');
      if (script.refuseChargeFor === req.reference) throw refused('Insufficient funds');
      tokenCharges.push(req.reference);
      tx.set(req.reference, { status: 'Success', amount: req.amount });
      if (script.loseChargeAnswerFor === req.reference) throw lost('charge token');
      return { transactionStatus: 'Success' };
    },
    async cancelToken(tokenId) {
      return (await this.cancelTokenAnswered!(tokenId)).cancelled;
    },
    async cancelTokenAnswered(tokenId) {
      cancelled.push(tokenId);
      if (script.refuseCancels) {
        script.refuseCancels -= 1;
        return { cancelled: false, refusal: 'Recurring Payment was not cancelled' };
      }
      return { cancelled: true };
    },
    async lookupTransaction(ref): Promise<TransactionLookup> {
      lookups.push(ref);
      lookupTimes.push(await env.currentTimeMs());
      const t = tx.get(ref);
      return t ? { found: true, status: t.status, amount: t.amount, currency: 'NGN' } : { found: false };
    },
  };
  /** The payer paid at the service (its record says Success), as before a real charge_successful. */
  const pay = (ref: string, amount: number) => tx.set(ref, { status: 'Success', amount });
  return { activities, tx, tokenCharges, lookups, lookupTimes, cancelled, script, charges, pay };
}

type FakeService = ReturnType<typeof fakeService>;

const webhook = (ref: string, amount: number, over: Partial<PaymentWebhookEvent> = {}) =>
  chargeSuccessfulEvent(ref, { amount, gatewayRef: `${ref}_GW`, ...over });
const card = (number: string, over: Partial<CardPaymentInput> = {}): CardPaymentInput => ({
  transactionRef: `ts-card-${randomUUID()}`,
  amount: 100_000,
  currency: 'NGN',
  card: { handle: sealedHandle(), ...cardDisplay(number) },
  customer: { name: 'Ada', email: 'ada@example.com' },
  ...over,
});
/** A well-formed claim-check handle: the fake activities never open it. */
const sealedHandle = () => `cc_${randomUUID().replace(/-/g, '').slice(0, 22)}`;
/** Reads until `ok`, the server's clock moved on half a second between reads (settle pauses and grace periods skipped, not waited). */
const until = <S>(read: () => Promise<S>, ok: (s: S) => boolean): Promise<S> =>
  eventually(read, ok, { attempts: 200, pause: () => env.sleep(500), description: 'the state', ignoreErrors: true });
const untilStatus = <S extends { status: string }>(read: () => Promise<S>, status: S['status']): Promise<S> =>
  until(read, (s) => s.status === status);
/** Runs `fn` with a fresh fake service. */
const withService = <T>(fn: (service: FakeService) => Promise<T>): Promise<T> => fn(fakeService());
/** A 10 000 checkout with a fresh reference. */
const checkoutInput = (): CheckoutInput => ({
  transactionRef: `ts-co-${randomUUID()}`,
  amount: 10_000,
  currency: 'NGN',
  email: 'a@example.com',
});
/** The flow's result matches `status`, settled by verify, with `reason` in its reason. */
const endsVerified = async (handle: { result(): Promise<unknown> }, status: string, reason: string) =>
  expect(await handle.result()).toMatchObject({
    status,
    confirmedBy: 'verify',
    reason: expect.stringContaining(reason),
  });
/** A plan's first payment (its checkout): paid at the service once open, and its webhook (`over` on top) signalled. */
async function payFirstCycle(service: FakeService, planRef: string, over: Partial<PaymentWebhookEvent> = {}) {
  const first = env.client.workflow.getHandle(paymentWorkflowId(cycleReference(planRef, 1)));
  await untilStatus(() => first.query(checkoutStateQuery), 'open');
  service.pay(cycleReference(planRef, 1), 90_000);
  await first.signal(paymentWebhookSignal, webhook(cycleReference(planRef, 1), 90_000, over));
}
/** A 4242… card payment (`over` on top), started and awaiting its OTP. */
async function cardAwaitingOtp(service: FakeService, over: Partial<CardPaymentInput> = {}) {
  const i = card('4242424242424242', over);
  const handle = await startCard(service, i);
  await untilStatus(() => handle.query(cardPaymentStateQuery), 'awaiting_otp');
  return { i, handle };
}
/** The flows named after `ref` (a payment, a plan and its cycles) get `service`'s activities. */
const served = (service: FakeService, ref: string) => byFlow.script(ref, service.activities);
const startCard = (service: FakeService, i: CardPaymentInput) =>
  env.client.workflow.start<typeof cardPaymentWorkflow>('cardPaymentWorkflow', {
    workflowId: paymentWorkflowId(served(service, i.transactionRef)),
    taskQueue: TASK_QUEUE,
    args: [i],
  });
const startCheckout = (service: FakeService, i: CheckoutInput) =>
  env.client.workflow.start<typeof checkoutWorkflow>('checkoutWorkflow', {
    workflowId: paymentWorkflowId(served(service, i.transactionRef)),
    taskQueue: TASK_QUEUE,
    args: [i],
  });
/** A 50 000 USSD payment through bank 058 for `ref`. */
const startUssd = (service: FakeService, ref: string) =>
  env.client.workflow.start<typeof ussdPaymentWorkflow>('ussdPaymentWorkflow', {
    workflowId: paymentWorkflowId(served(service, ref)),
    taskQueue: TASK_QUEUE,
    args: [
      {
        transactionRef: ref,
        amount: 50_000,
        currency: 'NGN',
        bankCode: '058',
        customer: { name: 'A', email: 'a@example.com' },
      },
    ],
  });
const startRecurring = (service: FakeService, input: RecurringInput) =>
  env.client.workflow.start<typeof recurringChargeWorkflow>('recurringChargeWorkflow', {
    workflowId: recurringWorkflowId(served(service, input.planRef)),
    taskQueue: TASK_QUEUE,
    args: [input],
  });

it('no PIN within the default 5 minutes: expired, in seconds', async () => {
  await withService(async (service) => {
    const i = card('5555555555554444');
    const before = await env.currentTimeMs();
    const handle = await startCard(service, i);
    expect(await handle.result()).toMatchObject({
      status: 'expired',
      confirmedBy: 'verify',
      reason: 'no PIN within 300000 ms',
    });
    expect((await env.currentTimeMs()) - before).toBeGreaterThanOrEqual(300_000);
    expect(service.lookups).toEqual([i.transactionRef]); // the deadline was checked with the service, not assumed
  });
});

it('a worker that dies during B1 is noticed by the heartbeat timeout in seconds: the requery starts long before the 60 s start-to-close, and B1 is not sent again', async () => {
  const service = fakeService();
  let revive = () => {};
  service.script.dieDuringCharge = new Promise<void>((r) => (revive = r));
  try {
    const i = card('4242424242424242', { webhookGraceMs: 1_000 });
    const started = await env.currentTimeMs();
    const handle = await startCard(service, i);
    // The activity holds the task (no time skipping meanwhile): the heartbeat timeout passes in real time.
    const lookups = await eventually(
      () => service.lookupTimes.length,
      (n) => n > 0,
      { timeoutMs: 30_000, description: 'the lookup after the heartbeat timeout', returnLastOnTimeout: true },
    );
    expect(lookups).toBeGreaterThan(0);
    // Heartbeat timeout (10 s) + the settle pause (2 s), well under the 60 s start-to-close.
    expect(service.lookupTimes[0] - started).toBeLessThan(30_000);
    revive();
    // The charge landed but its step is unknown to us, and verify says Pending: parked, never sent again.
    await untilStatus(() => handle.query(cardPaymentStateQuery), 'outcome_unknown');
    expect(service.charges).toHaveLength(1);
    // A parked flow would go on verifying on its backoff (24 h of it) under the next tests' skipped time.
    await handle.terminate('test over: parked as expected');
  } finally {
    revive();
  }
});

it("a parked outcome_unknown keeps verifying on a backoff and ends with the service's answer when it comes", async () => {
  await withService(async (service) => {
    const { i, handle } = await cardAwaitingOtp(service, { webhookGraceMs: 1_000 });
    await handle.signal(paymentWebhookSignal, webhook(i.transactionRef, i.amount));
    await untilStatus(() => handle.query(cardPaymentStateQuery), 'outcome_unknown');
    const readsWhileParked = service.lookups.length;
    service.pay(i.transactionRef, i.amount); // the service's record catches up
    await endsVerified(handle, 'success', 'settled by verify');
    expect(service.lookups.length).toBeGreaterThan(readsWhileParked);
  });
});

describe('a Temporal cancel never ends a payment "cancelled" while money may have moved', () => {
  it('paid at the service before the cancel: the flow ends success, not cancelled', async () => {
    await withService(async (service) => {
      const { i, handle } = await cardAwaitingOtp(service);
      service.pay(i.transactionRef, i.amount);
      await handle.cancel();
      await endsVerified(handle, 'success', 'cancelled by the caller');
    });
  });

  it('nothing at the service: cancelled, after verify said so', async () => {
    await withService(async (service) => {
      const { i, handle } = await cardAwaitingOtp(service);
      service.tx.delete(i.transactionRef);
      const before = service.lookups.length;
      await handle.cancel();
      expect(await handle.result()).toMatchObject({
        status: 'cancelled',
        reason: expect.stringContaining('nothing was paid'),
      });
      expect(service.lookups.length).toBeGreaterThan(before);
    });
  });

  it('still pending at the service: parked as outcome_unknown until the service settles it', async () => {
    await withService(async (service) => {
      const { i, handle } = await cardAwaitingOtp(service);
      await handle.cancel();
      await untilStatus(() => handle.query(cardPaymentStateQuery), 'outcome_unknown');
      service.tx.set(i.transactionRef, { status: 'Failed', amount: i.amount });
      expect(await handle.result()).toMatchObject({ status: 'failed', confirmedBy: 'verify' });
    });
  });
});

it('deadlines verify first: a payment the payer completed elsewhere (no webhook reached us) is a success, not expired', async () => {
  await withService(async (service) => {
    const { i, handle } = await cardAwaitingOtp(service, { otpTimeoutMs: 60_000, webhookGraceMs: 5_000 });
    service.pay(i.transactionRef, i.amount); // completed at the service; its webhook was lost
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'verify' });
  });
});

describe('sealed card data that expired before use (claim check)', () => {
  it('a card that expired before B1 was sent: the flow asks for it again (awaiting_card), then charges with the new one; nothing was sent with the old', async () => {
    const service = fakeService();
    const i = card('5555555555554444');
    service.script.sealedGone = new Set([i.card.handle]);
    const handle = await startCard(service, i);
    expect(await untilStatus(() => handle.query(cardPaymentStateQuery), 'awaiting_card')).toMatchObject({
      reason: expect.stringContaining('submit the card again'),
      card: { last4: '4444' },
    });
    expect(service.lookups).toHaveLength(0); // nothing was sent: nothing to verify
    const again = { handle: sealedHandle(), ...cardDisplay('5555555555554444') };
    expect(await handle.executeUpdate(submitCardUpdate, { args: [again] })).toMatchObject({ status: 'awaiting_pin' });
    expect(service.charges).toEqual([again.handle]);
    // A second card is refused by the validator: the flow is no longer waiting for one.
    await expect(
      handle.executeUpdate(submitCardUpdate, {
        args: [{ handle: sealedHandle(), ...cardDisplay('5555555555554444') }],
      }),
    ).rejects.toThrow();
    await handle.terminate('done');
  });

  it('no card again within the card timeout: expired with the reason, and no charge was ever sent', async () => {
    const service = fakeService();
    const i = card('5555555555554444', { cardTimeoutMs: 600_000 });
    service.script.sealedGone = new Set([i.card.handle]);
    const handle = await startCard(service, i);
    expect(await handle.result()).toMatchObject({
      status: 'expired',
      reason: 'the card was not submitted again within 600000 ms',
    });
    expect(service.charges).toHaveLength(0);
  });

  it('a PIN whose sealed record expired: the Update fails SecretUnavailable ("send it again"), the flow keeps waiting, and a fresh PIN goes on', async () => {
    const service = fakeService();
    const gone = sealedHandle();
    service.script.sealedGone = new Set([gone]);
    const i = card('5555555555554444');
    const handle = await startCard(service, i);
    await untilStatus(() => handle.query(cardPaymentStateQuery), 'awaiting_pin');
    const err = await handle.executeUpdate(submitPinUpdate, { args: [gone] }).catch((e: Error) => e);
    expect((err as Error & { cause?: ApplicationFailure }).cause).toMatchObject({
      type: 'SecretUnavailable',
      message: expect.stringContaining('send it again'),
    });
    expect(await handle.query(cardPaymentStateQuery)).toMatchObject({ status: 'awaiting_pin', refusedCodes: 0 });
    expect(service.lookups).toHaveLength(0);
    // A raw PIN (not a handle) is refused by the validator.
    await expect(handle.executeUpdate(submitPinUpdate, { args: ['1234'] })).rejects.toMatchObject({
      cause: { message: expect.stringContaining('must be sealed') },
    });
    expect((await handle.executeUpdate(submitPinUpdate, { args: [sealedHandle()] })).status).toBe('awaiting_otp');
    await handle.terminate('done');
  });
});

it("B1's answer lost and verify says Pending: never failed; the flow keeps verifying (parked) and ends with the service's answer", async () => {
  await withService(async (service) => {
    service.script.loseNextCardChargeAnswer = true;
    const i = card('4242424242424242', { webhookGraceMs: 1_000 });
    const handle = await startCard(service, i);
    const parked = await untilStatus(() => handle.query(cardPaymentStateQuery), 'outcome_unknown');
    expect(parked.reason).toContain("the charge's answer was lost");
    const readsWhileParked = service.lookups.length;
    service.pay(i.transactionRef, i.amount); // the payer completed it at the service
    await endsVerified(handle, 'success', 'settled by verify');
    expect(service.lookups.length).toBeGreaterThan(readsWhileParked);
    expect(service.charges).toHaveLength(1); // B1 was never sent again
  });
});

it("B1's answer lost, Pending, and the service then fails it: failed only on the service's word", async () => {
  await withService(async (service) => {
    service.script.loseNextCardChargeAnswer = true;
    const i = card('4242424242424242', { webhookGraceMs: 1_000 });
    const handle = await startCard(service, i);
    await untilStatus(() => handle.query(cardPaymentStateQuery), 'outcome_unknown');
    service.tx.set(i.transactionRef, { status: 'Abandoned', amount: i.amount });
    await endsVerified(handle, 'expired', 'verified as Abandoned');
    expect(service.charges).toHaveLength(1);
  });
});

it('a PIN whose answer is lost: verify says pending; the flow then takes the PIN again or the OTP, and completes', async () => {
  const service = fakeService();
  service.script.loseNextPinAnswer = true;
  const i = card('5555555555554444', { webhookGraceMs: 1_000 });
  const handle = await startCard(service, i);
  await untilStatus(() => handle.query(cardPaymentStateQuery), 'awaiting_pin');
  const err = await handle.executeUpdate(submitPinUpdate, { args: [sealedHandle()] }).catch((e: Error) => e);
  expect((err as Error & { cause?: ApplicationFailure }).cause).toMatchObject({ type: 'OutcomeUnknown' });
  expect(service.lookups).toContain(i.transactionRef);
  expect(await handle.query(cardPaymentStateQuery)).toMatchObject({ status: 'awaiting_pin', expects: 'pin_or_otp' });
  expect((await handle.executeUpdate(submitOtpUpdate, { args: [sealedHandle()] })).status).toBe('confirming');
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'verify' });
});

it('3DS never completed: requeried every minute, then expired after the default 15 minutes', async () => {
  await withService(async (service) => {
    const i = card('5200000000001096');
    const handle = await startCard(service, i);
    expect(await handle.result()).toMatchObject({
      status: 'expired',
      confirmedBy: 'verify',
      reason: '3DS not completed within 900000 ms',
    });
    const polls = service.lookups.filter((r) => r === i.transactionRef).length;
    expect(polls).toBeGreaterThanOrEqual(15); // one a minute, plus the final verify
    expect(polls).toBeLessThanOrEqual(17);
  });
});

it('the same webhook signalled twice (a receiver that forgot it) is processed once, and verified; a record for another amount does not make a success', async () => {
  await withService(async (service) => {
    const { i, handle } = await cardAwaitingOtp(service);
    service.pay(i.transactionRef, i.amount);
    await handle.signal(paymentWebhookSignal, webhook(i.transactionRef, i.amount));
    await handle.signal(paymentWebhookSignal, webhook(i.transactionRef, 1)); // a later, different delivery: ignored
    const final: CardPaymentState = await handle.result();
    expect(final).toMatchObject({ status: 'success', confirmedBy: 'webhook', webhooksReceived: 2 });
    // The webhook woke the flow; verify confirmed it. Verify is a local activity: when the second
    // signal lands while its workflow task is open, the server refuses that task's completion and
    // the read runs once more in the next one (a read, never a send).
    expect(service.lookups.length).toBeGreaterThanOrEqual(1);
    expect(service.lookups.length).toBeLessThanOrEqual(2);
    expect(new Set(service.lookups)).toEqual(new Set([i.transactionRef]));

    const j = card('4242424242424242');
    const other = await startCard(service, j);
    await untilStatus(() => other.query(cardPaymentStateQuery), 'awaiting_otp');
    service.pay(j.transactionRef, 5);
    await other.signal(paymentWebhookSignal, webhook(j.transactionRef, j.amount));
    expect(await other.result()).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('amount 5 differs from 100000'),
    });
  });
});

it('webhooks are hints: a charge_successful signalled straight into Temporal with no payment at the service does not make a success', async () => {
  await withService(async (service) => {
    const { i, handle } = await cardAwaitingOtp(service, { webhookGraceMs: 1_000 });
    // The service's record stays Pending: nobody paid.
    await handle.signal(paymentWebhookSignal, webhook(i.transactionRef, i.amount));
    // Not a success, and not final either: parked as outcome_unknown, visible by search attribute.
    const parked = await untilStatus(() => handle.query(cardPaymentStateQuery), 'outcome_unknown');
    expect(parked.reason).toContain('still shows the transaction as Pending');
    expect((await handle.describe()).searchAttributes.PaymentStatus).toEqual(['outcome_unknown']);
    expect(service.lookups.filter((r) => r === i.transactionRef).length).toBeGreaterThanOrEqual(3); // read again while the record might lag
    // An operator who reconciled it resolves it; a malformed resolution is refused.
    await expect(
      handle.executeUpdate(resolveOutcomeUpdate, {
        args: [{ outcome: 'paid', reason: 'x', operator: 'ops@merchant' }],
      }),
    ).rejects.toMatchObject({ cause: { message: expect.stringContaining('outcome must be one of success, failed') } });
    await expect(
      handle.executeUpdate(resolveOutcomeUpdate, {
        args: [{ outcome: 'failed', reason: '', operator: 'ops@merchant' }],
      }),
    ).rejects.toMatchObject({ cause: { message: expect.stringContaining('reason is required') } });
    await handle.executeUpdate(resolveOutcomeUpdate, {
      args: [{ outcome: 'failed', reason: 'settlement report: no such payment', operator: 'ops@merchant' }],
    });
    const final: CardPaymentState = await handle.result();
    expect(final).toMatchObject({
      status: 'failed',
      resolution: { outcome: 'failed', operator: 'ops@merchant', reason: 'settlement report: no such payment' },
    });

    // For a reference the service does not know at all (a forged signal to a USSD flow that never reached it): unknown, never success.
    const ref = `ts-forged-${randomUUID()}`;
    service.script.refuseChargeFor = undefined;
    const checkout = await startCheckout(service, {
      transactionRef: ref,
      amount: 10_000,
      currency: 'NGN',
      email: 'a@example.com',
      webhookGraceMs: 1_000,
    });
    await untilStatus(() => checkout.query(checkoutStateQuery), 'open');
    service.tx.delete(ref);
    await checkout.signal(paymentWebhookSignal, webhook(ref, 10_000));
    // Parked, then the service's "does not know the reference" settles it: nothing was paid.
    await endsVerified(checkout, 'failed', 'does not know the reference');
  });
});

it('USSD nobody dials: the flow waits until expiresAt (10 minutes), verifies, and ends expired', async () => {
  await withService(async (service) => {
    const ref = `ts-ussd-${randomUUID()}`;
    const before = await env.currentTimeMs();
    const handle = await startUssd(service, ref);
    const final = await handle.result();
    expect(final).toMatchObject({ status: 'expired', confirmedBy: 'verify', ussdCode: '*058*000*123456#' });
    expect((await env.currentTimeMs()) - before).toBeGreaterThanOrEqual(10 * 60_000);
  });
});

it('recurring: 30 monthly cycles across continue-as-new; a lost A4 answer is verified, a cycle already charged is not charged again, a refused one is recorded', async () => {
  await withService(async (service) => {
    const planRef = `tsplan-${randomUUID().slice(0, 8)}`;
    service.script.loseChargeAnswerFor = cycleReference(planRef, 5);
    service.script.refuseChargeFor = cycleReference(planRef, 9);
    service.tx.set(cycleReference(planRef, 7), { status: 'Success', amount: 90_000 }); // charged by an earlier run of cycle 7
    const input: RecurringInput = {
      planRef,
      amount: 90_000,
      currency: 'NGN',
      email: 'ada@example.com',
      intervalMs: 30 * 24 * 3600_000,
      maxCycles: 30,
      cyclesPerRun: 12,
      webhookGraceMs: 1_000,
    };
    const handle = await startRecurring(service, input);
    await payFirstCycle(service, planRef, { isRecurring: true, tokenId: 'AUTH_000000000001' });
    const final = await handle.result();
    expect(final).toMatchObject({ status: 'completed', cycle: 30, tokenId: 'AUTH_000000000001' });
    expect(final.recentCycles).toHaveLength(12);
    expect(new Set(service.tokenCharges).size).toBe(service.tokenCharges.length); // no reference charged twice
    expect(service.tokenCharges).not.toContain(cycleReference(planRef, 7));
    expect(service.tokenCharges).toHaveLength(27); // cycles 2..30 but 7 (found charged) and 9 (refused)
    const byRef = async (n: number) =>
      env.client.workflow.getHandle(paymentWorkflowId(cycleReference(planRef, n))).result();
    expect(await byRef(5)).toMatchObject({ status: 'success', charged: true, confirmedBy: 'verify' });
    expect(await byRef(7)).toMatchObject({ status: 'success', charged: false });
    expect(await byRef(9)).toMatchObject({ status: 'failed', reason: expect.stringContaining('Insufficient funds') });
    const desc = await handle.describe();
    expect(desc.runId).not.toBe(desc.raw.workflowExecutionInfo?.firstRunId);
    expect(Number(desc.raw.workflowExecutionInfo?.historyLength)).toBeLessThan(300);
  });
});

it('recurring cancel: no further charge, the token is cancelled with A5', async () => {
  await withService(async (service) => {
    const planRef = `tscancel-${randomUUID().slice(0, 8)}`;
    const input: RecurringInput = {
      planRef,
      amount: 90_000,
      currency: 'NGN',
      email: 'ada@example.com',
      intervalMs: 24 * 3600_000,
      webhookGraceMs: 1_000,
    };
    const handle = await startRecurring(service, input);
    await payFirstCycle(service, planRef, { isRecurring: true, tokenId: 'AUTH_000000000002' });
    await untilStatus(() => handle.query(recurringStateQuery), 'active');
    await handle.signal(cancelRecurringSignal);
    expect(await handle.result()).toMatchObject({ status: 'cancelled', cycle: 1, reason: 'token cancelled (A5)' });
    expect(service.cancelled).toEqual(['AUTH_000000000002']);
    expect(service.tokenCharges).toHaveLength(0);
  });
});

describe("A5's 400 'Recurring Payment was not cancelled' never ends the plan cancelled on its own", () => {
  const startActivePlan = async (service: FakeService) => {
    const planRef = `tsa5-${randomUUID().slice(0, 8)}`;
    const handle = await startRecurring(service, {
      planRef,
      amount: 90_000,
      currency: 'NGN',
      email: 'ada@example.com',
      intervalMs: 24 * 3600_000,
      webhookGraceMs: 1_000,
    });
    await payFirstCycle(service, planRef, { isRecurring: true, tokenId: 'AUTH_000000000005' });
    await untilStatus(() => handle.query(recurringStateQuery), 'active');
    return handle;
  };

  it('refused once: A5 is asked again, and the token cancelled then is reported', async () => {
    await withService(async (service) => {
      service.script.refuseCancels = 1;
      const handle = await startActivePlan(service);
      await handle.signal(cancelRecurringSignal);
      expect(await handle.result()).toMatchObject({
        status: 'cancelled',
        reason: 'token cancelled (A5, asked again after a 400)',
      });
      expect(service.cancelled).toEqual(['AUTH_000000000005', 'AUTH_000000000005']);
      expect(service.tokenCharges).toHaveLength(0);
    });
  });

  it('refused twice: parked as outcome_unknown (PaymentStatus), no charge made, until an operator resolves it', async () => {
    await withService(async (service) => {
      service.script.refuseCancels = 2;
      const handle = await startActivePlan(service);
      await handle.signal(cancelRecurringSignal);
      await env.sleep(60_000); // past the pause before A5 is asked again
      const parked = await untilStatus(() => handle.query(recurringStateQuery), 'outcome_unknown');
      expect(parked.reason).toContain('the cancel (A5) was refused');
      expect((await handle.describe()).searchAttributes.PaymentStatus).toEqual(['outcome_unknown']);
      await expect(
        handle.executeUpdate(resolveOutcomeUpdate, { args: [{ outcome: 'success', reason: 'x', operator: 'o' }] }),
      ).rejects.toHaveProperty('cause.message', 'outcome must be one of cancelled, failed');
      await handle.executeUpdate(resolveOutcomeUpdate, {
        args: [{ outcome: 'cancelled', reason: 'token inactive in the dashboard', operator: 'ops@example.com' }],
      });
      expect(await handle.result()).toMatchObject({
        status: 'cancelled',
        resolution: { outcome: 'cancelled', operator: 'ops@example.com' },
      });
      expect(service.cancelled).toHaveLength(2);
      expect(service.tokenCharges).toHaveLength(0);
    });
  });
});

it('a checkout whose first payment brings no token fails the plan', async () => {
  await withService(async (service) => {
    const planRef = `tsnotoken-${randomUUID().slice(0, 8)}`;
    const handle = await startRecurring(service, {
      planRef,
      amount: 90_000,
      currency: 'NGN',
      email: 'ada@example.com',
      intervalMs: 3600_000,
    });
    await payFirstCycle(service, planRef);
    expect(await handle.result()).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('without a token_id'),
    });
  });
});

it('a checkout nobody pays: open for the default 30 minutes, then verified and expired', async () => {
  await withService(async (service) => {
    const i = checkoutInput();
    const handle = await startCheckout(service, i);
    expect(await handle.result()).toMatchObject({
      status: 'expired',
      confirmedBy: 'verify',
      reason: 'not paid within 1800000 ms',
    });
  });
});

/** How long after `since` the flow's last verify of `ref` ran (the one that found the payment). */
function verifiedWithin(service: FakeService, ref: string, since: number): number {
  const times = service.lookupTimes.filter((_, i) => service.lookups[i] === ref);
  expect(times.length).toBeGreaterThan(0);
  return times[times.length - 1]! - since;
}

describe('a webhook the service never delivered does not hold a paid payment until its expiry', () => {
  it('checkout paid, no webhook: verified within the first minute, success long before the 30-minute expiry', async () => {
    await withService(async (service) => {
      const i = checkoutInput();
      const handle = await startCheckout(service, i);
      await untilStatus(() => handle.query(checkoutStateQuery), 'open');
      const paidAt = await env.currentTimeMs();
      service.pay(i.transactionRef, 10_000);
      expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'verify', webhooksReceived: 0 });
      expect(verifiedWithin(service, i.transactionRef, paidAt)).toBeLessThan(2 * 60_000);
    });
  });

  it('USSD dialled, no webhook: verified within the first minute, success before the code expires', async () => {
    await withService(async (service) => {
      const ref = `ts-ussd-${randomUUID()}`;
      const handle = await startUssd(service, ref);
      await untilStatus(() => handle.query(directPaymentStateQuery), 'awaiting_payment');
      const paidAt = await env.currentTimeMs();
      service.pay(ref, 50_000);
      expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'verify' });
      expect(verifiedWithin(service, ref, paidAt)).toBeLessThan(2 * 60_000);
    });
  });
});
