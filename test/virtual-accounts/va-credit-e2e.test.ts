// Virtual-account credits end to end (issue #13): the real dev server, the sandbox over HTTP, the
// real receiver and worker. A credit reaches the merchant's handler exactly once, whether its
// notification arrived or only the service's webhook error log (C10) holds it; an error-log row is
// deleted (C11) only after the credit is durably recorded; a frozen credit is recorded, not handed over.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningServices } from '../../src/stack/services';
import { createLogger } from '../../src/logging/logger';
import { VirtualAccountCreditStore } from '../../src/virtual-accounts/credit-store';
import {
  CREDIT_IDEMPOTENCY_HEADER,
  CREDIT_SIGNATURE_HEADER,
  CreditHandlerRefused,
  verifyCreditCallback,
  type CreditHandoffRequest,
} from '../../src/virtual-accounts/credit-handler';
import {
  virtualAccountCreditStateQuery,
  virtualAccountCreditWorkflowId,
  type VirtualAccountCreditOutcome,
} from '../../src/shared/virtual-account-credit';
import type { ErrorLogSweepSummary } from '../../src/shared/virtual-account-error-log-sweep';
import { PaymentStatus } from '../../src/shared/search-attributes';
import { ensureErrorLogSweepSchedule, errorLogSweepScheduleId } from '../../src/workers/schedules';
import { LogCapture, startServices, testConfig } from '../support/stack';
import { eventually } from '../support/polling';
import { sandboxAdminCall } from '../support/sandbox-admin';
import { recordHistory } from '../support/replay';

jest.setTimeout(120_000);

const capture = new LogCapture();
const logger = createLogger({ destination: capture, level: 'warn' });
const CALLBACK_SECRET = 'merchant-callback-secret-0123456789abcdef';

