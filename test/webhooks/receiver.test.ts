// The webhook receiver against the real dev server and worker: signatures on the raw bytes,
// validation, routing by reference with signalWithStart, duplicates processed once.
import { createHmac, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { WorkerGroup } from '../../src/workers/worker-group';
import { createLogger } from '../../src/logging/logger';
import { closeServer } from '../../src/webhooks/receiver';
import { createTemporalClient } from '../../src/temporal/client';
import { createPaymentsWorker } from '../../src/workers/worker';
import { unmatchedWebhookQuery } from '../../src/shared/payment-webhook';
import type { VirtualAccountCreditOutcome } from '../../src/shared/virtual-account-credit';
import { createVirtualAccountCreditActivities } from '../../src/activities/virtual-account-credit';
import type { ClaimCheckStore } from '../../src/claim-check/store';
import { VirtualAccountCreditStore } from '../../src/virtual-accounts/credit-store';
import { PaymentsClient } from '../../src/api';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { eventually } from '../support/polling';
import { useRecordingMeter } from '../support/recording-meter';
import { LogCapture, testConfig, workflowBundle } from '../support/stack';
import { chargeSuccessfulBody, vaCreditBody, listenWebhookReceiver } from '../support/webhook-receiver';
import { withEventHandOver } from '../support/time-skipping';

const config = testConfig();
const key = config.payments.secretKey;
const capture = new LogCapture();
// What the receivers count (payflow_webhooks by kind and result), read before and after a step.
const meter = useRecordingMeter();
let client: Client;
let server: Server;
let url: string;
let worker: WorkerGroup;
let workerRun: Promise<void>;
let workerConnection: NativeConnection;
let vaCredits: VirtualAccountCreditStore;
let sandbox: Sandbox;
let api: PaymentsClient;

beforeAll(async () => {
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  ({ server, url } = await listenWebhookReceiver(config, client, { logger: createLogger({ destination: capture }) }));
  workerConnection = await NativeConnection.connect({ address: config.temporal.address });
  // The credit workflow's activities: the durable duplicate check and the confirmation by the filtered search (C5, a sandbox).
  vaCredits = await VirtualAccountCreditStore.connect({ databaseUrl: config.claimCheck.databaseUrl });
  sandbox = await startSandbox({ secretKeys: [key] });
  api = new PaymentsClient({ baseUrl: sandbox.url, secretKey: key, timeoutMs: 5_000 });
  const activities = createVirtualAccountCreditActivities({
    api,
    logger: createLogger({ destination: capture }),
    config,
    claimCheck: {} as ClaimCheckStore,
    vaCredits,
  });
  worker = await createPaymentsWorker({
    ...config.temporal,
    encryption: config.encryption,
    connection: workerConnection,
    activities: withEventHandOver(activities), // the inbox tells webhook.unmatched (a worker without NOTIFY_URL here)
    workflowBundle: await workflowBundle(),
  });
  workerRun = worker.run();
});

afterAll(async () => {
  await closeServer(server);
  worker.shutdown();
  await workerRun;
  await workerConnection.close();
  await vaCredits.close();
  await api.close();
  await sandbox.close();
  await client.connection.close();
});

const sign = (body: string | Buffer, k = key) => createHmac('sha512', k).update(body).digest('hex');

const paymentBody = (ref: string) => chargeSuccessfulBody(ref, { isRecurring: true });

const post = (body: string, headers: Record<string, string>) =>
  fetch(`${url}/webhooks`, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });

async function heldEvents(ref: string) {
  const handle = client.workflow.getHandle(`payment-${ref}`);
  const answered = await eventually(
    async () => {
      try {
        return { events: await handle.query(unmatchedWebhookQuery) };
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError) && !/not found|no poller|timeout/i.test((err as Error).message))
          throw err;
        return undefined; // not started, or no worker has picked it up yet
      }
    },
    { attempts: 50, intervalMs: 200, description: 'the workflow to answer' },
  );
  return answered.events;
}

