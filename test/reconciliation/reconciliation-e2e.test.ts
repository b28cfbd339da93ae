// Reconciliation end to end on the dev server with the real worker, the sandbox over HTTP and the
// webhook receiver: real checkout flows (one paid, one that expired and was paid afterwards),
// payments made at the service outside our flows, and flows whose state is forced through their
// search attributes (a workflow started with them and terminated: a flow that says failed, one
// that succeeded for another amount, one whose reference the service does not know). Then the
// CLI with --json and --csv, and an input it refuses.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { startCheckout } from '../../src/starters/checkout';
import {
  debitMandate,
  getMandateState,
  resolveMandateDebit,
  startMandate,
  submitMandateOtp,
} from '../../src/starters/mandate';
import { MANDATE_OTP } from '../../src/sandbox';
import { reconcile, reconciliationHandle } from '../../src/starters/reconciliation';
import { paymentSearchAttributes, ReconciliationStatus } from '../../src/shared/search-attributes';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import {
  formatDay,
  reconciliationMarkWorkflowId,
  reconciliationWorkflowId,
  type ReconciliationProgress,
  type ReconciliationReport,
} from '../../src/shared/reconciliation';
import { cliEnvironment, runCli } from '../support/cli';
import { eventually } from '../support/polling';
import { testConfig, useServices } from '../support/stack';
import { recordHistory } from '../support/replay';
import { payCheckoutByCard } from '../support/sandbox-admin';
import { newMandateRequest } from '../support/flow-inputs';

const config = testConfig();
const env = useServices(config);
const tq = () => config.temporal.taskQueue;
const client = (): Client => env.services.client;
const day = formatDay(Date.now());
const ctx = () => ({ client: client(), taskQueue: tq() });
const id = () => randomUUID().slice(0, 8);

/** A payment made at the service outside our flows (its webhook finds no flow and is held). */
const paidAtService = async (ref: string, amount: number) => {
  await env.services.api.direct.initiateUssd({
    transaction_reference: ref,
    amount,
    ussd: { bank_code: '058' },
    customer: { name: 'Ada', email: 'ada@example.com' },
  });
  await env.admin.payUssd(ref);
};
/** A flow whose state is forced: started with its search attributes (never run: delayed start), then terminated. */
const forcedFlow = async (f: { ref: string; flow: string; status: string; amount: number; currency?: string }) => {
  const workflowId = `forced-${f.ref}-${id()}`;
  const handle = await client().workflow.start('forcedStateFlow', {
    workflowId,
    taskQueue: tq(),
    args: [],
    startDelay: '1 hour',
    typedSearchAttributes: paymentSearchAttributes({
      flow: f.flow,
      reference: f.ref,
      status: f.status,
      amount: f.amount,
      currency: f.currency ?? 'NGN',
    }),
  });
  await handle.terminate('test: a flow state forced through its search attributes');
  // Visibility is eventually consistent: a run started before this flow is listed would compare the older one.
  await visible(`WorkflowId = "${workflowId}" AND ExecutionStatus = "Terminated"`);
};
const visible = (query: string, atLeast = 1) =>
  eventually(
    async () => {
      const found = [];
      for await (const w of client().workflow.list({ query: `TaskQueue = "${tq()}" AND ${query}` })) found.push(w);
      return found;
    },
    (found) => found.length >= atLeast,
    { attempts: 100, intervalMs: 100, description: `visible: ${query}` },
  );
const run = (progress?: ReconciliationProgress[]) =>
  reconcile(
    ctx(),
    { from: day, to: day, currencies: ['NGN'] },
    progress ? { onProgress: (p) => progress.push(p), intervalMs: 100 } : {},
  );
const byRef = (r: ReconciliationReport) => Object.fromEntries(r.findings.map((f) => [f.reference, f]));

