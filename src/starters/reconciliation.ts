// Reconciliation for backends and operators: start a run over a date range and wait for its
// report (with progress), the daily Schedule (created or updated idempotently), and the report
// as a table or CSV. See docs/flows-reconciliation.md.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type WorkflowHandle } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import type { reconciliationWorkflow } from '../workflows/reconciliation';
import { PaymentFlow, ReconciliationStatus } from '../shared/search-attributes';
import {
  RECONCILIATION_FLOW,
  ReconcileInputSchema,
  reconciliationScheduleId,
  previousDayOf,
  reconciliationProgressQuery,
  reconciliationWorkflowId,
  type ReconcileInput,
  type ReconciliationFinding,
  type ReconciliationProgress,
  type ReconciliationReport,
} from '../shared/reconciliation';
import { retryTransient } from './temporal-retry';
import { followUntilDone } from './progress';
import type { StarterContext } from './connect';
import { StarterInputError, parseStarterInput } from '../shared/input-error';
import { flowStartMetadata } from '../shared/flow-summary';

/**
 * Checks the input (zod, the workflow's own rules; StarterInputError 'invalid reconciliation input: ...'
 * names each field and rule, values are never echoed); a previousDay run gets yesterday's date (UTC) here.
 */
export function validateReconcileInput(
  input: unknown,
  now: number = Date.now(),
): ReconcileInput & { from: string; to: string } {
  const { previousDay, ...rest } = parseStarterInput(ReconcileInputSchema, input ?? {}, 'reconciliation');
  if (previousDay) {
    const day = previousDayOf(now);
    return { ...rest, from: day, to: day };
  }
  return { ...rest, from: rest.from!, to: rest.to! };
}

type Ctx = Pick<StarterContext, 'client' | 'taskQueue'>;

/**
 * Starts a reconciliation of [from, to] (UTC days, inclusive), or follows the run of the same
 * range that is already going (workflow id `reconciliation-<from>-<to>`; a finished one is run
 * again).
 */
export async function startReconciliation(
  ctx: Ctx,
  input: ReconcileInput,
): Promise<WorkflowHandle<typeof reconciliationWorkflow>> {
  const v = validateReconcileInput(input);
  const workflowId = reconciliationWorkflowId(v.from, v.to);
  return retryTransient('start reconciliation', () =>
    ctx.client.workflow.start<typeof reconciliationWorkflow>('reconciliationWorkflow', {
      workflowId,
      taskQueue: ctx.taskQueue,
      args: [v],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: [
        { key: PaymentFlow, value: RECONCILIATION_FLOW },
        { key: ReconciliationStatus, value: 'running' },
      ],
      ...flowStartMetadata('reconciliationWorkflow', { flow: RECONCILIATION_FLOW, reference: workflowId }),
    }),
  );
}

export const reconciliationHandle = (
  ctx: Pick<StarterContext, 'client'>,
  from: string,
  to: string,
): WorkflowHandle<typeof reconciliationWorkflow> =>
  ctx.client.workflow.getHandle<typeof reconciliationWorkflow>(reconciliationWorkflowId(from, to));

/**
 * Runs a reconciliation and answers its report. `onProgress` is called each time the progress
 * changes (windows done, rows and findings so far).
 */
export async function reconcile(
  ctx: Ctx,
  input: ReconcileInput,
  opts: { onProgress?: (p: ReconciliationProgress) => void; intervalMs?: number } = {},
): Promise<ReconciliationReport> {
  const handle = await startReconciliation(ctx, input);
  const { onProgress } = opts;
  if (!onProgress) return handle.result();
  // Each progress is told once: its JSON is the line a follow compares.
  let last = '';
  const report = (await followUntilDone(handle, reconciliationProgressQuery, (p) => JSON.stringify(p), {
    intervalMs: opts.intervalMs ?? 500,
    out: (line) => onProgress(JSON.parse((last = line)) as ReconciliationProgress),
  })) as ReconciliationReport;
  const final = finishedProgress(report);
  if (JSON.stringify(final) !== last) onProgress(final);
  return report;
}

