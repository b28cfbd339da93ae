// Direct card payments end to end on the dev server: worker, sandbox over real HTTP, and the
// webhook receiver verifying the sandbox's signed E-1 before signalling the workflow.
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { createHmac, randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { createLogger } from '../../src/logging/logger';
import { createPaymentsWorker } from '../../src/workers/worker';
import { createActivities } from '../../src/activities';
import { ClaimCheckStore } from '../../src/claim-check/store';
import { DuplicateReferenceError, waitForState } from '../../src/starters/payment-common';
import {
  getCardPaymentState,
  resubmitCard,
  startCardPayment,
  startCardPaymentForStep,
  submitOtp,
  submitPin,
  type CardPaymentRequest,
} from '../../src/starters/card-payment';
import type { AppConfig } from '../../src/config/config';
import { StarterInputError } from '../../src/starters/input-error';
import { resolveParkedFlow } from '../../src/starters/ops';
import type { CardPaymentState } from '../../src/shared/card-payment';
import { SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import { LogCapture, testConfig, useServices, workflowBundle } from '../support/stack';
import { recordHistory } from '../support/replay';
import { stepError } from './helpers';
import { signReturnUrl } from '../../src/config/return-links';
import { eventTypes, rawHistoryText } from '../support/history';

const capture = new LogCapture();
const logger = createLogger({ destination: capture });
// info level: the activities' own log lines are captured and scanned for card data.
const config = testConfig({ LOG_LEVEL: 'info' });
const env = useServices(config, logger);
afterEach(async () => {
  await env.admin.clearFaults();
  await env.admin.clearWebhookFaults();
});

const B1 = '/transaction/initiate/process-payment';
const B2 = '/transaction/payment/authorize';
const input = (number: string, over: Partial<CardPaymentRequest> = {}): CardPaymentRequest => ({
  transactionRef: `card-${randomUUID()}`,
  amount: 500_000,
  currency: 'NGN',
  card: { number, cvv: '123', expiryMonth: '12', expiryYear: '29' },
  customer: { name: 'Ada Obi', email: 'ada@example.com' },
  webhookGraceMs: 10_000,
  ...over,
});
/** B1/B2 answered Success: the flow confirms by verify at once; the webhook may still have come first. */
/** A payments worker of its own on `cfg`'s task queue, with the file's sandbox and claim-check store; its connection is the caller's to close. */
const paymentsWorkerFor = async (cfg: AppConfig) => {
  const connection = await NativeConnection.connect({ address: cfg.temporal.address });
  const worker = await createPaymentsWorker({
    ...cfg.temporal,
    encryption: cfg.encryption,
    connection,
    workflowBundle: await workflowBundle(),
    activities: createActivities({ api: env.services.api, logger, config: cfg, claimCheck: env.services.claimCheck }),
  });
  return { worker, connection };
};
/** The payer enters the OTP on another device: paid at the service, the flow is not told (only a webhook can wake it). */
const payOnAnotherDevice = (transactionRef: string) =>
  env.services.api.direct.authorizeCard({ transaction_reference: transactionRef, authorization: { otp: SANDBOX_OTP } });
const VERIFIED = expect.stringMatching(/^(verify|webhook)$/);
const client = () => env.services.client;
const starters = () => env.services.starters;
const waitFor = (ref: string, status: CardPaymentState['status']) =>
  waitForState(
    () => getCardPaymentState(starters(), ref),
    (s) => s.status === status,
  );

/** The activity types of a history's local-activity markers (core writes each marker's `data` as plain JSON). */
async function localActivityTypes(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = marker.details?.data?.payloads?.[0]?.data;
    return data
      ? [String((JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }).activity_type)]
      : ['?'];
  });
}

