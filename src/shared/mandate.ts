// The direct-debit mandate flow's contract: input, state, updates, signal and query, the FIXED
// schedule and the input checks, defined once for the workflow, the starters and the tests.
// Pure code only: the workflow bundle imports this file.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { isClaimHandle } from './claim-check';
import type { MerchantEventInput } from './merchant-event';
import { pickFinal } from './final-statuses';

/** N200: the service's minimum direct debit, in kobo. */
export const MINIMUM_DEBIT_KOBO = 20_000;
/** How many debits the state (and so the query) keeps; older ones live in earlier runs' histories. */
export const MANDATE_DEBITS_KEPT = 50;
/** Default debits per run before continue-as-new (see docs/flows-mandates.md). */
export const DEFAULT_DEBITS_PER_RUN = 50;

export type MandateFrequency = 'MONTHLY' | 'WEEKLY' | 'YEARLY';
export const MANDATE_FREQUENCIES: readonly MandateFrequency[] = ['MONTHLY', 'WEEKLY', 'YEARLY'];
/** At most one scheduled debit a day: the largest `interval` per frequency. */
export const MAX_INTERVAL: Record<MandateFrequency, number> = { WEEKLY: 7, MONTHLY: 28, YEARLY: 365 };

export type FixedDebits = 'observe' | 'send';
export const FIXED_DEBITS: readonly FixedDebits[] = ['observe', 'send'];
/** FIXED, observe: the mandate lookups after a scheduled date, in ms after its 00:00 UTC. */
export const OBSERVE_READS_DEFAULT_MS: readonly number[] = [6, 12, 24, 48].map((h) => h * 3600 * 1000);

export interface FixedMandateSettings {
  frequency: MandateFrequency;
  /** Debits per frequency period (the spec: "debit count within the frequency"). */
  interval: number;
  /** The amount of every scheduled debit, kobo (the spec names only the initial one). */
  initialDebitAmount: number;
  /** YYYY-MM-DD, the first scheduled debit. */
  initialDebitDate: string;
}

/** The customer as the workflow knows them: a handle to the sealed BVN, no BVN digits. */
export interface MandateCustomer {
  bvnHandle: string;
  firstName: string;
  lastName: string;
  address: string;
  phone: string;
}

/** What a backend passes to startMandate: the MandateInput with the customer's BVN in clear (sealed by the starter). */
export type MandateRequest = Omit<MandateInput, 'customer'> & {
  customer: Omit<MandateCustomer, 'bvnHandle'> & { bvn: string };
};

export interface MandateInput extends MerchantEventInput {
  /** Our stable business reference; also the mandate's transaction_reference at the service. */
  mandateRef: string;
  debitType: 'variable' | 'fixed';
  /** Total mandated over the cycle, kobo. */
  amount: number;
  accountNumber: string;
  bankCode: string;
  description: string;
  /** YYYY-MM-DD */
  startDate: string;
  endDate: string;
  customerEmail: string;
  /**
   * Identity data the service checks against the BVN. The BVN itself is never here: the starter
   * seals it into the claim-check store (purpose 'bvn') and `bvnHandle` names the sealed record,
   * which the create activity redeems. Never in state or queries.
   */
  customer: MandateCustomer;
  fixed?: FixedMandateSettings;
  /**
   * FIXED: who debits on the schedule. 'observe' (the default): the service does, since the create gave it
   * fixedMandateSettings; the flow sends no debit and looks the mandate up (D5) after each date to report the debit it
   * made. 'send': the flow sends each scheduled debit (D3) from its own timers, for a service that
   * does not debit by itself (docs/choices.md).
   */
  fixedDebits?: FixedDebits;
  /** FIXED, observe: when the mandate is looked up after a scheduled date (ms after the date's 00:00 UTC), until the debit shows. Default 6 h, 12 h, 24 h, 48 h. */
  observeReadsMs?: number[];
  /** How long to wait for the customer's OTP (ms). Default 15 minutes. */
  otpTimeoutMs?: number;
  /** How many times an expired session is answered with a fresh OTP before the mandate expires. Default 2. */
  maxSessionResends?: number;
  /** Narration sent with scheduled debits (and requested ones that bring none). Default: the description. */
  narration?: string;
  /** Debits per run before continue-as-new keeps history bounded. Default 50. */
  debitsPerRun?: number;
  /** FIXED: how many times a refused scheduled debit is tried again (new reference each time). Default 2. */
  scheduledDebitRetries?: number;
  /** FIXED: the wait before trying a refused scheduled debit again (ms). Default 1 day. */
  scheduledRetryDelayMs?: number;
  /** Pause before a debit's requery after a lost debit answer (send-once's settleMs). Default 3 s. */
  debitSettleMs?: number;
  /** A debit the service reports pending is requeried at these waits (ms), then parked as outcome_unknown. Default 5 s, 15 s, 45 s, 2 min. */
  pendingRequeryMs?: number[];
  /** How long an outcome_unknown debit keeps being requeried in the background (ms). Default 7 days; after that only an operator resolves it. */
  unresolvedRequeryForMs?: number;
  /** Background requery backoff of an outcome_unknown debit: first and longest wait (ms). Default 1 min, doubling up to 1 hour. */
  unresolvedRequeryFirstMs?: number;
  unresolvedRequeryMaxMs?: number;
}

