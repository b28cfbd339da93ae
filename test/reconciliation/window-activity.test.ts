// The window activity against the sandbox over real HTTP (A6) and the suite's dev server
// (visibility), without a worker: paging until an empty page, month windows over transactions
// weeks apart, a 5xx retried and a lasting one reported, a window wider than a month never
// sent, an empty day, and money at the service that no flow carries.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { DefaultLogger } from '@temporalio/worker';
import { PaymentsClient } from '../../src/api';
import { DEFAULT_SANDBOX_KEY, startSandbox, type Sandbox } from '../../src/sandbox';
import { createReconciliationActivities, PAGE_ATTEMPTS } from '../../src/activities/reconciliation';
import { createTemporalClient } from '../../src/temporal/client';
import { createLogger } from '../../src/logging/logger';
import type { ActivityDeps } from '../../src/activities';
import {
  formatDay,
  splitIntoMonthWindows,
  type ReconcileWindowInput,
  type WindowSummary,
} from '../../src/shared/reconciliation';
import { sandboxAdminCall } from '../support/sandbox-admin';
import { LogCapture, testConfig } from '../support/stack';

const config = testConfig();
let client: Client;
let sandbox: Sandbox;
let api: PaymentsClient;
let activities: ReturnType<typeof createReconciliationActivities>;

beforeAll(async () => {
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  sandbox = await startSandbox({ port: 0 });
  api = new PaymentsClient({ baseUrl: sandbox.url, secretKey: DEFAULT_SANDBOX_KEY, timeoutMs: 5000 });
  const deps = {
    api,
    logger: createLogger({ destination: new LogCapture() }),
    config,
    temporal: client,
  } as unknown as ActivityDeps;
  activities = createReconciliationActivities(deps, { pageRetryDelayMs: 10 });
});
afterAll(async () => {
  await api?.close();
  await sandbox?.close();
  await client?.connection.close();
});
afterEach(() => sandboxAdminCall(sandbox.url, 'DELETE', '/faults'));

const today = () => formatDay(sandbox.clock.now());
const input = (o: Partial<ReconcileWindowInput>): ReconcileWindowInput => ({
  start: today(),
  end: today(),
  currency: 'NGN',
  perPage: 100,
  markFlows: false,
  maxFindings: 50,
  reconciliationId: 'test',
  ...o,
});
/** Runs the activity as the worker would, on a task queue of its own (no flows there). */
const run = (i: ReconcileWindowInput): Promise<WindowSummary> =>
  new MockActivityEnvironment(
    { taskQueue: `recon-${randomUUID()}` },
    { logger: new DefaultLogger('ERROR', () => undefined) },
  ).run(activities.reconcileWindow, i);
const transactionListCalls = () => sandbox.requests().filter((r) => r.method === 'GET' && r.path === '/transaction');
const ussd = (ref: string, amount = 10_000) =>
  api.direct.initiateUssd({
    transaction_reference: ref,
    amount,
    ussd: { bank_code: '058' },
    customer: { name: 'Ada', email: 'ada@example.com' },
  });