/** The merchant's backend: records every hand-over, answers what the test scripts. */
class MerchantBackend {
  readonly calls: {
    key: string | undefined;
    verified: boolean;
    body: { idempotency_key: string; credit: { transactionReference: string; principalAmount: string } };
  }[] = [];
  readonly answers: number[] = [];
  private server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const sig = req.headers[CREDIT_SIGNATURE_HEADER];
      this.calls.push({
        key: req.headers[CREDIT_IDEMPOTENCY_HEADER] as string | undefined,
        verified: verifyCreditCallback(CALLBACK_SECRET, raw, typeof sig === 'string' ? sig : undefined).ok,
        body: JSON.parse(raw),
      });
      res.statusCode = this.answers.shift() ?? 200;
      res.end('{}');
    });
  });
  url = '';
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/credits`;
  }
  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}

/** Reads every 100 ms, `tries` times at most (a read that throws: not there yet), until `ok`. */
const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, tries = 200): Promise<T> =>
  eventually(read, ok, { attempts: tries, intervalMs: 100, description: what, ignoreErrors: true });

describe('virtual-account credits, with a function as the credit handler', () => {
  let services: RunningServices;
  let store: VirtualAccountCreditStore;
  const handed: CreditHandoffRequest[] = [];
  /** The handler refuses credits of this amount (the merchant's rule for a closed customer). */
  const REFUSED_AMOUNT = '100.00';
  const config = testConfig();

  beforeAll(async () => {
    services = await startServices(config, {
      logger,
      // One delivery attempt every 50 ms of sandbox time: a failed notification lands in the error log at once.
      sandbox: { webhookRetryScheduleMs: [50, 50, 50] },
      creditHandler: async (req) => {
        handed.push(req);
        if (req.credit.principalAmount === REFUSED_AMOUNT) throw new CreditHandlerRefused('customer account closed');
        return { detail: 'booked' };
      },
    });
    store = await VirtualAccountCreditStore.connect({ databaseUrl: config.claimCheck.databaseUrl });
  });
  afterAll(async () => {
    await store?.close();
    await services?.stop();
  });

  const admin = <T>(method: string, path: string, body?: unknown) =>
    sandboxAdminCall<T>(services.sandboxUrl!, method, path, body);

  async function openAccount(): Promise<string> {
    const id = `CUST${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const account = await services.api.virtualAccounts.createCustomer({
      customer_identifier: id,
      first_name: 'Ada',
      last_name: 'Obi',
      mobile_num: '08012345678',
      bvn: '12345678901',
      dob: '01/15/1990',
      gender: '1',
      address: '1 Test Street',
    });
    return account.data.virtual_account_number;
  }

  /** A transfer into a fresh account; returns the reference the notification (and the error log) carries. */
  async function transfer(amount: string): Promise<string> {
    const account = await openAccount();
    await services.api.virtualAccounts.simulatePayment({ virtual_account_number: account, amount });
    const rows = (
      await services.api.virtualAccounts.merchantTransactionsFiltered({ virtualAccount: account, perPage: 5 })
    ).data.rows;
    expect(rows).toHaveLength(1);
    return rows[0]!.transaction_reference;
  }

  const errorLogRefs = async () =>
    (await services.api.virtualAccounts.webhookErrorLog({ page: 1, perPage: 100 })).data.rows.map(
      (r) => r.transaction_ref,
    );
  const sweep = (id = `sweep-${randomUUID()}`) =>
    services.client.workflow.execute('virtualAccountErrorLogSweepWorkflow', {
      workflowId: id,
      taskQueue: config.temporal.taskQueue,
      args: [{ recordWaitMs: 20_000 }],
    }) as Promise<ErrorLogSweepSummary>;
  const creditOf = (ref: string) =>
    services.client.workflow
      .getHandle(virtualAccountCreditWorkflowId(ref))
      .result() as Promise<VirtualAccountCreditOutcome>;

  it('a notified credit is recorded once and handed to the handler once, keyed by its reference', async () => {
    const ref = await transfer('1500.00');
    const outcome = await until(
      () => creditOf(ref),
      () => true,
      'the credit workflow',
    );
    expect(outcome).toMatchObject({
      status: 'credited',
      credit: { transactionReference: ref, principalAmount: '1500.00' },
      handoff: { status: 'delivered', idempotencyKey: ref, detail: 'booked' },
    });
    expect(handed.filter((h) => h.idempotencyKey === ref)).toHaveLength(1);
    expect(await errorLogRefs()).not.toContain(ref);
  });

  it('a notification that never reached us: the sweep starts the credit from the error log (C10), hands it over once, then deletes the row (C11)', async () => {
    await admin('POST', '/webhook-faults', { kind: 'fail', count: 4, target: 'virtual-account' });
    const ref = await transfer('2500.00');
    await until(errorLogRefs, (refs) => refs.includes(ref), 'the error-log row');
    const summary = await sweep();
    expect(summary).toMatchObject({ started: 1, deleted: 1, left: 0, invalid: [] });
    expect(await errorLogRefs()).not.toContain(ref);
    const outcome = await creditOf(ref);
    expect(outcome).toMatchObject({
      status: 'credited',
      credit: { transactionReference: ref, principalAmount: '2500.00', fieldsSource: 'service-query' },
      handoff: { status: 'delivered' },
    });
    expect(handed.filter((h) => h.idempotencyKey === ref)).toHaveLength(1);
    expect(await store.countRecords(ref)).toBe(1);
    await recordHistory(
      services.client.workflow.getHandle(virtualAccountCreditWorkflowId(ref)),
      'virtual-account-credit-handed-over',
    );
    // Nothing left to sweep for it: a second sweep neither starts nor hands over anything for it.
    await sweep();
    expect(handed.filter((h) => h.idempotencyKey === ref)).toHaveLength(1);
    expect(await admin<{ kind: string }[]>('GET', `/ledger?reference=${ref}`)).toHaveLength(1);
  });

  it('a crash between recording and C11 (C11 fails): the row stays; the next sweep finds the recorded credit and deletes it; never credited twice', async () => {
    await admin('POST', '/webhook-faults', { kind: 'fail', count: 4, target: 'virtual-account' });
    const ref = await transfer('3500.00');
    await until(errorLogRefs, (refs) => refs.includes(ref), 'the error-log row');
    await admin('POST', '/faults', {
      method: 'DELETE',
      path: '/virtual-account/webhook/logs',
      kind: 'error5xx',
      status: 503,
      count: 5,
    });
    const first = await sweep();
    expect(first).toMatchObject({ started: 1, deleted: 0, left: 1 });
    expect(await errorLogRefs()).toContain(ref);
    expect(await store.countRecords(ref)).toBe(1);
    await admin('DELETE', '/faults');
    const sweepId = `sweep-${randomUUID()}`;
    const second = await sweep(sweepId);
    expect(second).toMatchObject({ started: 0, known: 1, deleted: 1, left: 0 });
    await recordHistory(services.client.workflow.getHandle(sweepId), 'virtual-account-error-log-sweep');
    expect(await errorLogRefs()).not.toContain(ref);
    expect(await creditOf(ref)).toMatchObject({ status: 'credited', deliveries: 1 });
    expect(handed.filter((h) => h.idempotencyKey === ref)).toHaveLength(1);
  });

  it('a row whose notification did reach us later (the retry was acknowledged): the sweep finds the credit and only deletes the row', async () => {
    await admin('POST', '/webhook-faults', { kind: 'fail', count: 1, target: 'virtual-account' });
    const ref = await transfer('4500.00');
    // The first attempt failed (the row is logged); the sandbox's retry reaches the receiver.
    await until(
      () => creditOf(ref),
      (o) => o.status === 'credited',
      'the redelivered credit',
    );
    expect(await errorLogRefs()).toContain(ref);
    const summary = await sweep();
    expect(summary).toMatchObject({ started: 0, known: 1, deleted: 1 });
    expect(await errorLogRefs()).not.toContain(ref);
    expect(handed.filter((h) => h.idempotencyKey === ref)).toHaveLength(1);
  });

  it('a handler that refuses the credit for good: recorded as refused on the workflow, not retried', async () => {
    const ref = await transfer(REFUSED_AMOUNT);
    const outcome = await until(
      () => creditOf(ref),
      () => true,
      'the credit workflow',
    );
    expect(outcome).toMatchObject({
      status: 'credited',
      handoff: { status: 'refused', idempotencyKey: ref, attempts: 1, detail: 'customer account closed' },
    });
    expect(handed.filter((h) => h.idempotencyKey === ref)).toHaveLength(1);
  });

  it("a frozen credit is recorded, not handed over: status and PaymentStatus frozen, with the service's freeze reference", async () => {
    await admin('POST', '/virtual-accounts/freeze-next', { reason: 'Suspicious transaction' });
    const ref = await transfer('5500.00');
    const handle = services.client.workflow.getHandle(virtualAccountCreditWorkflowId(ref));
    const state = await until(
      () => handle.query(virtualAccountCreditStateQuery),
      (s) => s.status === 'frozen',
      'frozen',
    );
    expect(state.reason).toMatch(/the service holds the funds \(freeze FRZ\d+: Suspicious transaction\)/);
    expect((await handle.describe()).typedSearchAttributes.get(PaymentStatus)).toBe('frozen');
    expect(await store.countRecords(ref)).toBe(1);
    expect(handed.filter((h) => h.idempotencyKey === ref)).toHaveLength(0);
    await handle.terminate('test over');
  });

  it('the sweep Schedule: created once per task queue, every N seconds, overlap SKIP, starting the sweep workflow; a second call updates it', async () => {
    const taskQueue = `sched-${randomUUID()}`;
    const id = await ensureErrorLogSweepSchedule(services.client, { taskQueue, everySeconds: 300 });
    expect(id).toBe(errorLogSweepScheduleId(taskQueue));
    const handle = services.client.schedule.getHandle(id);
    try {
      await handle.pause('test: never fire');
      await ensureErrorLogSweepSchedule(services.client, { taskQueue, everySeconds: 120 });
      const d = await handle.describe();
      expect(d.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'virtualAccountErrorLogSweepWorkflow',
        taskQueue,
      });
      expect(d.spec.intervals?.[0]?.every).toBe(120_000);
      expect(d.policies.overlap).toBe('SKIP');
      expect(d.state.paused).toBe(true); // an operator's pause survives a worker restart
    } finally {
      await handle.delete();
    }
  });
});