export interface DebitSafetySettings {
  debitSettleMs: number;
  pendingRequeryMs: readonly number[];
  unresolvedRequeryForMs: number;
  unresolvedRequeryFirstMs: number;
  unresolvedRequeryMaxMs: number;
}

/** Defaults of the debit-safety settings above (docs/flows-mandates.md). */
export const DEBIT_SAFETY_DEFAULTS: Readonly<DebitSafetySettings> = {
  debitSettleMs: 3_000,
  pendingRequeryMs: [5_000, 15_000, 45_000, 120_000],
  unresolvedRequeryForMs: 7 * 24 * 3600 * 1000,
  unresolvedRequeryFirstMs: 60_000,
  unresolvedRequeryMaxMs: 3600 * 1000,
};

export type MandateStatus = 'creating' | 'awaiting_otp' | 'approved' | 'cancelled' | 'expired' | 'completed' | 'failed';
export const FINAL_MANDATE_STATUSES: readonly MandateStatus[] = pickFinal([
  'cancelled',
  'expired',
  'completed',
  'failed',
]);

/**
 * success: applied; failed: refused or failed, no money moved; pending: the service said pending
 * and is being requeried; outcome_unknown: not proven either way (requeried in the background,
 * resolvable by an operator). `unknown` is the same as outcome_unknown in flows started before
 * the debit-safety change.
 */
export type MandateDebitStatus = 'success' | 'failed' | 'pending' | 'outcome_unknown' | 'unknown';

export interface MandateDebit {
  sequence: number;
  /**
   * The debit's transaction_reference, the same on every attempt: requested debits
   * `${mandateRef}-K<hash of the idempotency key>` (debitKeyReference); scheduled debits (and
   * requested ones of older flows) `${mandateRef}-D${sequence}`; observed ones (FIXED, the service's
   * own debit) `${mandateRef}-F<date number>` (observedDebitReference), our name, not the service's.
   */
  reference: string;
  /** The caller's idempotency key (requested debits); scheduled debits: the reference. */
  key?: string;
  amount: number;
  status: MandateDebitStatus;
  /** observed: a FIXED debit the service made on its own schedule, seen in the mandate lookup (no debit of ours). */
  kind: 'requested' | 'scheduled' | 'observed';
  /** Workflow time the debit was decided. */
  at: string;
  /** FIXED: the scheduled date this debit serves. */
  scheduledFor?: string;
  /** How the outcome was established when the debit gave no plain answer. */
  confirmedBy?: 'response' | 'requery' | 'resend' | 'operator' | 'observed';
  /** The debit's `data.status` when it answered. */
  serviceStatus?: string;
  error?: string;
  /** outcome_unknown: the next background requery (ISO), and when requerying stops (ISO). */
  nextRequeryAt?: string;
  requeryUntil?: string;
  requeries?: number;
  /** Consecutive background requeries that found no record of the reference. */
  absentReads?: number;
  /** An operator's resolution (resolveDebit). */
  resolution?: DebitResolution;
}

export interface DebitResolution {
  outcome: 'debited' | 'not_debited';
  reason: string;
  operator: string;
  /** Workflow time of the resolution. */
  at: string;
}

