// Reconciliation as the workflow, the activities, the starters, the CLI and the tests see it:
// the input and its rules, the report, the query, the month windows, and the ONE mapping from
// a flow's PaymentStatus (per flow kind) and from the service's transaction_status to "money
// moved / no money / still open". Pure code: it runs in the workflow sandbox too.
//
// What is compared (docs/flows-reconciliation.md): every transaction the service's transaction list (A6)
// shows in a window is matched by reference with our flow (Temporal visibility: PaymentReference, PaymentStatus,
// PaymentAmount, PaymentCurrency); every flow of ours that says "success" and started in the
// window must be listed by the service.
import { defineQuery } from '@temporalio/workflow';
import type { z } from 'zod';
import { lazy, type Zod } from './lazy';

// ---- Ids -------------------------------------------------------------------------------------

/** The daily Schedule (created or updated idempotently by the worker process, also the one `npm start` spawns). */
export const RECONCILIATION_SCHEDULE_ID = 'reconciliation-daily';
/** The task queue whose Schedule has the plain id; another deployment in the same namespace gets its own (`reconciliation-daily-<task queue>`). */
export const DEFAULT_TASK_QUEUE = 'payments';
export const reconciliationScheduleId = (taskQueue: string): string =>
  taskQueue === DEFAULT_TASK_QUEUE ? RECONCILIATION_SCHEDULE_ID : `${RECONCILIATION_SCHEDULE_ID}-${taskQueue}`;
/** On-demand runs: one per range at a time (a second `cli reconcile` of the same range follows the running one). */
export const reconciliationWorkflowId = (from: string, to: string): string => `reconciliation-${from}-${to}`;
/** The record of a finding for one reference (closed flows cannot take a new search attribute; see the docs). */
export const reconciliationMarkWorkflowId = (reference: string): string => `reconciliation-mark-${reference}`;
/** PaymentFlow of a reconciliation run and of a mark; our side never reads these as flows. */
export const RECONCILIATION_FLOW = 'reconciliation';
export const RECONCILIATION_MARK_FLOW = 'reconciliation-mark';

// ---- Findings and the ReconciliationStatus search attribute ----------------------------------