const refs = {
  ok: `ok-${id()}`,
  expired: `late-${id()}`,
  moneyNoSuccess: `mns-${id()}`,
  amount: `amt-${id()}`,
  successNoMoney: `snm-${id()}`,
};
let expiredCheckoutUrl: string;

it('a paid checkout and an unpaid one that expired: the report is clean and the run says so', async () => {
  const ok = await startCheckout(ctx(), {
    transactionRef: refs.ok,
    amount: 120_000,
    currency: 'NGN',
    email: 'ada@example.com',
  });
  await payCheckoutByCard(ok.checkoutUrl);
  expect(await ok.handle.result()).toMatchObject({ status: 'success' });
  const expired = await startCheckout(ctx(), {
    transactionRef: refs.expired,
    amount: 80_000,
    currency: 'NGN',
    email: 'ada@example.com',
    expiryMs: 500,
    webhookGraceMs: 0,
  });
  expiredCheckoutUrl = expired.checkoutUrl;
  expect(await expired.handle.result()).toMatchObject({ status: 'expired' });

  const progress: ReconciliationProgress[] = [];
  const report = await run(progress);
  expect(report).toMatchObject({
    from: day,
    to: day,
    currencies: ['NGN'],
    status: 'clean',
    findings: [],
    findingsOmitted: 0,
  });
  // The paid checkout agrees; the expired one is still pending at the service (open, not a finding).
  expect(report.totals).toMatchObject({ rows: 2, matched: 1, open: 1, findings: 0, ourSuccessesChecked: 1, pages: 2 });
  expect(report.windows).toEqual([expect.objectContaining({ start: day, end: day, currency: 'NGN', rows: 2 })]);
  expect(progress.at(-1)).toMatchObject({ status: 'clean', windowsDone: 1, windowsTotal: 1 });
  const described = await reconciliationHandle(ctx(), day, day).describe();
  expect(described.typedSearchAttributes.get(ReconciliationStatus)).toBe('clean');
}, 60_000);