export interface MandateState {
  status: MandateStatus;
  mandateRef: string;
  mandateId?: string;
  mandateReferenceNumber?: string;
  debitType: 'variable' | 'fixed';
  amount: number;
  /** amount − totalDebited, as this flow has confirmed it. */
  balance: number;
  /** Sum of this flow's confirmed debits (the flow is the mandate's only debitor). */
  totalDebited: number;
  /** The last debits (MANDATE_DEBITS_KEPT), each with its reference and outcome. */
  recentDebits: MandateDebit[];
  /** Debits sent over the mandate's life (every run). */
  debitCount: number;
  /**
   * Debits whose outcome is not proven (pending or outcome_unknown): requeried in the background,
   * resolvable by resolveDebit. They do not block new debits; their amounts are held back from
   * `available` until resolved.
   */
  unresolvedDebits: MandateDebit[];
  /** balance minus the unresolved debits' amounts: what a new debit may take. */
  available?: number;
  failures: string[];
  /** FIXED: index of the next scheduled date; dates skipped before approval. */
  scheduleIndex: number;
  skippedBeforeApproval: number;
  nextDebitAt?: string;
  endReason?: string;
}

export interface DebitRequest {
  amount: number;
  narration?: string;
  /**
   * The caller's idempotency key (1-100 of letters, digits, `_ . : -`). The same key twice gives
   * the same debit (its current state), never a second one; the debit's reference is derived from it.
   * The starter makes one when the caller brings none and returns it in `MandateDebit.key`.
   */
  idempotencyKey?: string;
}

export const IDEMPOTENCY_KEY_RULE = {
  pattern: /^[A-Za-z0-9_.:-]{1,100}$/,
  message: 'idempotencyKey must be 1-100 letters, digits, _ . : or -',
} as const;
/** How many idempotency keys a mandate's state keeps (older keys still map to the same reference, which the service refuses as a duplicate). */
export const MANDATE_KEYS_KEPT = 500;

/** An operator's decision on a debit whose outcome stayed unknown. */
export interface ResolveDebitRequest {
  /** The debit's idempotency key or its reference. */
  debitKey: string;
  outcome: 'debited' | 'not_debited';
  reason: string;
  operator: string;
}

/** Carried across continue-as-new; the session token is gone by then (approved). */
export interface MandateCarry {
  state: MandateState;
  sequence: number;
  /** The debits the flow keeps (the last MANDATE_KEYS_KEPT and every unresolved one), and the idempotency keys → references. */
  debits?: MandateDebit[];
  keys?: Record<string, string>;
  /** The merchant events emitted so far (their data.sequence goes on from here). */
  eventSequence?: number;
}

export const mandateStateQuery = defineQuery<MandateState>('mandateState');
/** Every debit the flow keeps (up to MANDATE_KEYS_KEPT, unresolved ones always), for reconciliation. */
export interface MandateDebitsAnswer {
  debits: MandateDebit[];
  /** The last debit sequence used: a `${mandateRef}-D<n>` with a higher n was never made by this flow. */
  lastSequence: number;
}
/** The kept debits (not only the last MANDATE_DEBITS_KEPT the state shows); with references, only those. */
export const mandateDebitsQuery = defineQuery<MandateDebitsAnswer, [string[]?]>('mandateDebits');
/**
 * The customer's OTP as a claim-check handle (purpose 'mandate-otp'; the starter seals it); answers
 * the new state, or fails with the reason (wrong OTP, expired session, SecretUnavailable: send it again).
 */
export const submitMandateOtpUpdate = defineUpdate<MandateState, [string]>('submitMandateOtp');
/** The OTP's format, checked by the starter before it seals the OTP (the workflow sees only a handle). */
export const MANDATE_OTP_RULE = { pattern: /^\d{4,8}$/, message: 'otp must be 4 to 8 digits' } as const;
/** The OTP is resent (D6) on request while the flow waits for it. */
export const resendMandateOtpUpdate = defineUpdate<MandateState, []>('resendMandateOtp');
/** A VARIABLE mandate's debit on request; the validator refuses < N200, > balance, or a mandate not approved. */
export const debitMandateUpdate = defineUpdate<MandateDebit, [DebitRequest]>('debitMandate');
/** Cancels the mandate (D4); answers the final state. Cancelling a cancelled mandate answers the same state. */
export const cancelMandateUpdate = defineUpdate<MandateState, []>('cancelMandate');
export const cancelMandateSignal = defineSignal('cancelMandateRequested');
/** Resolves a pending / outcome_unknown debit by an operator's decision (recorded in the debit's `resolution`); answers the debit. */
export const resolveDebitUpdate = defineUpdate<MandateDebit, [ResolveDebitRequest]>('resolveDebit');