describe('direct card payments end to end on the dev server', () => {
  it('PIN then OTP: wrong-state and malformed codes refused by the validator, a wrong PIN refused by the service, then success by the webhook; no card data, PIN or OTP in history or logs', async () => {
    const i = input(TEST_CARDS.pinThenOtp);
    const handle = await startCardPayment(starters(), i);
    expect(await waitFor(i.transactionRef, 'awaiting_pin')).toMatchObject({ expects: 'pin' });

    // Refused by the validators: nothing reaches the service or the history.
    expect(await stepError(submitOtp(starters(), i.transactionRef, SANDBOX_OTP))).toMatchObject({
      kind: 'not_expected',
      message: expect.stringContaining('no OTP is expected'),
    });
    expect(await stepError(submitPin(starters(), i.transactionRef, '12a4'))).toMatchObject({
      kind: 'not_expected',
      message: 'pin must be 4 digits',
    });
    // Refused by the service: the caller gets the reason at once, the flow keeps waiting.
    const wrong = await stepError(submitPin(starters(), i.transactionRef, '0000'));
    expect(wrong).toMatchObject({
      kind: 'refused',
      message: expect.stringContaining('Invalid PIN'),
      details: { refusedCodes: 1, limit: 3 },
    });
    expect((await getCardPaymentState(starters(), i.transactionRef)).status).toBe('awaiting_pin');

    expect(await submitPin(starters(), i.transactionRef, SANDBOX_PIN)).toMatchObject({
      status: 'awaiting_otp',
      expects: 'otp',
    });
    expect((await submitOtp(starters(), i.transactionRef, SANDBOX_OTP)).status).toMatch(/^(confirming|success)$/);
    expect(await handle.result()).toMatchObject({
      status: 'success',
      confirmedBy: VERIFIED,
      refusedCodes: 1,
    });
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(1);
    expect(await env.admin.requests(i.transactionRef, B2)).toHaveLength(3); // wrong PIN, PIN, OTP: the refused ones never left

    // Only the three accepted Updates are in history; the validator's refusals left nothing.
    expect(
      (await eventTypes(handle)).filter((t) => t === 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED'),
    ).toHaveLength(3);
    const raw = await rawHistoryText(handle);
    expect(raw).toContain(i.transactionRef); // the scan does read payload bytes (search attributes are plaintext)
    for (const secret of [TEST_CARDS.pinThenOtp, `"${SANDBOX_PIN}"`, `"${SANDBOX_OTP}"`, '"0000"', '"cvv"'])
      expect(raw).not.toContain(secret);
    expect(capture.text).toContain(i.transactionRef); // the activities did log this payment...
    for (const secret of [TEST_CARDS.pinThenOtp, SANDBOX_OTP]) expect(capture.text).not.toContain(secret); // ...without card data or codes
    expect(JSON.stringify(await handle.query('cardPaymentState'))).not.toContain(TEST_CARDS.pinThenOtp);
    await recordHistory(handle, 'card-pin-otp');
  });

  it('OTP only (below 7,500 NGN) completes', async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    const handle = await startCardPayment(starters(), i);
    expect(await waitFor(i.transactionRef, 'awaiting_otp')).toMatchObject({ expects: 'otp' });
    await submitOtp(starters(), i.transactionRef, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: VERIFIED });
    expect(await env.admin.ledger(i.transactionRef)).toMatchObject([{ kind: 'card_charge', amount: 100_000 }]);
    // The final verify (or the record B2's activity read after its Success) is no local activity
    // while the OTP's handler runs beside the main steps: a marker recorded in one task but handed
    // over in the next when a query was answered meanwhile made replays of such histories
    // nondeterministic (src/workflows/steps/payment-confirmation.ts).
    // (The one local activity left is the event hand-over at the very end, after every Update.)
    expect(await localActivityTypes(handle)).toEqual(['emitMerchantEvent']);
    await recordHistory(handle, 'card-otp-only');
  });

  it("finishes on the service's answer without its webhook; the webhook that comes after the flow closed is acknowledged and starts nothing", async () => {
    // A grace of an hour: a flow that waited for the webhook would not end within the test.
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000, webhookGraceMs: 3_600_000 });
    await env.admin.webhookFault('hold'); // the service's E-1 waits at the sandbox
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    await submitOtp(starters(), i.transactionRef, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'verify', webhooksReceived: 0 });
    const flowRun = (await handle.describe()).runId;
    expect(await eventTypes(handle)).not.toContain('EVENT_TYPE_TIMER_FIRED'); // no deadline or grace ran out

    // Now the E-1 comes, after the flow closed: acknowledged, and no holder starts under the id.
    await env.admin.releaseWebhooks();
    await env.admin.settle();
    expect(await env.admin.webhooks(i.transactionRef)).toEqual([
      expect.objectContaining({ status: 200, acknowledged: true }),
    ]);
    const latest = await client().workflow.getHandle(paymentWorkflowId(i.transactionRef)).describe();
    expect(latest).toMatchObject({ type: 'cardPaymentWorkflow', runId: flowRun });
    expect(await getCardPaymentState(starters(), i.transactionRef)).toMatchObject({ status: 'success' });
    // A second copy (the receiver's in-memory dedupe lost in a restart) is acknowledged the same way.
    const body = JSON.stringify({
      Event: 'charge_successful',
      TransactionRef: i.transactionRef,
      Body: {
        amount: 100_000,
        transaction_ref: i.transactionRef,
        gateway_ref: `${i.transactionRef}_redelivered`,
        transaction_status: 'Success',
        email: 'ada@example.com',
        merchant_id: 'SBN1EBZEQ8',
        currency: 'NGN',
        transaction_type: 'Card',
        merchant_amount: 100_000,
        created_at: new Date().toISOString(),
        customer_mobile: null,
        meta: {},
        payment_information: { payment_type: 'card', pan: '506119******1234|12/29', card_type: 'verve' },
        is_recurring: false,
      },
    });
    const again = await fetch(`${env.services.webhookUrl}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-encrypted-body': createHmac('sha512', config.payments.secretKey).update(body).digest('hex'),
      },
      body,
    });
    expect(again.status).toBe(200);
    expect((await client().workflow.getHandle(paymentWorkflowId(i.transactionRef)).describe()).runId).toBe(flowRun);
    // The E-3 return page reads the payment's run (through a signed link; a bare reference gets a neutral page).
    const link = signReturnUrl(`${env.services.webhookUrl}/payments/return`, i.transactionRef, config.returnLinks);
    const page = await (await fetch(link)).text();
    expect(page).toContain('Status: success');
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(1);
  });

  it('3DS: waits while the payer completes auth_url; the webhook confirms; the E-3 redirect shows the state', async () => {
    const i = input(TEST_CARDS.threeDs, { redirectUrl: `${env.services.webhookUrl}/payments/return` });
    const { state, handle } = await startCardPaymentForStep(starters(), i); // the first step, at once
    expect(state).toMatchObject({ status: 'awaiting_3ds' });
    expect(state.authUrl).toContain('/3ds/');
    expect((await fetch(state.authUrl!)).status).toBe(200);
    const done = await fetch(`${state.authUrl}/complete`, { method: 'POST', redirect: 'manual' });
    expect(done.status).toBe(302);
    const back = done.headers.get('location')!;
    // The starter signed the return URL it built; the service appends the reference.
    const returned = new URL(back);
    expect(`${returned.origin}${returned.pathname}`).toBe(`${env.services.webhookUrl}/payments/return`);
    expect(returned.searchParams.getAll('reference')).toEqual([i.transactionRef, i.transactionRef]);
    expect(returned.searchParams.get('sig')).toMatch(/^[0-9a-f]{64}$/);
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
    expect(await (await fetch(back)).text()).toContain('Status: success');
  });

  it('3DS failed by the payer: no webhook comes; the requery while waiting finds it failed', async () => {
    const i = input(TEST_CARDS.threeDs, { threeDsPollMs: 300 });
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_3ds');
    await env.admin.pay3ds(i.transactionRef, 'fail');
    expect(await handle.result()).toMatchObject({
      status: 'failed',
      confirmedBy: 'verify',
      reason: expect.stringContaining('3DS authentication failed'),
    });
    await recordHistory(handle, 'card-3ds-failed');
  });

  it('a wrong OTP is refused and the flow keeps waiting; the third wrong code fails the payment', async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    expect(await stepError(submitOtp(starters(), i.transactionRef, '000000'))).toMatchObject({
      kind: 'refused',
      message: expect.stringContaining('Invalid OTP'),
      details: { refusedCodes: 1 },
    });
    expect(await stepError(submitOtp(starters(), i.transactionRef, '111111'))).toMatchObject({
      kind: 'refused',
      details: { refusedCodes: 2 },
    });
    expect((await getCardPaymentState(starters(), i.transactionRef)).status).toBe('awaiting_otp');
    expect(await stepError(submitOtp(starters(), i.transactionRef, '222222'))).toMatchObject({
      kind: 'ended',
      message: expect.stringContaining('too many wrong attempts'),
    });
    expect(await handle.result()).toMatchObject({
      status: 'failed',
      refusedCodes: 2,
      reason: expect.stringContaining('verified as Failed'),
    });
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(0);
  });

  it('an OTP after the timeout: the flow has ended as expired and the OTP is refused', async () => {
    // A short webhook grace: at the deadline nothing was paid, so verify decides without waiting it out.
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000, otpTimeoutMs: 1_500, webhookGraceMs: 300 });
    const handle = await startCardPayment(starters(), i);
    expect(await handle.result()).toMatchObject({ status: 'expired', reason: 'no OTP within 1500 ms' });
    expect(await stepError(submitOtp(starters(), i.transactionRef, SANDBOX_OTP))).toMatchObject({
      kind: expect.stringMatching(/^(ended|not_expected)$/),
    });
    expect(await env.admin.requests(i.transactionRef, B2)).toHaveLength(0);
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(0);
  });

  it('a duplicate webhook (the service delivers it twice) is processed once', async () => {
    await env.admin.webhookFault('duplicate');
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    // Paid at the service while the flow waits (the OTP entered on another device): only the webhook wakes it.
    await payOnAnotherDevice(i.transactionRef);
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
    await env.admin.settle();
    const deliveries = await env.admin.webhooks(i.transactionRef);
    expect(deliveries).toHaveLength(2); // both reached the receiver and were acknowledged...
    expect(deliveries.every((d) => d.status === 200)).toBe(true);
    expect(deliveries.filter((d) => d.duplicate)).toHaveLength(1);
    expect((await getCardPaymentState(starters(), i.transactionRef)).webhooksReceived).toBe(1); // ...one was signalled
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(1);
  });

  it('a forged webhook gets 401 and signals nothing; the flow goes on waiting for the OTP', async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    const forged = JSON.stringify({
      Event: 'charge_successful',
      TransactionRef: i.transactionRef,
      Body: {
        amount: 100_000,
        transaction_ref: i.transactionRef,
        gateway_ref: 'forged',
        transaction_status: 'Success',
        email: 'x@example.com',
        merchant_id: 'M',
        currency: 'NGN',
        transaction_type: 'Card',
        merchant_amount: 100_000,
        created_at: new Date().toISOString(),
        meta: {},
        is_recurring: false,
      },
    });
    const sign = (key: string) => createHmac('sha512', key).update(forged).digest('hex');
    for (const signature of [sign('sandbox_sk_attacker_key'), sign(config.payments.secretKey).slice(0, -2) + '00']) {
      const res = await fetch(`${env.services.webhookUrl}/webhooks`, {
        method: 'POST',
        body: forged,
        headers: { 'content-type': 'application/json', 'x-service-encrypted-body': signature },
      });
      expect(res.status).toBe(401);
    }
    expect(await getCardPaymentState(starters(), i.transactionRef)).toMatchObject({
      status: 'awaiting_otp',
      webhooksReceived: 0,
    });
    await submitOtp(starters(), i.transactionRef, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: VERIFIED });
  });

  it('a webhook that arrives before the flow waits for it: paid at the service (another device) while the flow waits for the OTP', async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    await payOnAnotherDevice(i.transactionRef);
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(1);
  });

  it("the OTP's answer is lost (connection dropped after processing): the webhook, there before the Update settles, confirms; B2 is not sent again", async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    await env.admin.fault({ method: 'POST', path: `^${B2}$`, kind: 'drop-after-processing', count: 1 });
    expect(await submitOtp(starters(), i.transactionRef, SANDBOX_OTP)).toMatchObject({
      status: expect.stringMatching(/^(confirming|success)$/),
    });
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
    expect(await env.admin.requests(i.transactionRef, B2)).toMatchObject([{ status: 'dropped' }]);
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(1);
    await recordHistory(handle, 'card-otp-answer-lost');
  });

  it('B1 dropped before processing: the CVV did not outlive the attempt, so once verify proves it never arrived the flow asks for the card again, sends it once more, and the payment completes once', async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    await env.admin.fault({ method: 'POST', path: `^${B1}$`, kind: 'drop-before-processing', count: 1 });
    const handle = await startCardPayment(starters(), i);
    expect(await waitFor(i.transactionRef, 'awaiting_card')).toMatchObject({
      reason: expect.stringContaining('submit the card again'),
    });
    expect((await env.admin.requests(i.transactionRef, B1)).map((r) => r.status)).toEqual(['reset']);
    expect(await resubmitCard(starters(), i.transactionRef, i.card)).toMatchObject({ status: 'awaiting_otp' });
    await submitOtp(starters(), i.transactionRef, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success' });
    expect((await env.admin.requests(i.transactionRef, B1)).map((r) => r.status)).toEqual(['reset', 200]);
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(1);
    await recordHistory(handle, 'card-charge-resent');
  }, 30_000);

  it('B1 dropped before processing, and the card not submitted again: the flow expires; nothing charged, nothing sent without the CVV', async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000, cardTimeoutMs: 1_000 });
    await env.admin.fault({ method: 'POST', path: `^${B1}$`, kind: 'drop-before-processing', count: 3 });
    const handle = await startCardPayment(starters(), i);
    expect(await handle.result()).toMatchObject({
      status: 'expired',
      reason: expect.stringContaining('the card was not submitted again'),
    });
    expect((await env.admin.requests(i.transactionRef, B1)).map((r) => r.status)).toEqual(['reset']);
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(0);
    await recordHistory(handle, 'card-charge-never-received');
  }, 30_000);

  it("B1's answer lost after processing: verify finds it pending, B1 is never sent again, and the payment is parked (never failed) until the service or an operator settles it", async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000, webhookGraceMs: 300 });
    await env.admin.fault({ method: 'POST', path: `^${B1}$`, kind: 'drop-after-processing', count: 1 });
    const handle = await startCardPayment(starters(), i);
    const parked = await waitFor(i.transactionRef, 'outcome_unknown');
    expect(parked.reason).toContain('verify still shows the transaction as Pending');
    expect((await client().workflow.getHandle(handle.workflowId).describe()).status.name).toBe('RUNNING');
    expect(await env.admin.requests(i.transactionRef, B1)).toMatchObject([{ status: 'dropped' }]);
    expect(await env.admin.ledger(i.transactionRef)).toHaveLength(0);
    // The operator settles it with the same Update (and `cli ops resolve`) as every parked flow.
    await resolveParkedFlow(starters(), handle.workflowId, {
      outcome: 'failed',
      reason: 'the service lapsed it (test)',
      operator: 'ops@example.com',
    });
    expect(await handle.result()).toMatchObject({
      status: 'failed',
      resolution: { outcome: 'failed', operator: 'ops@example.com' },
    });
    expect(await env.admin.requests(i.transactionRef, B1)).toHaveLength(1);
    // `cli ops resolve` on the closed flow, or on no flow, answers with our own message.
    const again = { outcome: 'success', reason: 'again', operator: 'ops@example.com' };
    await expect(resolveParkedFlow(starters(), handle.workflowId, again)).rejects.toThrow(
      `workflow ${handle.workflowId} is closed (COMPLETED, ended failed): only a running flow parked on an unknown outcome takes a resolution; nothing was changed`,
    );
    await expect(resolveParkedFlow(starters(), `payment-nope-${randomUUID()}`, again)).rejects.toThrow(
      /^no workflow payment-nope-.*: nothing to resolve/,
    );
  }, 30_000);

  it('without a webhook the result is confirmed by verifying the transaction', async () => {
    await env.admin.webhookFault('fail'); // the delivery fails; its retry comes 5 s later on the sandbox clock
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000, webhookGraceMs: 500 });
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    await submitOtp(starters(), i.transactionRef, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'verify', webhooksReceived: 0 });
  });

  it('pass_charge and USD are carried through: the payer pays amount + charge and the flow accepts it', async () => {
    const i = input(TEST_CARDS.otpOnly, { amount: 20_000, currency: 'USD', passCharge: true });
    const handle = await startCardPayment(starters(), i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    await submitOtp(starters(), i.transactionRef, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: VERIFIED, currency: 'USD' });
    const [entry] = await env.admin.ledger(i.transactionRef);
    expect(entry.amount).toBeGreaterThan(20_000); // amount + the sandbox's 1.2 % charge
    expect((await env.services.api.transactions.verify({ transaction_ref: i.transactionRef })).data).toMatchObject({
      transaction_currency_id: 'USD',
      merchant_amount: 20_000,
    });
  });

  it('a worker restarted while the flow waits for the OTP: a new worker completes it', async () => {
    const cfg = testConfig({ TEMPORAL_TASK_QUEUE: `restart-${randomUUID()}` });
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    const makeWorker = async () => {
      const { worker, connection } = await paymentsWorkerFor(cfg);
      return { worker, connection, run: worker.run() };
    };
    const first = await makeWorker();
    const handle = await startCardPayment({ ...starters(), taskQueue: cfg.temporal.taskQueue }, i);
    await waitFor(i.transactionRef, 'awaiting_otp');
    first.worker.shutdown();
    await first.run;
    await first.connection.close();
    expect(first.worker.getState()).toBe('STOPPED');
    const second = await makeWorker();
    try {
      expect((await submitOtp(starters(), i.transactionRef, SANDBOX_OTP)).status).toMatch(/^(confirming|success)$/);
      expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: VERIFIED });
      expect(await env.admin.ledger(i.transactionRef)).toHaveLength(1);
    } finally {
      second.worker.shutdown();
      await second.run;
      await second.connection.close();
    }
  });

  it('the sealed card expired before any worker sent B1 (worker down past the TTL): the flow asks for the card again, then completes; nothing was sent with the old one', async () => {
    const cfg = testConfig({ TEMPORAL_TASK_QUEUE: `expired-${randomUUID()}` });
    // The backend's store with a 1 s TTL; no worker polls the queue yet.
    const shortLived = await ClaimCheckStore.connect({
      databaseUrl: cfg.claimCheck.databaseUrl,
      keys: cfg.claimCheck.keys,
      ttlMs: 1_000,
    });
    const ctx = { ...starters(), taskQueue: cfg.temporal.taskQueue, claimCheck: shortLived };
    const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
    try {
      const handle = await startCardPayment(ctx, i);
      await new Promise((r) => setTimeout(r, 1_500));
      const { worker, connection } = await paymentsWorkerFor(cfg);
      await worker.runUntil(async () => {
        expect(await waitFor(i.transactionRef, 'awaiting_card')).toMatchObject({
          reason: expect.stringContaining('submit the card again'),
          card: { last4: TEST_CARDS.otpOnly.slice(-4) },
        });
        expect(await env.admin.requests(i.transactionRef, B1)).toHaveLength(0);
        expect(await resubmitCard(ctx, i.transactionRef, i.card)).toMatchObject({ status: 'awaiting_otp' });
        expect((await submitOtp(ctx, i.transactionRef, SANDBOX_OTP)).status).toMatch(/^(confirming|success)$/);
        expect(await handle.result()).toMatchObject({ status: 'success' });
      });
      await connection.close();
      expect(await env.admin.requests(i.transactionRef, B1)).toHaveLength(1);
      expect(await env.admin.ledger(i.transactionRef)).toHaveLength(1);
      expect(await rawHistoryText(handle)).not.toContain(TEST_CARDS.otpOnly);
      // Not waiting for a card any more: a card sent now is refused and its sealed record deleted.
      expect(await stepError(resubmitCard(ctx, i.transactionRef, i.card))).toMatchObject({
        kind: expect.stringMatching(/^(not_expected|ended)$/),
      });
    } finally {
      await shortLived.close();
    }
  }, 60_000);

  it('a declined card fails at once; a reference pays once; bad input names the field without echoing card data', async () => {
    const declined = input(TEST_CARDS.declined);
    expect((await startCardPaymentForStep(starters(), declined)).state).toMatchObject({
      status: 'failed',
      reason: expect.stringContaining('Card declined'),
    });
    await expect(
      startCardPayment(starters(), { ...input(TEST_CARDS.otpOnly), transactionRef: declined.transactionRef }),
    ).rejects.toBeInstanceOf(DuplicateReferenceError);

    const err = await startCardPayment(starters(), input('4242', { amount: 10.5 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StarterInputError);
    expect((err as StarterInputError).issues.map((x) => x.field).sort()).toEqual(['amount', 'card.number']);
    expect((err as Error).message).not.toContain('4242');
  });
});
