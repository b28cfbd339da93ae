// Direct card payments end to end on the dev server: worker, sandbox over real HTTP, and the
// webhook receiver verifying the sandbox's signed E-1 before signalling the workflow.
import { createHmac, randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createLogger } from '../../src/logging/logger';
import { runServices, type RunningServices } from '../../src/stack/services';
import { createPaymentsWorker } from '../../src/workers/worker';
import { createActivities } from '../../src/activities';
import { getCardPaymentState, startCardPayment, submitOtp, submitPin, CardInputError } from '../../src/starters/payments';
import type { CardPaymentInput, CardPaymentState } from '../../src/shared/card';
import { SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import { LogCapture, testConfig, workflowBundle } from '../helpers/temporal';
import { recordHistory } from '../helpers/replay';

const capture = new LogCapture();
const logger = createLogger({ destination: capture });
const config = testConfig();
let services: RunningServices;

beforeAll(async () => {
  services = await runServices({ config, logger, workflowBundle: await workflowBundle() });
});
afterAll(() => services?.stop());

const input = (number: string, over: Partial<CardPaymentInput> = {}): CardPaymentInput => ({
  transactionRef: `card-${randomUUID()}`, amount: 500_000, currency: 'NGN', card: { number, cvv: '123', expiryMonth: '12', expiryYear: '29' },
  customer: { name: 'Ada Obi', email: 'ada@example.com' }, webhookGraceMs: 10_000, ...over,
});
const client = () => services.client;
const tq = () => config.temporal.taskQueue;
async function waitFor(ref: string, status: CardPaymentState['status']) {
  for (let i = 0; i < 100; i++) {
    const s = await getCardPaymentState(client(), ref).catch(() => undefined);
    if (s?.status === status) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${ref} never reached ${status}`);
}
const ledger = async (reference: string) =>
  ((await (await fetch(`${services.sandboxUrl}/__admin/ledger?reference=${reference}`)).json()) as { data: unknown[] }).data;

it('PIN then OTP: a wrong PIN is refused synchronously, then success confirmed by the webhook; no card data in history', async () => {
  const i = input(TEST_CARDS.pinThenOtp);
  const handle = await startCardPayment(client(), tq(), i);
  await waitFor(i.transactionRef, 'awaiting_pin');
  // An OTP in the PIN state is refused by the validator.
  await expect(submitOtp(client(), i.transactionRef, SANDBOX_OTP)).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
  const wrong = await submitPin(client(), i.transactionRef, '0000').catch((e: unknown) => e);
  expect(String((wrong as { cause?: unknown }).cause)).toContain('Invalid PIN');
  expect((await submitPin(client(), i.transactionRef, SANDBOX_PIN)).status).toBe('awaiting_otp');
  await submitOtp(client(), i.transactionRef, SANDBOX_OTP);
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook', webhooksReceived: 1 });
  expect(await ledger(i.transactionRef)).toHaveLength(1);
  const raw = JSON.stringify(await handle.fetchHistory());
  for (const secret of [TEST_CARDS.pinThenOtp, `"${SANDBOX_PIN}"`, `"${SANDBOX_OTP}"`]) expect(raw).not.toContain(secret);
  expect(capture.text).not.toContain(TEST_CARDS.pinThenOtp);
  await recordHistory(handle, 'card-pin-otp');
});

it('OTP only (below 7,500 NGN) completes', async () => {
  const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
  const handle = await startCardPayment(client(), tq(), i);
  await waitFor(i.transactionRef, 'awaiting_otp');
  await submitOtp(client(), i.transactionRef, SANDBOX_OTP);
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
});

it('3DS: waits while the payer completes auth_url, then the webhook confirms', async () => {
  const i = input(TEST_CARDS.threeDs);
  const handle = await startCardPayment(client(), tq(), i);
  const state = await waitFor(i.transactionRef, 'awaiting_3ds');
  expect(state.authUrl).toContain('/3ds/');
  await fetch(`${state.authUrl}/complete`, { method: 'POST', redirect: 'manual' });
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
});

it('an OTP after the timeout: the flow has ended as expired and the update is refused', async () => {
  const i = input(TEST_CARDS.otpOnly, { amount: 100_000, otpTimeoutMs: 1_500 });
  const handle = await startCardPayment(client(), tq(), i);
  expect(await handle.result()).toMatchObject({ status: 'expired', reason: 'no OTP before the timeout' });
  await expect(submitOtp(client(), i.transactionRef, SANDBOX_OTP)).rejects.toThrow();
  expect(await ledger(i.transactionRef)).toHaveLength(0);
});

it('a duplicate webhook is processed once; a forged one is refused and signals nothing', async () => {
  await fetch(`${services.sandboxUrl}/__admin/webhook-faults`, { method: 'POST', body: JSON.stringify({ kind: 'duplicate', count: 1 }) });
  const i = input(TEST_CARDS.otpOnly, { amount: 100_000, webhookGraceMs: 2_000 });
  const handle = await startCardPayment(client(), tq(), i);
  await waitFor(i.transactionRef, 'awaiting_otp');
  const forged = JSON.stringify({ Event: 'charge_successful', TransactionRef: i.transactionRef, Body: { amount: 1, transaction_ref: i.transactionRef, transaction_status: 'Success', currency: 'NGN', transaction_type: 'Card' } });
  const res = await fetch(`${services.webhookUrl}/webhooks`, { method: 'POST', body: forged, headers: { 'x-service-encrypted-body': createHmac('sha512', 'sandbox_sk_attacker_key').update(forged).digest('hex') } });
  expect(res.status).toBe(401);
  expect((await getCardPaymentState(client(), i.transactionRef)).webhooksReceived).toBe(0);
  await submitOtp(client(), i.transactionRef, SANDBOX_OTP);
  const final = await handle.result();
  expect(final).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
  expect(final.webhooksReceived).toBeLessThanOrEqual(1); // the receiver drops the second delivery
  expect(await ledger(i.transactionRef)).toHaveLength(1);
});

it('a webhook that arrives before the flow waits for it (paid at the service while the flow still waits for the OTP) confirms it', async () => {
  const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
  const handle = await startCardPayment(client(), tq(), i);
  await waitFor(i.transactionRef, 'awaiting_otp');
  // Pay directly at the service (as a second device would), so the webhook precedes our OTP step.
  await services.api.direct.authorizeCard({ transaction_reference: i.transactionRef, authorization: { otp: SANDBOX_OTP } } as never);
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'webhook' });
});

it('without a webhook the result is confirmed by verifying the transaction', async () => {
  await fetch(`${services.sandboxUrl}/__admin/webhook-faults`, { method: 'POST', body: JSON.stringify({ kind: 'fail', count: 1 }) }); // the next delivery fails; its retry comes 5 s later
  const i = input(TEST_CARDS.otpOnly, { amount: 100_000, webhookGraceMs: 500 });
  const handle = await startCardPayment(client(), tq(), i);
  await waitFor(i.transactionRef, 'awaiting_otp');
  await submitOtp(client(), i.transactionRef, SANDBOX_OTP);
  expect(await handle.result()).toMatchObject({ status: 'success', confirmedBy: 'verify' });
});

it('a worker restarted while the flow waits for the OTP: a new worker completes it', async () => {
  const cfg = testConfig({ TEMPORAL_TASK_QUEUE: `restart-${randomUUID()}` });
  const i = input(TEST_CARDS.otpOnly, { amount: 100_000 });
  const makeWorker = async () => {
    const connection = await NativeConnection.connect({ address: cfg.temporal.address });
    const worker = await createPaymentsWorker({ ...cfg.temporal, encryption: cfg.encryption, connection, workflowBundle: await workflowBundle(), activities: createActivities({ api: services.api, logger, config: cfg }) });
    return { worker, connection, run: worker.run() };
  };
  const first = await makeWorker();
  const handle = await startCardPayment(client(), cfg.temporal.taskQueue, i);
  for (let n = 0; n < 100 && (await getCardPaymentState(client(), i.transactionRef).catch(() => undefined))?.status !== 'awaiting_otp'; n++) await new Promise((r) => setTimeout(r, 100));
  first.worker.shutdown();
  await first.run;
  await first.connection.close();
  const second = await makeWorker();
  try {
    await submitOtp(client(), i.transactionRef, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success' });
  } finally {
    second.worker.shutdown();
    await second.run;
    await second.connection.close();
  }
});

it('the starter refuses bad input naming the field, without echoing card data', async () => {
  const err = await startCardPayment(client(), tq(), input('4242', { amount: 10.5 })).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(CardInputError);
  expect((err as CardInputError).issues.map((x) => x.field).sort()).toEqual(['amount', 'card.number']);
  expect((err as Error).message).not.toContain('4242');
});