export const mandateWorkflowId = (mandateRef: string): string => `mandate-${mandateRef}`;
export const debitReference = (mandateRef: string, sequence: number): string => `${mandateRef}-D${sequence}`;
/**
 * Our name for the debit the service made on a FIXED mandate's `index`-th date (0-based): the lookup shows
 * only totals, not the service's own reference. It is the observed debit's `reference` and its
 * events' `part`.
 */
export const observedDebitReference = (mandateRef: string, index: number): string => `${mandateRef}-F${index + 1}`;

/**
 * A 64-bit FNV-1a digest of the key in base 36 (13 characters): deterministic, pure (runs in the
 * workflow sandbox), and short enough that `${mandateRef}-K<digest>` stays within the service's
 * 100-character reference.
 */
export function keyDigest(key: string): string {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < key.length; i++) {
    h ^= BigInt(key.charCodeAt(i)); // UTF-16 code units: keys are ASCII (IDEMPOTENCY_KEY_RULE)
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(36).padStart(13, '0');
}

/** A requested debit's reference (D3), derived from its idempotency key: the same key always names the same debit at the service. */
export const debitKeyReference = (mandateRef: string, idempotencyKey: string): string =>
  `${mandateRef}-K${keyDigest(idempotencyKey)}`;

/** Unresolved: the service has not (yet) shown whether the debit moved money. */
export const isUnresolvedDebit = (d: Pick<MandateDebit, 'status'>): boolean =>
  d.status === 'pending' || d.status === 'outcome_unknown' || d.status === 'unknown';

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const DAY_MS = 24 * 3600 * 1000;

/** YYYY-MM-DD (UTC midnight) → epoch ms. */
export function dateToMs(date: string): number {
  return Date.parse(`${date}T00:00:00.000Z`);
}

/** The last instant of a YYYY-MM-DD day (UTC): end_date is inclusive. */
export function endOfDayMs(date: string): number {
  return dateToMs(date) + DAY_MS - 1;
}