describe('virtual-account credits, with the HTTP callback as the credit handler', () => {
  let services: RunningServices;
  const merchant = new MerchantBackend();

  beforeAll(async () => {
    await merchant.start();
    services = await startServices(
      testConfig({ VA_CREDIT_CALLBACK_URL: merchant.url, VA_CREDIT_CALLBACK_SECRET: CALLBACK_SECRET }),
      { logger },
    );
  });
  afterAll(async () => {
    await services?.stop();
    await merchant.close();
  });

  it('signed with HMAC over the raw body, keyed by the reference; a 503 is retried with the same key, a 200 ends it', async () => {
    merchant.answers.push(503);
    const id = `CUST${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const account = (
      await services.api.virtualAccounts.createCustomer({
        customer_identifier: id,
        first_name: 'Ada',
        last_name: 'Obi',
        mobile_num: '08012345678',
        bvn: '12345678901',
        dob: '01/15/1990',
        gender: '1',
        address: '1 Test Street',
      })
    ).data.virtual_account_number;
    await services.api.virtualAccounts.simulatePayment({ virtual_account_number: account, amount: '700.00' });
    const ref = (
      await services.api.virtualAccounts.merchantTransactionsFiltered({ virtualAccount: account, perPage: 5 })
    ).data.rows[0]!.transaction_reference;
    const outcome = await until(
      () =>
        services.client.workflow
          .getHandle(virtualAccountCreditWorkflowId(ref))
          .result() as Promise<VirtualAccountCreditOutcome>,
      () => true,
      'credit',
      400,
    );
    expect(outcome.handoff).toMatchObject({ status: 'delivered', idempotencyKey: ref, attempts: 2 });
    const calls = merchant.calls.filter((c) => c.body.credit.transactionReference === ref);
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.verified && c.key === ref && c.body.idempotency_key === ref)).toBe(true);
    expect(calls[0]!.body.credit.principalAmount).toBe('700.00');
  });

  it('a callback whose signature is checked with another secret does not verify', () => {
    const raw = JSON.stringify({ idempotency_key: 'x' });
    const t = Math.floor(Date.now() / 1000);
    const header = `t=${t},v1=${'0'.repeat(64)}`;
    expect(verifyCreditCallback(CALLBACK_SECRET, raw, header)).toEqual({
      ok: false,
      reason: 'the signature does not match',
    });
    expect(verifyCreditCallback(CALLBACK_SECRET, raw, undefined)).toMatchObject({ ok: false });
  });
});