describe('payment webhook (E-1)', () => {
  it('accepts a signature in uppercase hex (as the service sends) and keeps an orphan webhook', async () => {
    const ref = `ref-${randomUUID()}`;
    const body = paymentBody(ref);
    const res = await post(body, { 'x-service-encrypted-body': sign(body).toUpperCase() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true });
    const events = await heldEvents(ref);
    expect(events).toEqual([
      expect.objectContaining({
        transactionRef: ref,
        amount: 10000,
        tokenId: 'tok_1',
        isRecurring: true,
        transactionType: 'Card',
      }),
    ]);
    // Personal data is not carried into workflow state.
    expect(JSON.stringify(events)).not.toContain('payer@example.com');
  });

  it('accepts the real service header name too', async () => {
    const ref = `ref-${randomUUID()}`;
    const body = paymentBody(ref);
    expect((await post(body, { 'x-squad-encrypted-body': sign(body) })).status).toBe(200);
    expect(await heldEvents(ref)).toHaveLength(1);
  });

  it('processes a duplicate once', async () => {
    const ref = `ref-${randomUUID()}`;
    const body = paymentBody(ref);
    const first = await post(body, { 'x-service-encrypted-body': sign(body) });
    const second = await post(body, { 'x-service-encrypted-body': sign(body) });
    expect(first.status).toBe(200);
    expect(await second.json()).toEqual({ received: true, duplicate: true });
    expect(await heldEvents(ref)).toHaveLength(1);
  });

  it.each([
    [
      'a signature made with another key',
      (b: string) => ({ 'x-service-encrypted-body': sign(b, 'sandbox_sk_someone_else') }),
    ],
    ['a signature of other bytes', (b: string) => ({ 'x-service-encrypted-body': sign(b + ' ') })],
    ['a non-hex signature', () => ({ 'x-service-encrypted-body': 'not-hex!' })],
    ['no signature header', () => ({})],
  ])('refuses %s with 401 and signals nothing', async (_name, headers) => {
    const ref = `ref-${randomUUID()}`;
    const body = paymentBody(ref);
    const res = await post(body, headers(body));
    expect(res.status).toBe(401);
    await expect(client.workflow.getHandle(`payment-${ref}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('verifies the raw bytes: re-serialised JSON with the same content fails', async () => {
    const ref = `ref-${randomUUID()}`;
    const body = paymentBody(ref);
    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    expect((await post(pretty, { 'x-service-encrypted-body': sign(body) })).status).toBe(401);
  });

  it('rejects a signed body that breaks the schema, naming the field', async () => {
    const ref = `ref-${randomUUID()}`;
    const parsed = JSON.parse(paymentBody(ref));
    parsed.Body.amount = 100.5;
    const body = JSON.stringify(parsed);
    const res = await post(body, { 'x-service-encrypted-body': sign(body) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      received: false,
      errors: [{ field: 'Body.amount', rule: expect.stringContaining('integer') }],
    });
  });
});

describe('virtual-account credit (E-2)', () => {
  const credit = (ref: string, version?: 'v2' | 'v3') => vaCreditBody(ref, version ? { version } : {});

  it('verifies version 2 (pipe-joined fields, lowercase) and acknowledges with the spec body', async () => {
    const ref = `va-${randomUUID()}`;
    const body = credit(ref, 'v2');
    const signed = [
      body.transaction_reference,
      body.virtual_account_number,
      body.currency,
      body.principal_amount,
      body.settled_amount,
      body.customer_identifier,
    ].join('|');
    const res = await fetch(`${url}/webhooks`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'x-service-signature': sign(signed) },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      response_code: 200,
      transaction_reference: ref,
      response_description: 'Success',
    });
    const result = (await client.workflow.getHandle(`va-credit-${ref}`).result()) as VirtualAccountCreditOutcome;
    expect(result).toMatchObject({
      status: 'credited',
      credit: { transactionReference: ref, principalAmount: '5000.00', version: 2 },
    });
  });

  it('verifies version 1 (whole body, uppercase) and deduplicates a repeat', async () => {
    const ref = `va-${randomUUID()}`;
    const raw = JSON.stringify(credit(ref));
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${url}/webhooks`, {
        method: 'POST',
        body: raw,
        headers: { 'x-squad-signature': sign(raw).toUpperCase() },
      });
      expect(res.status).toBe(200);
    }
    const runs = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = 'va-credit-${ref}'` })) runs.push(wf);
    expect(runs.length).toBeLessThanOrEqual(1);
    expect(await client.workflow.getHandle(`va-credit-${ref}`).result()).toMatchObject({
      status: 'credited',
      credit: { version: 1 },
    });
  });

  it('refuses a forged credit with 401 and starts nothing', async () => {
    const ref = `va-${randomUUID()}`;
    const body = credit(ref, 'v3');
    const res = await fetch(`${url}/webhooks`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'x-service-signature': sign('forged') },
    });
    expect(res.status).toBe(401);
    await expect(client.workflow.getHandle(`va-credit-${ref}`).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
  });
});

describe('what the receiver remembers, counts and logs', () => {
  // A second receiver with a memory of two notifications and a log of its own.
  const smallCapture = new LogCapture();
  let small: { server: Server; url: string };
  beforeAll(async () => {
    small = await listenWebhookReceiver(config, client, {
      logger: createLogger({ destination: smallCapture }),
      dedupeCapacity: 2,
    });
  });
  afterAll(() => closeServer(small.server));

  const counted = (kind: string) => ({
    verified: meter.count('payflow_webhooks', { kind, result: 'verified' }),
    duplicate: meter.count('payflow_webhooks', { kind, result: 'duplicate' }),
  });
  const signedPayment = (base: string, body: string) =>
    fetch(`${base}/webhooks`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-service-encrypted-body': sign(body) },
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as unknown }));
  const signedCredit = (base: string, raw: string) =>
    fetch(`${base}/webhooks`, { method: 'POST', body: raw, headers: { 'x-squad-signature': sign(raw) } }).then(
      (res) => res.status,
    );
  const delivered = { received: true };
  const copy = { received: true, duplicate: true };

  it('a payment copy it remembers: answered as a duplicate, counted once as verified and once as duplicate, logged with its reference', async () => {
    const ref = `ref-${randomUUID()}`;
    const body = paymentBody(ref);
    const before = counted('payment');
    expect(await signedPayment(url, body)).toEqual({ status: 200, body: delivered });
    expect(await signedPayment(url, body)).toEqual({ status: 200, body: copy });
    expect(counted('payment')).toEqual({ verified: before.verified + 1, duplicate: before.duplicate + 1 });
    expect(capture.records).toContainEqual(
      expect.objectContaining({
        msg: 'duplicate payment webhook: already processed',
        transactionRef: ref,
        event: 'charge_successful',
      }),
    );
  });

  it('another gateway_ref for the same reference is another notification, not a copy', async () => {
    const ref = `ref-${randomUUID()}`;
    expect(await signedPayment(url, chargeSuccessfulBody(ref, { gatewayRef: `${ref}_1_1` }))).toEqual({
      status: 200,
      body: delivered,
    });
    expect(await signedPayment(url, chargeSuccessfulBody(ref, { gatewayRef: `${ref}_2_1` }))).toEqual({
      status: 200,
      body: delivered,
    });
    expect(await heldEvents(ref)).toHaveLength(2);
  });

  it('a notification without is_recurring is handed over as not recurring', async () => {
    const ref = `ref-${randomUUID()}`;
    const parsed = JSON.parse(chargeSuccessfulBody(ref)) as { Body: Record<string, unknown> };
    delete parsed.Body.is_recurring;
    expect((await signedPayment(url, JSON.stringify(parsed))).status).toBe(200);
    expect(await heldEvents(ref)).toEqual([expect.objectContaining({ transactionRef: ref, isRecurring: false })]);
  });

  it('remembers as many notifications as its capacity, and forgets the oldest beyond it', async () => {
    const [a, b, c] = [1, 2, 3].map(() => paymentBody(`ref-${randomUUID()}`));
    expect((await signedPayment(small.url, a)).body).toEqual(delivered);
    expect((await signedPayment(small.url, b)).body).toEqual(delivered);
    // Two remembered: a copy of the oldest is still known.
    expect((await signedPayment(small.url, a)).body).toEqual(copy);
    // A third pushes the oldest out: its copy is handed to Temporal again (the workflow dedupes it).
    expect((await signedPayment(small.url, c)).body).toEqual(delivered);
    expect((await signedPayment(small.url, a)).body).toEqual(delivered);
  });

  it('concurrent copies of a payment: one delivered, every other answered and counted as a duplicate', async () => {
    const body = paymentBody(`ref-${randomUUID()}`);
    const before = counted('payment');
    const answers = await Promise.all(Array.from({ length: 4 }, () => signedPayment(url, body)));
    expect(answers.filter((a) => JSON.stringify(a.body) === JSON.stringify(delivered))).toHaveLength(1);
    expect(answers.filter((a) => JSON.stringify(a.body) === JSON.stringify(copy))).toHaveLength(3);
    expect(counted('payment')).toEqual({ verified: before.verified + 1, duplicate: before.duplicate + 3 });
  });

  it('a credit copy it remembers costs Temporal nothing: one start, counted as verified then duplicate', async () => {
    const ref = `va-${randomUUID()}`;
    const raw = JSON.stringify(vaCreditBody(ref));
    const starts = jest.spyOn(client.workflow, 'start');
    try {
      const before = counted('virtual-account');
      expect(await signedCredit(url, raw)).toBe(200);
      expect(counted('virtual-account')).toEqual({ verified: before.verified + 1, duplicate: before.duplicate });
      expect(await signedCredit(url, raw)).toBe(200);
      expect(counted('virtual-account')).toEqual({ verified: before.verified + 1, duplicate: before.duplicate + 1 });
      expect(starts.mock.calls.filter(([, o]) => o.workflowId === `va-credit-${ref}`)).toHaveLength(1);
    } finally {
      starts.mockRestore();
    }
  });

  it("a credit's workflow is started with its Web UI summary: the flow's title and the reference", async () => {
    const ref = `va-${randomUUID()}`;
    expect(await signedCredit(url, JSON.stringify(vaCreditBody(ref)))).toBe(200);
    const description = await client.workflow.getHandle(`va-credit-${ref}`).describe();
    expect(await description.staticSummary()).toBe(`Virtual-account credit · ${ref}`);
    expect(await description.staticDetails()).toContain('`virtualAccountCreditWorkflow`');
  });

  it("a copy after the credit's workflow completed, at a receiver that does not remember it: a duplicate, counted and logged", async () => {
    const ref = `va-${randomUUID()}`;
    const raw = JSON.stringify(vaCreditBody(ref));
    expect(await signedCredit(url, raw)).toBe(200);
    expect(await client.workflow.getHandle(`va-credit-${ref}`).result()).toMatchObject({ status: 'credited' });
    const before = counted('virtual-account');
    expect(await signedCredit(small.url, raw)).toBe(200);
    expect(counted('virtual-account')).toEqual({ verified: before.verified, duplicate: before.duplicate + 1 });
    expect(smallCapture.records).toContainEqual(
      expect.objectContaining({
        msg: 'duplicate virtual-account credit: its workflow already completed',
        transactionReference: ref,
      }),
    );
  });

  it('concurrent copies of a credit: one start, counted once as verified, every other as a duplicate', async () => {
    const ref = `va-${randomUUID()}`;
    const raw = JSON.stringify(vaCreditBody(ref));
    // The start held back a little, so every copy arrives while the first is still being handed over.
    const start = client.workflow.start.bind(client.workflow);
    const starts = jest.spyOn(client.workflow, 'start').mockImplementation(async (...args) => {
      await new Promise((r) => setTimeout(r, 300));
      return start(...args);
    });
    try {
      const before = counted('virtual-account');
      expect(await Promise.all(Array.from({ length: 4 }, () => signedCredit(url, raw)))).toEqual([200, 200, 200, 200]);
      expect(counted('virtual-account')).toEqual({ verified: before.verified + 1, duplicate: before.duplicate + 3 });
      expect(starts.mock.calls.filter(([, o]) => o.workflowId === `va-credit-${ref}`)).toHaveLength(1);
    } finally {
      starts.mockRestore();
    }
  });
});

it('never logs the signature or the key', () => {
  expect(capture.text).not.toContain(key);
});