export const FINDING_KINDS = [
  /** The service shows money (success) and our flow did not end in success (or no flow has the reference). */
  'mismatch_money_without_success',
  /** Our flow ended in success and the service shows no money for the reference (absent, failed or pending). */
  'mismatch_success_without_money',
  /** Both sides say money moved, for different amounts. */
  'mismatch_amount',
  /** Both sides say money moved, in different currencies. */
  'mismatch_currency',
  /** The service shows money for a flow that had ended expired/failed/cancelled before the payment arrived. */
  'late_payment',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/**
 * Values of the ReconciliationStatus search attribute. On a mark (PaymentFlow =
 * reconciliation-mark): a finding kind, or `resolved` once a later run found the reference in
 * agreement. On a reconciliation run (PaymentFlow = reconciliation): running, clean,
 * mismatches, or incomplete (a window could not be read).
 */
export type ReconciliationMarkStatus = FindingKind | 'resolved';
export type ReconciliationRunStatus = 'running' | 'clean' | 'mismatches' | 'incomplete';

/** One difference between the service and our flows. Never personal data: references, amounts, statuses, times. */
export interface ReconciliationFinding {
  kind: FindingKind;
  reference: string;
  /** Why, in words (which side said what). */
  detail: string;
  /** The month window (YYYY-MM-DD..YYYY-MM-DD) and currency pass that found it. */
  window: string;
  flow?: string;
  workflowId?: string;
  runId?: string;
  ourStatus?: string;
  ourAmount?: number;
  ourCurrency?: string;
  /** When our flow closed (ISO), for late payments and closed flows. */
  flowClosedAt?: string;
  serviceStatus?: string;
  serviceAmount?: number;
  serviceMerchantAmount?: number;
  serviceCurrency?: string;
  serviceCreatedAt?: string;
  /** The earliest sign that the payment arrived after the flow closed (a webhook's holding run, or created_at). */
  paidEvidenceAt?: string;
}

// ---- Input -----------------------------------------------------------------------------------

export const CURRENCIES = ['NGN', 'USD'] as const;
export type Currency = (typeof CURRENCIES)[number];

const DAY_MS = 24 * 3600 * 1000;
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** The longest range one run accepts (a typo such as 2042 for 2024 should not read 18 years). */
export const MAX_RANGE_DAYS = 3 * 366;

/** YYYY-MM-DD (UTC day) → epoch ms at 00:00 UTC, or undefined when it is not a real date. */
export function parseDay(v: string): number | undefined {
  if (!DATE_PATTERN.test(v)) return undefined;
  const t = Date.UTC(Number(v.slice(0, 4)), Number(v.slice(5, 7)) - 1, Number(v.slice(8, 10)));
  return formatDay(t) === v ? t : undefined;
}

/** Epoch ms → YYYY-MM-DD (UTC). */
export function formatDay(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}

export const addDays = (day: string, n: number): string => formatDay(parseDay(day)! + n * DAY_MS);

const day = lazy('reconciliation.day', (z) =>
  z
    .string({ error: 'must be a date YYYY-MM-DD' })
    .refine((v) => parseDay(v) !== undefined, 'must be a date YYYY-MM-DD'),
);

/** A whole number from 1 to `max` (the run's sizes). */
const wholeNumber = (z: Zod, max: number) =>
  z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(max, `must be at most ${max}`);

export const ReconcileInputSchema = lazy('reconciliation.ReconcileInputSchema', (z) =>
  z
    .strictObject({
      /** First day (UTC), inclusive. */
      from: day.optional(),
      /** Last day (UTC), inclusive. */
      to: day.optional(),
      /** The Schedule's form: the day before the run's scheduled time (UTC). */
      previousDay: z.literal(true, { error: 'must be true when given' }).optional(),
      /** Currencies to read: the transaction list (A6) is asked once per currency. Default NGN and USD. */
      currencies: z
        .array(z.enum(CURRENCIES, { error: 'must be NGN or USD' }))
        .min(1, 'must name at least one currency')
        .optional(),
      /** The transaction list's `perpage` (A6; the spec shows no default or maximum page size). Default 100. */
      perPage: wholeNumber(z, 1000).optional(),
      /** Record each finding as a mark (ReconciliationStatus). Default true. */
      markFlows: z.boolean({ error: 'must be true or false' }).optional(),
      /** Findings listed in the report (all are counted and marked). Default 500. */
      maxFindings: wholeNumber(z, 2000).optional(),
      /** Windows (month x currency) per workflow run before continue-as-new. Default 24. */
      windowsPerRun: wholeNumber(z, 200).optional(),
    })
    .superRefine((v, ctx) => {
      if (v.previousDay) {
        if (v.from !== undefined || v.to !== undefined)
          ctx.addIssue({ code: 'custom', path: ['previousDay'], message: 'cannot be combined with from/to' });
        return;
      }
      if (v.from === undefined)
        ctx.addIssue({ code: 'custom', path: ['from'], message: 'is required (a date YYYY-MM-DD)' });
      if (v.to === undefined)
        ctx.addIssue({ code: 'custom', path: ['to'], message: 'is required (a date YYYY-MM-DD)' });
      const from = v.from === undefined ? undefined : parseDay(v.from);
      const to = v.to === undefined ? undefined : parseDay(v.to);
      if (from === undefined || to === undefined) return;
      if (from > to) ctx.addIssue({ code: 'custom', path: ['from'], message: 'must not be after to' });
      else if ((to - from) / DAY_MS + 1 > MAX_RANGE_DAYS)
        ctx.addIssue({ code: 'custom', path: ['to'], message: `must be at most ${MAX_RANGE_DAYS} days after from` });
    }),
);
export type ReconcileInput = z.input<typeof ReconcileInputSchema>;

/** What a run works on once the range is known. */
export interface ResolvedReconcileInput {
  from: string;
  to: string;
  currencies: Currency[];
  perPage: number;
  markFlows: boolean;
  maxFindings: number;
  windowsPerRun: number;
}

export const RECONCILE_DEFAULTS = {
  perPage: 100,
  markFlows: true,
  maxFindings: 500,
  windowsPerRun: 24,
  currencies: [...CURRENCIES],
} as const;

/** The day before `t` (UTC). */
export const previousDayOf = (t: number): string => formatDay(Math.floor(t / DAY_MS) * DAY_MS - DAY_MS);

// ---- Month windows ---------------------------------------------------------------------------

export interface DayWindow {
  /** YYYY-MM-DD, inclusive. */
  start: string;
  /** YYYY-MM-DD, inclusive. */
  end: string;
}

/** The same day one calendar month later (clamped to that month's last day), as the API client and sandbox count. */
export function addOneMonth(dayText: string): string {
  const t = parseDay(dayText)!;
  const d = new Date(t);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 2, 0)).getUTCDate();
  return formatDay(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, Math.min(d.getUTCDate(), lastDay)));
}