/** UTC midnight of the day holding `ms`. */
export function startOfDayMs(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Adds whole months to a UTC date, clamping to the month's last day (Jan 31 + 1 month = Feb 28/29). */
function addMonthsClamped(ms: number, months: number): number {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(y, m, Math.min(d.getUTCDate(), lastDay));
}

/**
 * The FIXED schedule's `index`-th debit (0-based), at 00:00 UTC of its day.
 * Period p = floor(index / interval) starts on initial_debit_date plus p weeks / months / years
 * (months and years clamp to the month's last day: a mandate started on the 31st debits on the
 * 30th in April and on the 28th or 29th in February). Inside a period, the `interval` debits are
 * spread evenly over its days (MONTHLY with interval 2 from the 1st: the 1st and about the 15th/16th).
 */
export function scheduledDebitAt(
  fixed: Pick<FixedMandateSettings, 'frequency' | 'interval' | 'initialDebitDate'>,
  index: number,
): number {
  const start = dateToMs(fixed.initialDebitDate);
  const period = Math.floor(index / fixed.interval);
  const slot = index % fixed.interval;
  let from: number;
  let to: number;
  if (fixed.frequency === 'WEEKLY') {
    from = start + period * 7 * DAY_MS;
    to = from + 7 * DAY_MS;
  } else {
    const months = fixed.frequency === 'MONTHLY' ? 1 : 12;
    from = addMonthsClamped(start, period * months);
    to = addMonthsClamped(start, (period + 1) * months);
  }
  const days = Math.round((to - from) / DAY_MS);
  return from + Math.floor((days * slot) / fixed.interval) * DAY_MS;
}

/** The whole FIXED schedule up to end_date (inclusive), at most `max` dates. */
export function fixedSchedule(fixed: FixedMandateSettings, endDate: string, max = 1000): number[] {
  const end = endOfDayMs(endDate);
  const out: number[] = [];
  for (let i = 0; out.length < max; i++) {
    const at = scheduledDebitAt(fixed, i);
    if (at > end) break;
    out.push(at);
  }
  return out;
}

/**
 * The checks both the starter (with zod, for field-by-field messages) and the workflow (for a
 * flow started some other way) apply before the create. Returns "field rule" strings; empty when fine.
 */
export function mandateInputProblems(input: MandateInput): string[] {
  const p: string[] = [];
  const isKobo = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
  if (typeof input.mandateRef !== 'string' || !/^[A-Za-z0-9_-]{1,60}$/.test(input.mandateRef))
    p.push('mandateRef must be 1-60 letters, digits, _ or -');
  if (input.debitType !== 'variable' && input.debitType !== 'fixed') p.push('debitType must be variable or fixed');
  if (!isKobo(input.amount) || input.amount < MINIMUM_DEBIT_KOBO)
    p.push('amount must be an integer of at least 20000 kobo (N200)');
  if (!DATE.test(String(input.startDate))) p.push('startDate must be a date YYYY-MM-DD');
  if (!DATE.test(String(input.endDate))) p.push('endDate must be a date YYYY-MM-DD');
  const datesOk = DATE.test(String(input.startDate)) && DATE.test(String(input.endDate));
  if (datesOk && input.endDate < input.startDate) p.push('endDate must not be before startDate');
  if (input.debitType === 'fixed' && !input.fixed) p.push('fixed is required for a FIXED mandate');
  if (input.debitType === 'variable' && input.fixed) p.push('fixed applies only to a FIXED mandate');
  if (input.fixedDebits !== undefined && !FIXED_DEBITS.includes(input.fixedDebits))
    p.push('fixedDebits must be observe or send');
  else if (input.fixedDebits !== undefined && input.debitType !== 'fixed')
    p.push('fixedDebits applies only to a FIXED mandate');
  const reads = input.observeReadsMs;
  if (
    reads !== undefined &&
    (!Array.isArray(reads) ||
      reads.length < 1 ||
      reads.length > 10 ||
      reads.some((ms, n) => !Number.isSafeInteger(ms) || ms < 0 || (n > 0 && ms <= reads[n - 1])))
  )
    p.push('observeReadsMs must be 1 to 10 increasing whole numbers of ms (0 or more)');
  const f = input.fixed;
  if (input.debitType === 'fixed' && f) {
    if (!MANDATE_FREQUENCIES.includes(f.frequency)) p.push('fixed.frequency must be MONTHLY, WEEKLY or YEARLY');
    else if (!Number.isSafeInteger(f.interval) || f.interval < 1 || f.interval > MAX_INTERVAL[f.frequency]) {
      p.push(`fixed.interval must be a whole number from 1 to ${MAX_INTERVAL[f.frequency]} for ${f.frequency}`);
    }
    if (!isKobo(f.initialDebitAmount) || f.initialDebitAmount < MINIMUM_DEBIT_KOBO)
      p.push('fixed.initialDebitAmount must be an integer of at least 20000 kobo (N200)');
    else if (isKobo(input.amount) && f.initialDebitAmount > input.amount)
      p.push('fixed.initialDebitAmount must not exceed the mandate amount');
    if (!DATE.test(String(f.initialDebitDate))) p.push('fixed.initialDebitDate must be a date YYYY-MM-DD');
    else if (datesOk && (f.initialDebitDate < input.startDate || f.initialDebitDate > input.endDate))
      p.push('fixed.initialDebitDate must lie between startDate and endDate');
  }
  return p;
}

/**
 * The claim-check rule of a workflow input (checked by the workflow for flows started after the
 * claim check): the BVN arrives only as a handle, never as digits.
 */
export function sealedBvnProblems(input: MandateInput): string[] {
  const p: string[] = [];
  const customer = input.customer as Partial<MandateCustomer> & { bvn?: unknown };
  if (!customer || !isClaimHandle(customer.bvnHandle))
    p.push('customer.bvnHandle must be a claim-check handle (the starter seals the BVN)');
  if (customer && customer.bvn !== undefined)
    p.push('customer.bvn must not be in the workflow input: start the mandate with startMandate, which seals it');
  return p;
}