it('late payment, money without success, a different amount and success without money are reported and marked; a second run marks nothing twice', async () => {
  // The expired checkout is paid now: its webhook finds the flow closed and is held by a new run under its id.
  await payCheckoutByCard(expiredCheckoutUrl);
  await visible(`PaymentReference = "${refs.expired}" AND PaymentFlow = "unmatched-webhook"`);
  await paidAtService(refs.moneyNoSuccess, 30_000);
  await visible(`PaymentReference = "${refs.moneyNoSuccess}" AND PaymentFlow = "unmatched-webhook"`);
  await forcedFlow({ ref: refs.moneyNoSuccess, flow: 'card', status: 'failed', amount: 30_000 });
  await paidAtService(refs.amount, 10_000);
  await forcedFlow({ ref: refs.amount, flow: 'ussd', status: 'success', amount: 9_000 });
  await forcedFlow({ ref: refs.successNoMoney, flow: 'card', status: 'success', amount: 5_000 });

  const report = await run();
  expect(report.status).toBe('mismatches');
  const f = byRef(report);
  expect(Object.keys(f).sort()).toEqual([refs.amount, refs.expired, refs.moneyNoSuccess, refs.successNoMoney].sort());
  expect(f[refs.expired]).toMatchObject({
    kind: 'late_payment',
    flow: 'checkout',
    ourStatus: 'expired',
    serviceStatus: 'success',
    workflowId: paymentWorkflowId(refs.expired),
  });
  expect(Date.parse(f[refs.expired].paidEvidenceAt!)).toBeGreaterThan(Date.parse(f[refs.expired].flowClosedAt!));
  expect(f[refs.moneyNoSuccess]).toMatchObject({
    kind: 'mismatch_money_without_success',
    flow: 'card',
    ourStatus: 'failed',
    serviceAmount: 30_000,
  });
  expect(f[refs.amount]).toMatchObject({
    kind: 'mismatch_amount',
    ourAmount: 9_000,
    serviceAmount: 10_000,
    serviceCurrency: 'NGN',
  });
  expect(f[refs.successNoMoney]).toMatchObject({
    kind: 'mismatch_success_without_money',
    ourStatus: 'success',
    ourAmount: 5_000,
  });
  expect(f[refs.successNoMoney]).not.toHaveProperty('serviceStatus');
  expect(report.totals).toMatchObject({
    findings: 4,
    marked: 4,
    matched: 1,
    byKind: {
      late_payment: 1,
      mismatch_money_without_success: 1,
      mismatch_amount: 1,
      mismatch_success_without_money: 1,
    },
  });

  // Each finding is a mark: ReconciliationStatus next to the reference.
  for (const [ref, kind] of [
    [refs.expired, 'late_payment'],
    [refs.moneyNoSuccess, 'mismatch_money_without_success'],
    [refs.amount, 'mismatch_amount'],
    [refs.successNoMoney, 'mismatch_success_without_money'],
  ]) {
    await visible(`PaymentReference = "${ref}" AND ReconciliationStatus = "${kind}"`);
  }
  expect((await reconciliationHandle(ctx(), day, day).describe()).typedSearchAttributes.get(ReconciliationStatus)).toBe(
    'mismatches',
  );
  // Replay fixtures of the reconciliation run (four findings, marks started) and of one mark.
  await recordHistory(reconciliationHandle(ctx(), day, day), 'reconciliation-mismatches');
  await recordHistory(client().workflow.getHandle(reconciliationMarkWorkflowId(refs.amount)), 'reconciliation-mark');

  const again = await run();
  expect(byRef(again)).toEqual(
    expect.objectContaining({ [refs.amount]: expect.objectContaining({ kind: 'mismatch_amount' }) }),
  );
  expect(again.totals).toMatchObject({ findings: 4, marked: 0 });
  expect(await visible(`PaymentReference = "${refs.amount}" AND PaymentFlow = "reconciliation-mark"`)).toHaveLength(1);
}, 60_000);

it('a reference that agrees again is marked resolved', async () => {
  await forcedFlow({ ref: refs.amount, flow: 'ussd', status: 'success', amount: 10_000 });
  const report = await run();
  expect(byRef(report)[refs.amount]).toBeUndefined();
  expect(report.totals).toMatchObject({ findings: 3, resolved: 1, matched: 2 });
  await visible(`PaymentReference = "${refs.amount}" AND ReconciliationStatus = "resolved"`);
}, 60_000);