/**
 * The transaction list (A6) accepts "a window of at most one month". Whether end_date's whole day counts is
 * not shown, so a window we send ends at most on the day BEFORE the same day next month: [01-15, 02-14],
 * [01-01, 01-31]. Both ends must be real dates, start ≤ end.
 */
export function isWithinOneMonth(w: DayWindow): boolean {
  const s = parseDay(w.start);
  const e = parseDay(w.end);
  return s !== undefined && e !== undefined && s <= e && e < parseDay(addOneMonth(w.start))!;
}

/** Splits [from, to] (inclusive days) into calendar-month windows: each lies within one month, together they cover the range exactly. */
export function splitIntoMonthWindows(from: string, to: string): DayWindow[] {
  const start = parseDay(from);
  const end = parseDay(to);
  if (start === undefined || end === undefined) throw new RangeError('from and to must be dates YYYY-MM-DD');
  if (start > end) return [];
  const windows: DayWindow[] = [];
  let cursor = start;
  while (cursor <= end) {
    const d = new Date(cursor);
    const monthEnd = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0);
    const windowEnd = Math.min(monthEnd, end);
    windows.push({ start: formatDay(cursor), end: formatDay(windowEnd) });
    cursor = windowEnd + DAY_MS;
  }
  return windows;
}

/** A window around a flow's start for a lookup by reference: from the day before, within one month. */
export function lookupWindowAround(startedAt: number): DayWindow {
  const start = previousDayOf(startedAt);
  return { start, end: addDays(addOneMonth(start), -1) };
}

// ---- The one mapping: statuses → money / no money / open ---------------------------------------

/**
 * money: the side says money moved. no_money: it says none did (final). open: not decided yet
 * (waiting, confirming, parked as outcome_unknown). not_a_transaction: a workflow that carries
 * a PaymentReference but is no service transaction (a recurring plan, a mandate, a terminal
 * lock, a holding workflow, a mark). not_comparable: a transaction the transaction list (A6) does not
 * show under our reference (see COMPARABLE below).
 */
export type Outcome = 'money' | 'no_money' | 'open' | 'not_a_transaction' | 'not_comparable';

interface FlowStatusMap {
  money: readonly string[];
  noMoney: readonly string[];
}

/** Card, bank, USSD, hosted checkout, token charges (the shared payment steps; docs/money-decisions.md). */
const PAYMENT_STEPS: FlowStatusMap = {
  money: ['success'],
  // `unknown` (older flows' final "not proven") is not money: the flow never recorded a success.
  noMoney: ['failed', 'expired', 'cancelled', 'unknown'],
};

/**
 * Per PaymentFlow: how its PaymentStatus reads. Flows whose PaymentReference is the `transaction_ref` of the
 * transaction list (A6) are compared; the others are named with the reason they are not.
 */