/** A finished run's progress, from its report: a follow's last look may have come before the end. */
export const finishedProgress = (report: ReconciliationReport): ReconciliationProgress => ({
  status: report.status,
  from: report.from,
  to: report.to,
  windowsTotal: report.windows.length,
  windowsDone: report.windows.length,
  totals: report.totals,
});

// ---- The daily Schedule ----------------------------------------------------------------------

export interface ReconciliationScheduleOptions {
  /** Default `reconciliation-daily` for the task queue `payments`, `reconciliation-daily-<task queue>` for another (one Schedule per deployment). */
  scheduleId?: string;
  /** HH:MM (UTC) of the daily run. Default 02:00. */
  dailyAt?: string;
  /** Missed runs (server or workers down) within this window are still taken when Temporal is back. Default 7 days. */
  catchupWindow?: Duration;
}

export const RECONCILIATION_SCHEDULE_DEFAULTS = { dailyAt: '02:00', catchupWindow: '7 days' } as const;

/**
 * Creates the daily reconciliation Schedule, or brings an existing one to these settings
 * (idempotent: every worker process calls it, the one `npm start` spawns too). Each run reconciles the day before
 * its scheduled time; runs missed within `catchupWindow` are taken one after another
 * (overlap BUFFER_ALL), each for its own day.
 */
export async function ensureReconciliationSchedule(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  opts: ReconciliationScheduleOptions = {},
): Promise<{ scheduleId: string; created: boolean }> {
  const { client, taskQueue } = ctx;
  const scheduleId = opts.scheduleId ?? reconciliationScheduleId(taskQueue);
  const at = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(opts.dailyAt ?? RECONCILIATION_SCHEDULE_DEFAULTS.dailyAt);
  if (!at) throw new StarterInputError('reconciliation schedule', [{ field: 'dailyAt', rule: 'must be HH:MM (UTC)' }]);
  const spec = {
    calendars: [
      { hour: Number(at[1]), minute: Number(at[2]), comment: 'daily reconciliation of the previous day (UTC)' },
    ],
  };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'reconciliationWorkflow',
    workflowId: scheduleId,
    taskQueue,
    args: [{ previousDay: true } satisfies ReconcileInput],
    ...flowStartMetadata('reconciliationWorkflow', { flow: RECONCILIATION_FLOW, reference: 'the previous day (UTC)' }),
    typedSearchAttributes: [
      { key: PaymentFlow, value: RECONCILIATION_FLOW },
      { key: ReconciliationStatus, value: 'running' },
    ],
  };
  const policies: { overlap: ScheduleOverlapPolicy; catchupWindow: Duration; pauseOnFailure: boolean } = {
    overlap: ScheduleOverlapPolicy.BUFFER_ALL,
    catchupWindow: opts.catchupWindow ?? RECONCILIATION_SCHEDULE_DEFAULTS.catchupWindow,
    pauseOnFailure: false,
  };
  try {
    await retryTransient('create reconciliation schedule', () =>
      client.schedule.create({ scheduleId, spec, action, policies }),
    );
    return { scheduleId, created: true };
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  await retryTransient('update reconciliation schedule', () =>
    client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action, policies })),
  );
  return { scheduleId, created: false };
}

// ---- The report as text and CSV --------------------------------------------------------------