it('mandate debits are compared with the debits the mandate flow keeps, both ways: money under a debit reference the flow never made, and a debit the flow records that the service does not list, are findings', async () => {
  const request = newMandateRequest({ description: 'Gym', startDate: day, debitSettleMs: 0 });
  const { mandateRef } = request;
  await startMandate(env.services.starters, request);
  // A read that throws: the flow not started yet.
  const awaitingOtp = await eventually(
    () => getMandateState(ctx(), mandateRef),
    (st) => st.status === 'awaiting_otp',
    { timeoutMs: 30_000, ignoreErrors: true, description: 'the mandate awaiting its OTP', returnLastOnTimeout: true },
  );
  expect(awaitingOtp.status).toBe('awaiting_otp');
  expect((await submitMandateOtp(env.services.starters, mandateRef, MANDATE_OTP)).status).toBe('approved');
  const debit = await debitMandate(ctx(), mandateRef, 300_000, { idempotencyKey: 'order-1' });
  expect(debit.status).toBe('success');
  // Money under a debit-shaped reference of this mandate that its flow never made (its last debit is 2).
  await paidAtService(`${mandateRef}-D99`, 20_000);
  // A debit that never reached the service (its D3 dropped, verify down) parks; an operator wrongly says it was debited.
  await env.admin.fault({
    method: 'POST',
    path: '/transaction/mandate/debit',
    kind: 'drop-before-processing',
    count: 1,
  });
  await env.admin.fault({ method: 'GET', path: '/transaction/verify', kind: 'error5xx', count: 1000 });
  const lost = await debitMandate(ctx(), mandateRef, 40_000, { idempotencyKey: 'order-2' });
  expect(lost.status).toBe('outcome_unknown');
  await env.admin.clearFaults();
  await resolveMandateDebit(ctx(), mandateRef, {
    debitKey: 'order-2',
    outcome: 'debited',
    reason: 'test: a wrong resolution',
    operator: 'ops-test',
  });

  const before = await run();
  expect(byRef(before)[debit.reference]).toBeUndefined();
  expect(byRef(before)[`${mandateRef}-D99`]).toMatchObject({
    kind: 'mismatch_money_without_success',
    detail: expect.stringContaining('the mandate flow never made debit 99 (its last is 2)'),
  });
  expect(byRef(before)[lost.reference]).toMatchObject({
    kind: 'mismatch_success_without_money',
    flow: 'mandate-debit',
    ourAmount: 40_000,
    detail: expect.stringContaining(`the mandate flow records debit ${lost.reference} as success`),
  });
  const reasons = Object.assign({}, ...before.windows.map((w) => w.notComparableReasons)) as Record<string, number>;
  expect(reasons).toEqual({});
  // checkout, the corrected amount, the debit; the findings above and the two mandate debits
  expect(before.totals).toMatchObject({ matched: 3, findings: 5 });
}, 120_000);

describe('reconcile from the command line', () => {
  const cli = (args: string[]) => runCli(args, { env: cliEnvironment(config, env.services.sandboxUrl!) });

  it('--json prints the report on stdout and progress on stderr; --csv writes the findings; findings exit 3 (need a person)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'recon-')), 'findings.csv');
    const res = await cli(['reconcile', '--from', day, '--to', day, '--currency', 'NGN', '--json', '--csv', file]);
    expect(res.code).toBe(3); // findings need a person (docs/cli.md, exit codes)
    const report = JSON.parse(res.stdout) as ReconciliationReport;
    // The findings of the runs above, the two mandate debits' included.
    expect(report.findings.map((x) => x.kind).sort()).toEqual([
      'late_payment',
      'mismatch_money_without_success',
      'mismatch_money_without_success',
      'mismatch_success_without_money',
      'mismatch_success_without_money',
    ]);
    expect(res.stderr).toContain(`[reconcile ${day}..${day}]`);
    expect(res.stderr).toContain('windows 1/1');
    const csv = readFileSync(file, 'utf8').trimEnd().split('\r\n');
    expect(csv[0]).toMatch(/^kind,reference,window,flow,/);
    expect(csv).toHaveLength(6);
    expect(csv.find((l) => l.startsWith('late_payment,'))).toContain(`${refs.expired},${day}..${day} NGN,checkout,`);
    // No e-mail or name reaches the report.
    expect(res.stdout + csv.join('\n')).not.toContain('ada@example.com');
  }, 60_000);

  it('prints a table; a range with from after to is refused with the field and nothing is started', async () => {
    const table = await cli(['reconcile', '--from', day, '--to', day, '--currency', 'NGN', '--no-mark']);
    expect(table.code).toBe(3);
    expect(table.stdout).toContain(`Reconciliation ${day}..${day} (NGN): MISMATCHES`);
    expect(table.stdout).toMatch(/window\s+currency\s+pages\s+rows/);
    expect(table.stdout).toMatch(
      new RegExp(`late_payment\\s+${refs.expired}\\s+checkout\\s+expired 80000 NGN\\s+success`),
    );

    const bad = await cli(['reconcile', '--from', '2024-02-10', '--to', '2024-02-01']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('from must not be after to');
    await expect(
      client().workflow.getHandle(reconciliationWorkflowId('2024-02-10', '2024-02-01')).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  }, 60_000);
});