export const FLOW_OUTCOMES: Record<string, FlowStatusMap | { notComparable: string } | { notATransaction: string }> = {
  card: PAYMENT_STEPS,
  bank: PAYMENT_STEPS,
  ussd: PAYMENT_STEPS,
  checkout: PAYMENT_STEPS,
  // The first payment (a checkout) and each cycle (a token charge) carry their cycle reference; the plan is handled below by workflow type.
  recurring: PAYMENT_STEPS,
  mandate: { notATransaction: 'a mandate; its debits are compared one by one (mandate-debit)' },
  /** One debit of a mandate, read from the mandate flow's state (MandateDebitStatus), not from visibility. */
  'mandate-debit': { money: ['success'], noMoney: ['failed'] },
  /**
   * Found by its request_ref (PaymentServiceReference), under which the transaction list (A6) shows it; `rejected`,
   * `not_sent`: nothing was created.
   */
  'pos-remote': {
    money: ['success', 'success_after_cancel'],
    noMoney: ['failed', 'cancelled', 'expired', 'rejected', 'not_sent'],
  },
  'pos-terminal': {
    notComparable: 'POS terminal sales (F3) are read with their requery (F4), not from the transaction list (A6)',
  },
  'pos-refund': {
    notComparable:
      'POS refunds (F3, transaction_type Refund) are read with their requery (F4), not from the transaction list (A6)',
  },
  'pos-preauth': {
    notComparable:
      'POS pre-authorisations and completions (F3) are read with their requery (F4), not from the transaction list (A6)',
  },
  'pos-refund-ledger': { notATransaction: "a sale's refund ledger" },
  vend: { notComparable: 'vends (H3) are read from the vending transactions (H4), not from the transaction list (A6)' },
  'sms-send': { notATransaction: 'SMS sends are not payments: the transaction list (A6) does not show them' },
  'sms-campaign': { notATransaction: 'SMS campaigns are not payments: the transaction list (A6) does not show them' },
  'virtual-account-credit': {
    notComparable:
      'virtual-account credits are read from the filtered credit list (C5), not from the transaction list (A6)',
  },
  'pos-terminal-lock': { notATransaction: 'a terminal lock' },
  'unmatched-webhook': {
    notATransaction: 'a webhook with no flow (kept as evidence of when the payment was announced)',
  },
  [RECONCILIATION_MARK_FLOW]: { notATransaction: 'a reconciliation mark' },
  [RECONCILIATION_FLOW]: { notATransaction: 'a reconciliation run' },
};

/** Workflow types that carry a flow's PaymentFlow but are no transaction themselves. */
const NOT_A_TRANSACTION_TYPES: Record<string, string> = {
  recurringChargeWorkflow: 'a recurring plan; its cycles are their own flows',
};

/** Our side: what a flow's PaymentStatus says. */
export function ourOutcome(
  flow: string | undefined,
  status: string | undefined,
  workflowType?: string,
): { outcome: Outcome; reason?: string } {
  if (workflowType && NOT_A_TRANSACTION_TYPES[workflowType])
    return { outcome: 'not_a_transaction', reason: NOT_A_TRANSACTION_TYPES[workflowType] };
  const map = flow === undefined ? undefined : FLOW_OUTCOMES[flow];
  if (!map)
    return { outcome: 'not_comparable', reason: `flow kind ${flow ?? '(none)'} is not known to reconciliation` };
  if ('notComparable' in map) return { outcome: 'not_comparable', reason: map.notComparable };
  if ('notATransaction' in map) return { outcome: 'not_a_transaction', reason: map.notATransaction };
  return { outcome: statusOutcome(map, status) };
}

function statusOutcome(map: FlowStatusMap, status: string | undefined): Outcome {
  if (status !== undefined && map.money.includes(status)) return 'money';
  if (status !== undefined && map.noMoney.includes(status)) return 'no_money';
  return 'open';
}

/** Every PaymentStatus value that means money for a compared flow kind (the visibility query of our successes). */
export function moneyStatusesByFlow(): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = {};
  for (const [flow, map] of Object.entries(FLOW_OUTCOMES)) if ('money' in map) out[flow] = map.money;
  return out;
}

/**
 * The service side: the transaction list's transaction_status (A6; the spec shows "success"; verify's values are
 * Success, Failed, Abandoned, Pending). Anything else is not guessed: not_comparable.
 */
export function serviceOutcome(status: string): Outcome {
  const s = status.trim().toLowerCase();
  if (s === 'success' || s === 'successful') return 'money';
  if (['failed', 'failure', 'abandoned', 'declined', 'reversed', 'cancelled', 'expired'].includes(s)) return 'no_money';
  if (['pending', 'processing', 'initiated', 'ongoing'].includes(s)) return 'open';
  return 'not_comparable';
}

// ---- Comparing one reference ------------------------------------------------------------------

/** One row of the transaction list (A6), as little of it as the comparison needs (no e-mail, no name, no meta). */
export interface ServiceTransaction {
  reference: string;
  status: string;
  /** transaction_amount: what the payer paid (lowest unit). */
  amount: number;
  /** merchant_amount: what the merchant got. */
  merchantAmount?: number;
  currency?: string;
  createdAt?: string;
}

