// Reconciliation: the service's transactions (A6) against our flows' outcomes, over any range.
//
// The range is split into calendar-month windows (A6 takes at most one month) and each window is
// read once per currency by one activity, which pages A6, compares every row with our flow by
// reference, checks that our successes are listed, marks what differs, and returns a summary.
// History stays bounded: one summary per window (counts and at most `maxFindings` findings),
// never the rows; a long range continues-as-new every `windowsPerRun` windows carrying the
// report so far. A window that cannot be read after its retries is reported (status
// `incomplete`), and the other windows are still read.
//
// The daily Schedule starts this with `{previousDay: true}`: the day before the run's scheduled
// time (TemporalScheduledStartTime), so a run caught up after an outage reads the day it was
// scheduled for.
import {
  ApplicationFailure,
  continueAsNew,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { createReconciliationActivities } from '../activities/reconciliation';
import { PaymentFlow, ReconciliationStatus } from '../shared/search-attributes';
import {
  RECONCILE_DEFAULTS,
  RECONCILIATION_FLOW,
  ReconcileInputSchema,
  addToTotals,
  emptyTotals,
  previousDayOf,
  reconciliationProgressQuery,
  splitIntoMonthWindows,
  type Currency,
  type ReconcileInput,
  type ReconciliationFinding,
  type ReconciliationMark,
  type ReconciliationProgress,
  type ReconciliationReport,
  type ReconciliationRunStatus,
  type ReconciliationTotals,
  type ResolvedReconcileInput,
  type WindowSummary,
} from '../shared/reconciliation';
import { describeIssues, issuesOf } from '../shared/failures';

type Activities = ReturnType<typeof createReconciliationActivities>;

const { reconcileWindow } = proxyActivities<Activities>({
  // A month of a busy merchant is many pages; the activity heartbeats after each page and lookup.
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '10s', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 6 },
});

const TemporalScheduledStartTime = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/** What a run hands the next one at continue-as-new. */
export interface ReconciliationCarry {
  input: ResolvedReconcileInput;
  next: number;
  startedAt: string;
  totals: ReconciliationTotals;
  windows: ReconciliationReport['windows'];
  findings: ReconciliationFinding[];
  findingsOmitted: number;
}

function resolveInput(raw: ReconcileInput): ResolvedReconcileInput {
  const parsed = ReconcileInputSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    throw ApplicationFailure.create({
      type: 'InvalidInput',
      message: `invalid reconciliation input: ${describeIssues(issuesOf(parsed.error))}`,
      nonRetryable: true,
    });
  }
  const v = parsed.data;
  let from = v.from!;
  let to = v.to!;
  if (v.previousDay) {
    const info = workflowInfo();
    const scheduled = info.typedSearchAttributes.get(TemporalScheduledStartTime);
    const day = previousDayOf((scheduled ?? info.startTime).getTime());
    from = day;
    to = day;
  }
  return {
    from,
    to,
    currencies: [...new Set(v.currencies ?? RECONCILE_DEFAULTS.currencies)] as Currency[],
    perPage: v.perPage ?? RECONCILE_DEFAULTS.perPage,
    markFlows: v.markFlows ?? RECONCILE_DEFAULTS.markFlows,
    maxFindings: v.maxFindings ?? RECONCILE_DEFAULTS.maxFindings,
    windowsPerRun: v.windowsPerRun ?? RECONCILE_DEFAULTS.windowsPerRun,
  };
}

export async function reconciliationWorkflow(
  input: ReconcileInput,
  carried?: ReconciliationCarry,
): Promise<ReconciliationReport> {
  const resolved = carried?.input ?? resolveInput(input);
  const tasks = splitIntoMonthWindows(resolved.from, resolved.to).flatMap((w) =>
    resolved.currencies.map((currency) => ({ ...w, currency })),
  );
  const carry: ReconciliationCarry = carried ?? {
    input: resolved,
    next: 0,
    startedAt: new Date(workflowInfo().startTime.getTime()).toISOString(),
    totals: emptyTotals(),
    windows: [],
    findings: [],
    findingsOmitted: 0,
  };
  const listed = new Set(carry.findings.map((f) => `${f.kind}:${f.reference}`));
  let current: ReconciliationProgress['current'];
  let done = carry.next;
  const status = (): ReconciliationRunStatus =>
    carry.windows.some((w) => w.error) ? 'incomplete' : carry.totals.findings > 0 ? 'mismatches' : 'clean';

  setHandler(reconciliationProgressQuery, (): ReconciliationProgress => ({
    status: done >= tasks.length ? status() : 'running',
    from: resolved.from,
    to: resolved.to,
    windowsTotal: tasks.length,
    windowsDone: done,
    current,
    totals: carry.totals,
  }));
  upsertSearchAttributes([
    { key: PaymentFlow, value: RECONCILIATION_FLOW },
    { key: ReconciliationStatus, value: 'running' },
  ]);

  let windowsThisRun = 0;
  for (let i = carry.next; i < tasks.length; i++) {
    if (windowsThisRun >= resolved.windowsPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof reconciliationWorkflow>(input, { ...carry, next: i });
    }
    const task = tasks[i];
    current = task;
    let summary: WindowSummary;
    try {
      summary = await reconcileWindow({
        start: task.start,
        end: task.end,
        currency: task.currency,
        perPage: resolved.perPage,
        markFlows: resolved.markFlows,
        maxFindings: resolved.maxFindings,
        reconciliationId: workflowInfo().workflowId,
      });
    } catch (err) {
      const cause = (err as { cause?: Error }).cause;
      summary = {
        start: task.start,
        end: task.end,
        currency: task.currency,
        pages: 0,
        rows: 0,
        matched: 0,
        noMoneyBoth: 0,
        open: 0,
        notComparable: 0,
        ourSuccessesChecked: 0,
        findings: 0,
        marked: 0,
        resolved: 0,
        byKind: {},
        notComparableReasons: {},
        findingList: [],
        findingsOmitted: 0,
        error: (cause ?? (err as Error)).message,
      };
    }
    const { findingList, findingsOmitted, ...counts } = summary;
    carry.windows.push(counts);
    addToTotals(carry.totals, summary);
    carry.findingsOmitted += findingsOmitted;
    for (const f of findingList) {
      const key = `${f.kind}:${f.reference}`;
      if (listed.has(key)) continue;
      if (carry.findings.length < resolved.maxFindings) {
        carry.findings.push(f);
        listed.add(key);
      } else carry.findingsOmitted += 1;
    }
    done = i + 1;
    windowsThisRun += 1;
  }
  current = undefined;

  const final = status() as ReconciliationReport['status'];
  upsertSearchAttributes([{ key: ReconciliationStatus, value: final }]);
  return {
    from: resolved.from,
    to: resolved.to,
    currencies: resolved.currencies,
    status: final,
    windows: carry.windows,
    totals: carry.totals,
    findings: carry.findings,
    findingsOmitted: carry.findingsOmitted,
    startedAt: carry.startedAt,
    finishedAt: new Date(Date.now()).toISOString(),
  };
}

/**
 * A reconciliation mark: started by the reconciliation activity for one reference with
 * ReconciliationStatus, PaymentFlow = reconciliation-mark and PaymentReference, and done at once.
 * A closed flow's own search attributes cannot change, so this record sits next to it: the Web UI
 * query `PaymentReference = "<ref>"` shows the flow and its marks; `ReconciliationStatus =
 * "mismatch_amount"` lists the marked references. The latest mark of a reference is its state.
 */
export async function reconciliationMarkWorkflow(mark: ReconciliationMark): Promise<ReconciliationMark> {
  return mark;
}