describe('the window activity against the sandbox over real HTTP', () => {
  it('pages the transaction list (A6) until an empty page: 12 rows at 5 per page are 4 requests, every row read once; another currency is its own pass', async () => {
    for (let i = 0; i < 12; i++) await ussd(`pg-${i}-${randomUUID().slice(0, 6)}`);
    await api.checkout.initiate({
      email: 'ada@example.com',
      amount: 50_000,
      currency: 'USD',
      transaction_ref: `pg-usd-${randomUUID().slice(0, 6)}`,
    });
    const before = transactionListCalls().length;
    const ngn = await run(input({ perPage: 5 }));
    expect(transactionListCalls().length - before).toBe(4);
    expect(ngn).toMatchObject({
      pages: 4,
      rows: 12,
      open: 12,
      matched: 0,
      findings: 0,
      notComparable: 0,
      ourSuccessesChecked: 0,
    });

    const usd = await run(input({ currency: 'USD', perPage: 5 }));
    expect(usd).toMatchObject({ pages: 2, rows: 1, open: 1 });
  });

  it('an empty day is one page and no rows', async () => {
    const before = transactionListCalls().length;
    expect(await run(input({ start: '2020-01-01', end: '2020-01-01' }))).toMatchObject({
      pages: 1,
      rows: 0,
      findings: 0,
    });
    expect(transactionListCalls().length - before).toBe(1);
  });

  it('a 5xx is retried and the window is read; a lasting 5xx fails the attempt as retryable (Temporal retries the window)', async () => {
    await ussd(`r5-${randomUUID().slice(0, 6)}`);
    await sandboxAdminCall(sandbox.url, 'POST', '/faults', {
      method: 'GET',
      path: '^/transaction$',
      kind: 'error5xx',
      count: 1,
    });
    const before = transactionListCalls().length;
    const ok = await run(input({}));
    expect(ok.rows).toBeGreaterThan(0);
    expect(
      transactionListCalls()
        .slice(before)
        .map((r) => r.status),
    ).toEqual([503, 200, 200]);

    await sandboxAdminCall(sandbox.url, 'POST', '/faults', {
      method: 'GET',
      path: '^/transaction$',
      kind: 'error5xx',
      count: 10,
    });
    const start = transactionListCalls().length;
    const err = await run(input({})).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).nonRetryable).toBe(false);
    expect(transactionListCalls().length - start).toBe(PAGE_ATTEMPTS);
  });

  it('a window wider than one month is refused before anything is sent', async () => {
    const before = transactionListCalls().length;
    const err = await run(input({ start: '2024-01-15', end: '2024-02-15' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'InvalidWindow', nonRetryable: true });
    expect(transactionListCalls().length).toBe(before);
  });

  it('money at the service that no flow carries is a finding (pending payments with no flow are not)', async () => {
    const paid = `paid-${randomUUID().slice(0, 8)}`;
    await ussd(paid, 25_000);
    await sandboxAdminCall(sandbox.url, 'POST', `/ussd/${paid}/pay`, {});
    const summary = await run(input({}));
    const finding = summary.findingList.find((f) => f.reference === paid);
    expect(finding).toMatchObject({
      kind: 'mismatch_money_without_success',
      serviceStatus: 'success',
      serviceAmount: 25_000,
      serviceCurrency: 'NGN',
    });
    expect(finding).not.toHaveProperty('flow');
    // No e-mail or name from the row reaches the summary.
    expect(JSON.stringify(summary)).not.toMatch(/ada@example.com|"Ada"/);
    expect(summary.byKind.mismatch_money_without_success).toBe(1);
  });

  it('a POS remote request shown in the transaction list that no flow published (started elsewhere) is named not comparable, never a finding', async () => {
    await api.posRemote.create({ terminal_id: '2SBX0001', amount: 12_345 });
    await sandbox.clock.advance(5_000); // the simulated terminal approves it
    const summary = await run(input({}));
    expect(summary.notComparableReasons).toEqual({
      'POS remote request that no flow of ours published (PaymentServiceReference)': 1,
    });
    expect(summary.findingList.filter((f) => f.serviceAmount === 12_345)).toEqual([]);
  });

  it('a range over months: each calendar-month window reads its own rows (the transaction list is never asked for more than a month)', async () => {
    const first = today();
    const early = `m1-${randomUUID().slice(0, 6)}`;
    await ussd(early);
    await sandbox.clock.advance(40 * 24 * 3600 * 1000);
    const later = today();
    const late = [`m2-${randomUUID().slice(0, 6)}`, `m3-${randomUUID().slice(0, 6)}`];
    for (const r of late) await ussd(r);
    const windows = splitIntoMonthWindows(first, later);
    expect(windows.length).toBeGreaterThanOrEqual(2);
    const summaries = [];
    for (const w of windows) summaries.push(await run(input({ start: w.start, end: w.end })));
    // The first window holds the earlier tests' rows of that day too; the last one only the two new rows.
    expect(summaries.at(-1)).toMatchObject({ rows: 2 });
    const firstRows = summaries[0].rows;
    expect(firstRows).toBeGreaterThanOrEqual(1);
    expect(summaries.reduce((n, s) => n + s.rows, 0)).toBe(firstRows + 2);
  });
});