/** Our flow for one reference, as visibility (or a mandate's state) shows it. */
export interface OurTransaction {
  flow: string;
  workflowType?: string;
  workflowId: string;
  runId?: string;
  status?: string;
  amount?: number;
  currency?: string;
  /** The execution closed (completed, failed, terminated, timed out, …). */
  closed: boolean;
  closeTime?: string;
  /** A payment webhook for the reference found no running flow after this flow closed: its holding run's start (ISO). */
  webhookAfterCloseAt?: string;
}

export type Comparison =
  | { result: 'matched' | 'open' | 'no_money_both' }
  | { result: 'not_comparable'; reason: string }
  | { result: 'finding'; kind: FindingKind; detail: string; paidEvidenceAt?: string };

/**
 * The rule, in one function. `ours` is undefined when no flow of ours carries the reference.
 * Amounts: our PaymentAmount equals transaction_amount, or merchant_amount (pass_charge: the
 * payer paid amount + charge). Integers only; compared exactly.
 */
export function compareTransaction(service: ServiceTransaction, ours: OurTransaction | undefined): Comparison {
  const s = serviceOutcome(service.status);
  if (s === 'not_comparable')
    return { result: 'not_comparable', reason: `service status "${service.status}" is not known` };
  if (!ours) {
    if (s === 'money')
      return {
        result: 'finding',
        kind: 'mismatch_money_without_success',
        detail: 'the service shows a successful payment that no flow of ours carries',
      };
    return { result: s === 'open' ? 'open' : 'no_money_both' };
  }
  const mapped = ourOutcome(ours.flow, ours.status, ours.workflowType);
  if (mapped.outcome === 'not_comparable' || mapped.outcome === 'not_a_transaction')
    return { result: 'not_comparable', reason: mapped.reason ?? mapped.outcome };
  // A flow that closed without deciding (terminated, timed out, failed as a workflow) never recorded a success.
  const o: Outcome = mapped.outcome === 'open' && ours.closed ? 'no_money' : mapped.outcome;

  if (s === 'money' && o === 'money') {
    if (
      ours.currency !== undefined &&
      service.currency !== undefined &&
      ours.currency.toUpperCase() !== service.currency.toUpperCase()
    ) {
      return {
        result: 'finding',
        kind: 'mismatch_currency',
        detail: `the service took ${service.currency}, the flow asked for ${ours.currency}`,
      };
    }
    if (ours.amount !== undefined && service.amount !== ours.amount && service.merchantAmount !== ours.amount) {
      const merchant = service.merchantAmount !== undefined ? ` (merchant_amount ${service.merchantAmount})` : '';
      return {
        result: 'finding',
        kind: 'mismatch_amount',
        detail: `the service shows ${service.amount}${merchant}, the flow succeeded for ${ours.amount}`,
      };
    }
    return { result: 'matched' };
  }
  if (s === 'money' && o === 'no_money') {
    const evidence = latePaymentEvidence(service, ours);
    const ended = `${ours.status ?? 'no status'}${mapped.outcome === 'open' ? ' (closed without a decision)' : ''}`;
    if (evidence) {
      return {
        result: 'finding',
        kind: 'late_payment',
        detail: `the flow ended ${ended} at ${ours.closeTime}; the payment arrived after it (${evidence.what} at ${evidence.at})`,
        paidEvidenceAt: evidence.at,
      };
    }
    return {
      result: 'finding',
      kind: 'mismatch_money_without_success',
      detail: `the service shows a successful payment; the flow says ${ended}`,
    };
  }
  if (s === 'money' && o === 'open') return { result: 'open' };
  if (o === 'money') {
    return {
      result: 'finding',
      kind: 'mismatch_success_without_money',
      detail: `the flow says success; the service shows ${service.status}`,
    };
  }
  return { result: s === 'open' || o === 'open' ? 'open' : 'no_money_both' };
}

/** Late: the flow had closed before the payment arrived (its record was created, or its webhook came, after the close). */
function latePaymentEvidence(
  service: ServiceTransaction,
  ours: OurTransaction,
): { at: string; what: string } | undefined {
  if (!ours.closed || !ours.closeTime) return undefined;
  const closed = Date.parse(ours.closeTime);
  const created = service.createdAt ? Date.parse(service.createdAt) : NaN;
  if (!Number.isNaN(created) && created > closed)
    return { at: service.createdAt!, what: 'the transaction was created' };
  if (ours.webhookAfterCloseAt && Date.parse(ours.webhookAfterCloseAt) > closed)
    return { at: ours.webhookAfterCloseAt, what: 'its payment webhook came' };
  return undefined;
}

