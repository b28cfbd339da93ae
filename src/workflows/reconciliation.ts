// Reconciliation: the service's transactions (A6) against our flows' outcomes, over any range.
//
// The range is split into calendar-month windows (the transaction list takes at most one month) and each window is
// read once per currency by one activity, which pages the transaction list, compares every row with our flow by
// reference, checks that our successes are listed, marks what differs, and returns a summary.
// History stays bounded: one summary per window (counts and at most `maxFindings` findings),
// never the rows; a long range continues-as-new every `windowsPerRun` windows carrying the
// report so far. A window that cannot be read after its retries is reported (status
// `incomplete`), and the other windows are still read.
//
// Each finding newly listed in the report is told to the merchant (`reconciliation.mismatch`,
// docs/events.md). The flow is AUTO_UPGRADE; the run has no target of its own, so its first event
// asks the deployment endpoint's patch, which a run recorded before this change never passed: it
// replays without the events, and needs no patch of its own.
//
// The daily Schedule starts this with `{previousDay: true}`: the day before the run's scheduled
// time (TemporalScheduledStartTime), so a run caught up after an outage reads the day it was
// scheduled for.
//
// Layout: `reconciliationWorkflow` (a thin wrapper), then `ReconciliationFlow`: its state, its
// handler (`listen`), the main steps (`run`), then the helpers.
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
  emptyWindowSummary,
  previousDayOf,
  reconciliationProgressQuery,
  splitIntoMonthWindows,
  type Currency,
  type DayWindow,
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
import { failureMessage } from '../shared/failures';
import { describeInputIssues, inputIssuesOf } from '../shared/input-error';
import { WINDOW_READ } from './steps/activity-options';
import { MerchantEvents } from './steps/merchant-events';

type Activities = ReturnType<typeof createReconciliationActivities>;

const { reconcileWindow } = proxyActivities<Activities>(WINDOW_READ);

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

/** One month window (or less) in one currency: what one activity reads. */
type WindowTask = DayWindow & { currency: Currency };

export async function reconciliationWorkflow(
  input: ReconcileInput,
  carried?: ReconciliationCarry,
): Promise<ReconciliationReport> {
  const flow = new ReconciliationFlow(input, carried);
  flow.listen();
  return flow.run();
}

/** One run of a reconciliation (a continue-as-new starts the next from `carry`). */
class ReconciliationFlow {
  // --- state ---

  private readonly resolved: ResolvedReconcileInput;
  private readonly tasks: WindowTask[];
  /** The report so far, carried to the next run. */
  private readonly carry: ReconciliationCarry;
  /** `kind:reference` of the findings listed, so a finding is listed once. */
  private readonly listed: Set<string>;
  /** The window being read. */
  private current: ReconciliationProgress['current'];
  private done: number;
  /** Where findings are told: the deployment's endpoint (the run has no `notify` of its own). */
  private readonly events: MerchantEvents;

  constructor(
    private readonly input: ReconcileInput,
    carried: ReconciliationCarry | undefined,
  ) {
    const resolved = carried?.input ?? resolveInput(input);
    this.resolved = resolved;
    this.tasks = splitIntoMonthWindows(resolved.from, resolved.to).flatMap((w) =>
      resolved.currencies.map((currency) => ({ ...w, currency })),
    );
    this.carry = carried ?? {
      input: resolved,
      next: 0,
      startedAt: new Date(workflowInfo().startTime.getTime()).toISOString(),
      totals: emptyTotals(),
      windows: [],
      findings: [],
      findingsOmitted: 0,
    };
    this.listed = new Set(this.carry.findings.map((f) => `${f.kind}:${f.reference}`));
    this.done = this.carry.next;
    this.events = new MerchantEvents(undefined, RECONCILIATION_FLOW, `${resolved.from}..${resolved.to}`);
  }

  // --- handlers ---

  listen(): void {
    setHandler(reconciliationProgressQuery, (): ReconciliationProgress => ({
      status: this.done >= this.tasks.length ? this.status() : 'running',
      from: this.resolved.from,
      to: this.resolved.to,
      windowsTotal: this.tasks.length,
      windowsDone: this.done,
      current: this.current,
      totals: this.carry.totals,
    }));
  }

  // --- the main steps ---

  /** Each window read once, in order, continuing as new every `windowsPerRun` windows; then the report. */
  async run(): Promise<ReconciliationReport> {
    const { carry, resolved, tasks } = this;
    upsertSearchAttributes([
      { key: PaymentFlow, value: RECONCILIATION_FLOW },
      { key: ReconciliationStatus, value: 'running' },
    ]);
    let windowsThisRun = 0;
    for (let i = carry.next; i < tasks.length; i++) {
      if (windowsThisRun >= resolved.windowsPerRun || workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof reconciliationWorkflow>(this.input, { ...carry, next: i });
      }
      this.current = tasks[i];
      await this.tell(this.add(await this.readWindow(tasks[i])));
      this.done = i + 1;
      windowsThisRun += 1;
    }
    this.current = undefined;

    const final = this.status() as ReconciliationReport['status'];
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

  /** One window, compared and marked by the activity; a window it cannot read is reported with its error. */
  private async readWindow(task: WindowTask): Promise<WindowSummary> {
    const { resolved } = this;
    try {
      return await reconcileWindow({
        start: task.start,
        end: task.end,
        currency: task.currency,
        perPage: resolved.perPage,
        markFlows: resolved.markFlows,
        maxFindings: resolved.maxFindings,
        reconciliationId: workflowInfo().workflowId,
      });
    } catch (err) {
      return { ...emptyWindowSummary(task), error: failureMessage(err) };
    }
  }

  // --- helpers ---

  /**
   * Adds a window to the report: its counts, and its findings not listed yet (up to `maxFindings`).
   * Returns the findings it listed.
   */
  private add(summary: WindowSummary): ReconciliationFinding[] {
    const { carry } = this;
    const { findingList, findingsOmitted, ...counts } = summary;
    carry.windows.push(counts);
    addToTotals(carry.totals, summary);
    carry.findingsOmitted += findingsOmitted;
    const added: ReconciliationFinding[] = [];
    for (const f of findingList) {
      const key = `${f.kind}:${f.reference}`;
      if (this.listed.has(key)) continue;
      if (carry.findings.length < this.resolved.maxFindings) {
        carry.findings.push(f);
        this.listed.add(key);
        added.push(f);
      } else carry.findingsOmitted += 1;
    }
    return added;
  }

  /**
   * Tells the merchant each finding just listed: one event per finding, about its reference (a
   * stream of its own, sequence 1), while the deployment has an endpoint.
   */
  private async tell(findings: ReconciliationFinding[]): Promise<void> {
    for (const f of findings) {
      if (!this.events.enabled) return;
      await this.events.emit('reconciliation.mismatch', {
        status: f.kind,
        reason: f.detail,
        about: f.reference,
        ...(f.ourAmount !== undefined && f.ourCurrency !== undefined
          ? { amount: f.ourAmount, currency: f.ourCurrency }
          : {}),
      });
    }
  }

  private status(): ReconciliationRunStatus {
    const { carry } = this;
    return carry.windows.some((w) => w.error) ? 'incomplete' : carry.totals.findings > 0 ? 'mismatches' : 'clean';
  }
}

function resolveInput(raw: ReconcileInput): ResolvedReconcileInput {
  const parsed = ReconcileInputSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    throw ApplicationFailure.create({
      type: 'InvalidInput',
      message: `invalid reconciliation input: ${describeInputIssues(inputIssuesOf(parsed.error))}`,
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
