// Virtual-account credits are deduplicated durably (issue #12, behaviour 2): against the real dev
// server, real HTTP receivers, real workers, the suite's PostgreSQL and the sandbox (for C5).
//
//  (a) a redelivery after the receiver and the worker restarted is credited once;
//  (b) a redelivery after the credit workflow was deleted from Temporal ("past retention") is
//      credited once, thanks to va_credit_records;
//  (c) concurrent deliveries credit once (over HTTP, and the store's atomic claim on its own);
//  (d) unsigned fields altered in a v2 notification do not change what is credited.
import { createHmac, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { WorkerGroup } from '../../src/workers/worker-group';
import { createLogger } from '../../src/logging/logger';
import { closeServer, createWebhookReceiver, listen } from '../../src/webhooks/receiver';
import { createTemporalClient } from '../../src/temporal/client';
import { createPaymentsWorker } from '../../src/workers/worker';
import { createVirtualAccountCreditActivities } from '../../src/activities/virtual-account-credit';
import type { ClaimCheckStore } from '../../src/claim-check/store';
import { PaymentsClient } from '../../src/api';
import { startSandbox, type Sandbox } from '../../src/sandbox';
import { VirtualAccountCreditStore } from '../../src/virtual-accounts/credit-store';
import {
  virtualAccountCreditWorkflowId,
  type VirtualAccountCreditOutcome,
} from '../../src/shared/virtual-account-credit';
import { LogCapture, testConfig, workflowBundle } from '../support/stack';
import { eventually } from '../support/polling';
import { recordHistory } from '../support/replay';
import { vaCredit } from '../support/flow-inputs';
import { vaCreditBody, vaSignedValues } from '../support/webhook-receiver';

jest.setTimeout(120_000);

const config = testConfig();
const key = config.payments.secretKey;
const capture = new LogCapture();
const logger = createLogger({ destination: capture });
let client: Client;
let sandbox: Sandbox;
let api: PaymentsClient;
/** The test's own view of the table (the stacks open their own connections). */
let store: VirtualAccountCreditStore;

/** A receiver and a worker, each with fresh in-memory state and their own connections: one "process". */
interface Stack {
  url: string;
  stop(): Promise<void>;
}

async function startStack(): Promise<Stack> {
  const receiverClient = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  const server: Server = createWebhookReceiver({
    client: receiverClient,
    taskQueue: config.temporal.taskQueue,
    secretKey: key,
    logger,
  });
  const url = await listen(server, 0);
  const vaCredits = await VirtualAccountCreditStore.connect({ databaseUrl: config.claimCheck.databaseUrl });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker: WorkerGroup = await createPaymentsWorker({
    ...config.temporal,
    encryption: config.encryption,
    connection,
    workflowBundle: await workflowBundle(),
    activities: createVirtualAccountCreditActivities({
      api,
      logger,
      config,
      claimCheck: {} as ClaimCheckStore,
      vaCredits,
    }),
  });
  const running = worker.run();
  return {
    url,
    async stop() {
      await closeServer(server);
      worker.shutdown();
      await running;
      await connection.close();
      await vaCredits.close();
      await receiverClient.connection.close();
    },
  };
}

beforeAll(async () => {
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  sandbox = await startSandbox({ secretKeys: [key] }); // no webhook URL: the tests deliver by hand
  api = new PaymentsClient({ baseUrl: sandbox.url, secretKey: key, timeoutMs: 5_000 });
  store = await VirtualAccountCreditStore.connect({ databaseUrl: config.claimCheck.databaseUrl });
});

afterAll(async () => {
  await store.close();
  await api.close();
  await sandbox.close();
  await client.connection.close();
});

const sign = (data: string) => createHmac('sha512', key).update(data).digest('hex');

const v2Body = (ref: string, over: Record<string, unknown> = {}) => vaCreditBody(ref, { version: 'v2', ...over });

/** Signs the six values, as the service does for v2/v3. */
const v2Signature = (b: Record<string, unknown>) => sign(vaSignedValues(b));

async function deliver(url: string, body: Record<string, unknown>, signature = v2Signature(body)) {
  const res = await fetch(`${url}/webhooks`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', 'x-service-signature': signature },
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

const ack = (ref: string) => ({
  status: 200,
  body: { response_code: 200, transaction_reference: ref, response_description: 'Success' },
});

async function runsOf(ref: string) {
  const runs = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${virtualAccountCreditWorkflowId(ref)}'` }))
    runs.push(wf);
  return runs;
}

const outcome = (ref: string) =>
  client.workflow.getHandle(virtualAccountCreditWorkflowId(ref)).result() as Promise<VirtualAccountCreditOutcome>;

async function deleteExecution(ref: string): Promise<void> {
  const workflowId = virtualAccountCreditWorkflowId(ref);
  await client.workflowService.deleteWorkflowExecution({
    namespace: config.temporal.namespace,
    workflowExecution: { workflowId },
  });
  // Deletion is asynchronous (the dev server takes about half a minute).
  await eventually(
    async () => {
      try {
        await client.workflow.getHandle(workflowId).describe();
        return false;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return true;
        throw err;
      }
    },
    { attempts: 300, intervalMs: 250, description: 'the execution to be deleted' },
  );
}

describe('durable duplicate check across restarts and past retention', () => {
  it('(a) credits once when the same notification comes again after the receiver and the worker restarted', async () => {
    const ref = `va-${randomUUID()}`;
    const body = v2Body(ref);
    const first = await startStack();
    try {
      expect(await deliver(first.url, body)).toEqual(ack(ref));
      expect(await outcome(ref)).toMatchObject({
        status: 'credited',
        deliveries: 1,
        credit: { transactionReference: ref, principalAmount: '5000.00', settledAmount: '4975.00' },
      });
    } finally {
      await first.stop();
    }
    const second = await startStack();
    try {
      // The duplicate is acknowledged with the spec body, so the service stops redelivering.
      expect(await deliver(second.url, body)).toEqual(ack(ref));
    } finally {
      await second.stop();
    }
    expect(await runsOf(ref)).toHaveLength(1);
    expect(await store.countRecords(ref)).toBe(1);
    expect(await store.get(ref)).toMatchObject({ deliveries: 1, record: { principalAmount: '5000.00' } });
  });

  it('(b) credits once when a redelivery comes after the credit workflow was deleted from Temporal', async () => {
    const ref = `va-${randomUUID()}`;
    const body = v2Body(ref);
    const first = await startStack();
    let credited: VirtualAccountCreditOutcome;
    try {
      expect(await deliver(first.url, body)).toEqual(ack(ref));
      credited = await outcome(ref);
      expect(credited).toMatchObject({ status: 'credited', deliveries: 1 });
    } finally {
      await first.stop();
    }
    // "Past retention": Temporal no longer knows the workflow id.
    await deleteExecution(ref);
    const later = await startStack();
    try {
      // The redelivery may carry other unsigned values too: the recorded credit does not change.
      expect(await deliver(later.url, { ...body, fee_charged: '0.00' })).toEqual(ack(ref));
      expect(await outcome(ref)).toEqual({ status: 'duplicate', deliveries: 2, credit: credited.credit });
      await recordHistory(
        client.workflow.getHandle(virtualAccountCreditWorkflowId(ref)),
        'virtual-account-credit-duplicate',
      );
    } finally {
      await later.stop();
    }
    expect(await runsOf(ref)).toHaveLength(1); // the new, duplicate run
    expect(await store.countRecords(ref)).toBe(1);
    expect(capture.text).toContain('duplicate delivery, already credited');
  });

  it('(c) two concurrent deliveries, to two receivers with their own workers, credit once', async () => {
    const ref = `va-${randomUUID()}`;
    const body = v2Body(ref);
    const [s1, s2] = await Promise.all([startStack(), startStack()]);
    try {
      const results = await Promise.all([deliver(s1.url, body), deliver(s2.url, body)]);
      expect(results).toEqual([ack(ref), ack(ref)]);
      expect(await outcome(ref)).toMatchObject({ status: 'credited' });
    } finally {
      await Promise.all([s1.stop(), s2.stop()]);
    }
    expect(await runsOf(ref)).toHaveLength(1);
    expect(await store.countRecords(ref)).toBe(1);
  });
});

describe('the store: the claim is atomic and idempotent per run', () => {
  const credit = vaCredit;

  it('(c) twenty concurrent claims from two connections pools: exactly one credit, every delivery counted', async () => {
    const other = await VirtualAccountCreditStore.connect({ databaseUrl: config.claimCheck.databaseUrl });
    try {
      const ref = `va-${randomUUID()}`;
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? other : store).claim(credit(ref), `run-${i}`)),
      );
      expect(claims.filter((c) => c.credited)).toHaveLength(1);
      expect(await store.get(ref)).toMatchObject({ deliveries: 20 });
      expect(await store.countRecords(ref)).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('a retried claim of the run that credited is still its credit, not a duplicate (worker died after the commit)', async () => {
    const ref = `va-${randomUUID()}`;
    expect(await store.claim(credit(ref), 'run-a')).toMatchObject({ credited: true, deliveries: 1 });
    expect(await store.claim(credit(ref), 'run-a')).toMatchObject({ credited: true, deliveries: 1 });
    expect(await store.claim(credit(ref), 'run-b')).toMatchObject({
      credited: false,
      deliveries: 2,
      conflicting: false,
    });
  });

  it('a delivery with the same reference but other signed values is a conflicting duplicate, never a second credit', async () => {
    const ref = `va-${randomUUID()}`;
    await store.claim(credit(ref), 'run-a');
    const c = await store.claim(credit(ref, { principalAmount: '9000.00' }), 'run-b');
    expect(c).toMatchObject({ credited: false, conflicting: true, record: { principalAmount: '5000.00' } });
  });

  it('keeps a fee and a transaction date only from a version 1 credit (the only version that signs them)', async () => {
    const unsignedExtras = { feeCharged: '25.00', transactionDate: '2026-11-22T10:00:00.000Z' };
    const v2 = `va-${randomUUID()}`;
    const { record } = await store.claim({ ...credit(v2, { version: 2 }), ...unsignedExtras }, 'run-a');
    expect(record).not.toHaveProperty('feeCharged');
    expect(record).not.toHaveProperty('transactionDate');
    const v1 = `va-${randomUUID()}`;
    expect((await store.claim({ ...credit(v1, { version: 1 }), ...unsignedExtras }, 'run-a')).record).toMatchObject(
      unsignedExtras,
    );
  });
});

describe('(d) unsigned fields are not trusted', () => {
  /** A real credit in the sandbox (C1 + C9); answers its row in the filtered search (C5). */
  async function sandboxCredit() {
    const account = await api.virtualAccounts.createCustomer({
      customer_identifier: `CUST-${randomUUID().slice(0, 8)}`,
      first_name: 'Ada',
      last_name: 'Obi',
      mobile_num: '08012345678',
      bvn: '22212345678',
      dob: '01/31/1990',
      gender: '2',
      address: '1 Way',
    });
    await api.virtualAccounts.simulatePayment({
      virtual_account_number: account.data.virtual_account_number,
      amount: '5000.00',
    });
    const page = await api.virtualAccounts.merchantTransactionsFiltered({
      virtualAccount: account.data.virtual_account_number,
    });
    expect(page.data.rows).toHaveLength(1);
    return page.data.rows[0];
  }

  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.stop();
  });

  it("a v2 notification with fee_charged and transaction_date altered (signature still valid) credits the service's values", async () => {
    const row = await sandboxCredit();
    const ref = row.transaction_reference;
    const genuine = v2Body(ref, {
      virtual_account_number: row.virtual_account_number,
      principal_amount: row.principal_amount,
      settled_amount: row.settled_amount,
      customer_identifier: row.customer!.customer_identifier,
      currency: row.currency,
    });
    const forged = { ...genuine, fee_charged: '0.00', transaction_date: '1999-01-01T00:00:00.000Z', remarks: 'forged' };
    // The forger cannot sign; the signature of the genuine six values still holds for the forged body.
    expect(await deliver(stack.url, forged, v2Signature(genuine))).toEqual(ack(ref));
    const result = await outcome(ref);
    expect(result).toMatchObject({ status: 'credited' });
    expect(result.credit).toEqual({
      transactionReference: ref,
      virtualAccountNumber: row.virtual_account_number,
      principalAmount: '5000.00',
      settledAmount: '4975.00',
      currency: 'NGN',
      customerIdentifier: row.customer!.customer_identifier,
      feeCharged: row.fee_charged,
      transactionDate: row.transaction_date,
      fieldsSource: 'service-query',
      version: 2,
      creditedAt: expect.any(String),
    });
    expect(row.fee_charged).toBe('25.00');
    expect(await store.get(ref)).toMatchObject({
      record: { feeCharged: '25.00', transactionDate: row.transaction_date },
    });
    expect(JSON.stringify(result)).not.toMatch(/1999-01-01|forged/);
    await recordHistory(
      client.workflow.getHandle(virtualAccountCreditWorkflowId(ref)),
      'virtual-account-credit-confirmed',
    );
  });

  it('without a matching service record (unknown reference) the unsigned fields are left out, not taken from the body', async () => {
    const ref = `va-${randomUUID()}`;
    const body = v2Body(ref, { fee_charged: '0.00', transaction_date: '1999-01-01T00:00:00.000Z' });
    expect(await deliver(stack.url, body)).toEqual(ack(ref));
    const result = await outcome(ref);
    expect(result.credit).toMatchObject({
      principalAmount: '5000.00',
      settledAmount: '4975.00',
      fieldsSource: 'unconfirmed',
    });
    expect(result.credit).not.toHaveProperty('feeCharged');
    expect(result.credit).not.toHaveProperty('transactionDate');
  });

  it('a service record whose signed values differ (other amount) confirms nothing', async () => {
    const row = await sandboxCredit();
    const body = v2Body(row.transaction_reference, {
      virtual_account_number: row.virtual_account_number,
      principal_amount: '6000.00',
      settled_amount: '5970.00',
      customer_identifier: row.customer!.customer_identifier,
    });
    expect(await deliver(stack.url, body)).toEqual(ack(row.transaction_reference));
    const result = await outcome(row.transaction_reference);
    expect(result.credit).toMatchObject({ principalAmount: '6000.00', fieldsSource: 'unconfirmed' });
    expect(result.credit).not.toHaveProperty('feeCharged');
  });

  it('version 1 signs the whole body: its fee and date are credited as sent', async () => {
    const ref = `va-${randomUUID()}`;
    const { version: _v, ...v1 } = v2Body(ref);
    const raw = JSON.stringify(v1);
    const res = await fetch(`${stack.url}/webhooks`, {
      method: 'POST',
      body: raw,
      headers: { 'x-service-signature': sign(raw).toUpperCase() },
    });
    expect(res.status).toBe(200);
    expect((await outcome(ref)).credit).toMatchObject({
      feeCharged: '25.00',
      transactionDate: '2026-11-22T10:00:00.000Z',
      fieldsSource: 'signed-body',
      version: 1,
    });
  });
});

it('never logs the key or a signature', () => {
  expect(capture.text).not.toContain(key);
});