// ---- Per-window summary and the report ----------------------------------------------------------

export interface WindowCounts {
  /** Rows of the transaction list (A6) read (after dropping repeats across pages and rows of another currency). */
  rows: number;
  matched: number;
  /** Neither side says money moved (failed/abandoned at the service; failed/expired or no flow here). */
  noMoneyBoth: number;
  /** One side has not decided yet (pending at the service, or a flow still waiting / outcome_unknown). */
  open: number;
  /** Rows that cannot be compared by reference (POS remote requests, refunds, unknown statuses, mandate debits beyond the flow's kept list). */
  notComparable: number;
  /** Our successful flows started in the window that the service must list. */
  ourSuccessesChecked: number;
  findings: number;
  marked: number;
  resolved: number;
}

export interface WindowSummary extends WindowCounts {
  start: string;
  end: string;
  currency: Currency;
  pages: number;
  /** By finding kind. */
  byKind: Partial<Record<FindingKind, number>>;
  /** Why rows were not comparable, with counts. */
  notComparableReasons: Record<string, number>;
  /** The findings of this window (at most `maxFindings`). */
  findingList: ReconciliationFinding[];
  findingsOmitted: number;
  /** Set when the window could not be read (the run is then incomplete). */
  error?: string;
}

export type ReconciliationTotals = WindowCounts & { pages: number; byKind: Partial<Record<FindingKind, number>> };

export interface ReconciliationReport {
  from: string;
  to: string;
  currencies: Currency[];
  status: Exclude<ReconciliationRunStatus, 'running'>;
  windows: Omit<WindowSummary, 'findingList' | 'findingsOmitted'>[];
  totals: ReconciliationTotals;
  /** Findings, de-duplicated by kind and reference, at most `maxFindings`; the rest are counted in findingsOmitted (and marked). */
  findings: ReconciliationFinding[];
  findingsOmitted: number;
  startedAt: string;
  finishedAt: string;
}

export interface ReconciliationProgress {
  status: ReconciliationRunStatus;
  from: string;
  to: string;
  windowsTotal: number;
  windowsDone: number;
  /** The window being read. */
  current?: { start: string; end: string; currency: Currency };
  totals: ReconciliationTotals;
}

export const reconciliationProgressQuery = defineQuery<ReconciliationProgress>('reconciliationProgress');

/** The totals' counters, in the report's order. */
const COUNTERS = [
  'rows',
  'matched',
  'noMoneyBoth',
  'open',
  'notComparable',
  'ourSuccessesChecked',
  'findings',
  'marked',
  'resolved',
  'pages',
] as const;

export function emptyTotals(): ReconciliationTotals {
  const counters = Object.fromEntries(COUNTERS.map((k) => [k, 0])) as Record<(typeof COUNTERS)[number], number>;
  return { ...counters, byKind: {} };
}

/** A window's summary before anything is read (also what an unreadable window reports, with its error). */
export function emptyWindowSummary({ start, end, currency }: DayWindow & { currency: Currency }): WindowSummary {
  return { start, end, currency, ...emptyTotals(), notComparableReasons: {}, findingList: [], findingsOmitted: 0 };
}

/** Adds a window's counts into totals (in place). */
export function addToTotals(t: ReconciliationTotals, w: WindowSummary): void {
  for (const k of COUNTERS) t[k] += w[k];
  for (const [k, n] of Object.entries(w.byKind) as [FindingKind, number][]) t.byKind[k] = (t.byKind[k] ?? 0) + n;
}

/** What the window activity is asked. */
export interface ReconcileWindowInput {
  start: string;
  end: string;
  currency: Currency;
  perPage: number;
  markFlows: boolean;
  maxFindings: number;
  /** The reconciliation run's workflow id (recorded on marks). */
  reconciliationId: string;
}

/** The mark workflow's input: the finding (or a resolution) as recorded. */
export interface ReconciliationMark {
  status: ReconciliationMarkStatus;
  reference: string;
  reconciliationId: string;
  finding?: ReconciliationFinding;
  /** For `resolved`: the status it replaces. */
  previous?: string;
  /** For `resolved` by an operator (cli ops resolve-finding): who and why. */
  resolution?: { operator: string; reason: string; at: string };
}