function table(rows: (string | number)[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((v, c) => (typeof v === 'number' ? String(v).padStart(widths[c]) : String(v).padEnd(widths[c])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const side = (status?: string, amount?: number, currency?: string) =>
  [status ?? '-', amount ?? '', currency ?? ''].filter((x) => x !== '').join(' ');

/** One progress line for the CLI. */
export function renderReconciliationProgress(p: ReconciliationProgress): string {
  const cur = p.current ? ` reading ${p.current.start}..${p.current.end} ${p.current.currency}` : '';
  return `[reconcile ${p.from}..${p.to}] ${p.status} windows ${p.windowsDone}/${p.windowsTotal}${cur} pages=${p.totals.pages} rows=${p.totals.rows} findings=${p.totals.findings}`;
}

/** The report as the CLI prints it: the totals, one line per window, then the findings. */
export function renderReconciliationReport(r: ReconciliationReport): string {
  const t = r.totals;
  const lines = [
    `Reconciliation ${r.from}..${r.to} (${r.currencies.join(', ')}): ${r.status.toUpperCase()}`,
    `  service rows ${t.rows} in ${t.pages} page(s); matched ${t.matched}; no money on either side ${t.noMoneyBoth}; still open ${t.open}; not comparable ${t.notComparable}; our successes checked ${t.ourSuccessesChecked}`,
    `  findings ${t.findings}${
      Object.keys(t.byKind).length
        ? ` (${Object.entries(t.byKind)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')})`
        : ''
    }; marked ${t.marked}; resolved ${t.resolved}`,
    '',
    table([
      ['window', 'currency', 'pages', 'rows', 'matched', 'no-money', 'open', 'n/c', 'ours', 'findings', 'note'],
      ...r.windows.map((w) => [
        `${w.start}..${w.end}`,
        w.currency,
        w.pages,
        w.rows,
        w.matched,
        w.noMoneyBoth,
        w.open,
        w.notComparable,
        w.ourSuccessesChecked,
        w.findings,
        w.error ? `NOT READ: ${w.error}` : '',
      ]),
    ]),
  ];
  if (r.findings.length > 0) {
    lines.push(
      '',
      `Findings (${r.findings.length}${r.findingsOmitted ? `, ${r.findingsOmitted} more not listed: query ReconciliationStatus` : ''}):`,
    );
    lines.push(
      table([
        ['kind', 'reference', 'flow', 'ours', 'service', 'detail'],
        ...r.findings.map((f) => [
          f.kind,
          f.reference,
          f.flow ?? '-',
          side(f.ourStatus, f.ourAmount, f.ourCurrency),
          side(f.serviceStatus, f.serviceAmount, f.serviceCurrency),
          f.detail,
        ]),
      ]),
    );
  }
  const reasons = new Map<string, number>();
  for (const w of r.windows)
    for (const [k, n] of Object.entries(w.notComparableReasons)) reasons.set(k, (reasons.get(k) ?? 0) + n);
  if (reasons.size > 0) lines.push('', 'Not comparable:', ...[...reasons].map(([k, n]) => `  ${n}  ${k}`));
  return lines.join('\n');
}

export const CSV_COLUMNS = [
  'kind',
  'reference',
  'window',
  'flow',
  'workflow_id',
  'our_status',
  'our_amount',
  'our_currency',
  'flow_closed_at',
  'service_status',
  'service_amount',
  'service_merchant_amount',
  'service_currency',
  'service_created_at',
  'paid_evidence_at',
  'detail',
] as const;

/** A CSV cell (RFC 4180); text that a spreadsheet would run as a formula is prefixed with '. */
function cell(v: string | number | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'number') return String(v);
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The findings as CSV (one line per finding, amounts as integers in the lowest unit). */
export function reconciliationCsv(r: ReconciliationReport): string {
  const row = (f: ReconciliationFinding) =>
    [
      f.kind,
      f.reference,
      f.window,
      f.flow,
      f.workflowId,
      f.ourStatus,
      f.ourAmount,
      f.ourCurrency,
      f.flowClosedAt,
      f.serviceStatus,
      f.serviceAmount,
      f.serviceMerchantAmount,
      f.serviceCurrency,
      f.serviceCreatedAt,
      f.paidEvidenceAt,
      f.detail,
    ]
      .map(cell)
      .join(',');
  return [CSV_COLUMNS.join(','), ...r.findings.map(row)].join('\r\n') + '\r\n';
}
