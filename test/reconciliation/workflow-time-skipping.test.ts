// The reconciliation workflow's own logic on the time-skipping server, with a scripted window
// activity: a two-year range read window by window (never more than a month, every window once
// across continue-as-new), findings de-duplicated and capped while every one is counted, a window
// that cannot be read reported as incomplete while the others are read, a transient failure
// retried, an input refused with its field, and the Schedule's `previousDay` form.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import type { reconciliationWorkflow } from '../../src/workflows/reconciliation';
import {
  isWithinOneMonth,
  previousDayOf,
  splitIntoMonthWindows,
  type ReconcileInput,
  type ReconcileWindowInput,
  type WindowSummary,
} from '../../src/shared/reconciliation';
import { ReconciliationStatus } from '../../src/shared/search-attributes';
import { workflowBundle } from '../support/stack';
import { useTimeSkippingEnv, withEventHandOver } from '../support/time-skipping';

const env = useTimeSkippingEnv();

const summaryOf = (i: ReconcileWindowInput, o: Partial<WindowSummary> = {}): WindowSummary => ({
  start: i.start,
  end: i.end,
  currency: i.currency,
  pages: 2,
  rows: 10,
  matched: 8,
  noMoneyBoth: 0,
  open: 0,
  notComparable: 0,
  ourSuccessesChecked: 8,
  findings: 0,
  marked: 0,
  resolved: 0,
  byKind: {},
  notComparableReasons: {},
  findingList: [],
  findingsOmitted: 0,
  ...o,
});

async function run(input: ReconcileInput, reconcileWindow: (i: ReconcileWindowInput) => Promise<WindowSummary>) {
  const taskQueue = `recon-ts-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: withEventHandOver({ reconcileWindow }), // a worker without NOTIFY_URL: findings are not told
  });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof reconciliationWorkflow>('reconciliationWorkflow', {
      workflowId: `recon-${randomUUID()}`,
      taskQueue,
      args: [input],
    });
    const result = await handle.result().catch((e: unknown) => e);
    return { handle, result };
  });
}

describe("the reconciliation workflow's own logic on the time-skipping server, with a scripted window", () => {
  it('a two-year range: every month window once per currency across continue-as-new, findings de-duplicated and capped, all counted', async () => {
    const calls: ReconcileWindowInput[] = [];
    const { handle, result } = await run(
      { from: '2022-01-10', to: '2023-12-31', windowsPerRun: 5, maxFindings: 3, perPage: 50 },
      async (i) => {
        calls.push(i);
        const unique = {
          kind: 'mismatch_amount' as const,
          reference: `u-${i.start}-${i.currency}`,
          detail: 'd',
          window: `${i.start}..${i.end} ${i.currency}`,
        };
        const repeated = {
          kind: 'late_payment' as const,
          reference: 'same-ref',
          detail: 'd',
          window: `${i.start}..${i.end} ${i.currency}`,
        };
        return summaryOf(i, {
          findings: 2,
          byKind: { mismatch_amount: 1, late_payment: 1 },
          findingList: [repeated, unique],
        });
      },
    );
    const expected = splitIntoMonthWindows('2022-01-10', '2023-12-31').flatMap((w) => [
      { ...w, currency: 'NGN' },
      { ...w, currency: 'USD' },
    ]);
    expect(expected).toHaveLength(48);
    expect(calls.map((c) => ({ start: c.start, end: c.end, currency: c.currency }))).toEqual(expected);
    for (const c of calls) {
      expect(isWithinOneMonth(c)).toBe(true);
      expect(c).toMatchObject({ perPage: 50, markFlows: true, maxFindings: 3 });
    }
    expect(result).toMatchObject({
      from: '2022-01-10',
      to: '2023-12-31',
      status: 'mismatches',
      findingsOmitted: 46,
      totals: { rows: 480, pages: 96, matched: 384, findings: 96, byKind: { mismatch_amount: 48, late_payment: 48 } },
    });
    const report = result as Awaited<ReturnType<typeof reconciliationWorkflow>>;
    expect(report.findings.map((f) => f.reference)).toEqual(['same-ref', 'u-2022-01-10-NGN', 'u-2022-01-10-USD']);
    expect(report.windows).toHaveLength(48);
    // 48 windows at 5 per run: the first run read 5 windows and continued as new; the report came from a later run.
    const first = await env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
    const types = (first.events ?? []).map((e) => temporal.api.enums.v1.EventType[e.eventType ?? 0]);
    expect(types.filter((t) => t === 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED')).toHaveLength(5);
    expect(types.at(-1)).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId);
  }, 60_000);

  it('a window that cannot be read is reported and the run is incomplete; the others are read; a transient failure is retried', async () => {
    const attempts = new Map<string, number>();
    const { handle, result } = await run({ from: '2024-01-20', to: '2024-03-05', currencies: ['NGN'] }, async (i) => {
      const n = (attempts.get(i.start) ?? 0) + 1;
      attempts.set(i.start, n);
      if (i.start === '2024-02-01')
        throw ApplicationFailure.create({
          type: 'BadRequest',
          message: 'A6 2024-02-01..2024-02-29: Bad Request',
          nonRetryable: true,
        });
      if (i.start === '2024-03-01' && n === 1)
        throw ApplicationFailure.create({ type: 'Transient', message: 'A6: 503', nonRetryable: false });
      return summaryOf(i);
    });
    expect(Object.fromEntries(attempts)).toEqual({ '2024-01-20': 1, '2024-02-01': 1, '2024-03-01': 2 });
    expect(result).toMatchObject({
      status: 'incomplete',
      windows: [
        { start: '2024-01-20', end: '2024-01-31', rows: 10 },
        { start: '2024-02-01', end: '2024-02-29', rows: 0, error: expect.stringContaining('Bad Request') },
        { start: '2024-03-01', end: '2024-03-05', rows: 10 },
      ],
      totals: { rows: 20 },
    });
    expect((await handle.describe()).typedSearchAttributes.get(ReconciliationStatus)).toBe('incomplete');
  });

  it('an input the rules refuse fails the run with the field named, before any window is read', async () => {
    let called = false;
    const { result } = await run({ from: '2024-02-10', to: '2024-02-01' }, async (i) => {
      called = true;
      return summaryOf(i);
    });
    expect(result).toBeInstanceOf(WorkflowFailedError);
    expect((result as WorkflowFailedError).cause).toMatchObject({
      type: 'InvalidInput',
      message: expect.stringContaining('from must not be after to'),
    });
    expect(called).toBe(false);
  });

  it('previousDay (the Schedule form) reads the day before the run started, in both currencies by default', async () => {
    const calls: ReconcileWindowInput[] = [];
    const { handle, result } = await run({ previousDay: true }, async (i) => {
      calls.push(i);
      return summaryOf(i, { rows: 0, matched: 0, ourSuccessesChecked: 0, pages: 1 });
    });
    const started = (await handle.describe()).startTime.getTime();
    const day = previousDayOf(started);
    expect(result).toMatchObject({ from: day, to: day, status: 'clean', currencies: ['NGN', 'USD'] });
    expect(calls.map((c) => `${c.start}..${c.end} ${c.currency}`)).toEqual([
      `${day}..${day} NGN`,
      `${day}..${day} USD`,
    ]);
    expect(calls[0]).toMatchObject({ perPage: 100, markFlows: true, maxFindings: 500 });
  });
});
