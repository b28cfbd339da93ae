// The service's own debits of FIXED mandates. The create hands the service the schedule
// (fixedMandateSettings); once the mandate is approved, the sandbox debits it on each scheduled date
// at 00:00 UTC on the sandbox clock: as real time passes (the clock's ticker) or at once when the
// admin moves the clock past the date. One debit per (mandate, date): each date's timer fires once
// and the next date is armed only after it, so moving the clock past a date twice debits it once.
// Dates before the approval day are not debited (the holder had not authorised them), nor dates
// after end_date. The state is in memory, as the rest of the sandbox's: a restart forgets it.
import { scheduledDebitAt, type FixedMandateSettings } from '../shared/mandate';
import type { SandboxClock } from './clock';

const DAY_MS = 24 * 3600 * 1000;
/** A schedule this long (e.g. daily for 27 years) is more than any test needs: stop there. */
const MAX_DATES = 10_000;

export type FixedSchedule = Pick<FixedMandateSettings, 'frequency' | 'interval' | 'initialDebitDate'>;

/** One scheduled date the service debited on its own (or refused: the balance was short). */
export interface FixedDebitRecord {
  /** The scheduled date, YYYY-MM-DD. */
  date: string;
  /** The service's transaction reference (verify and the transaction list know it; the mandate list does not show it). */
  reference: string;
  amount: number;
  status: 'success' | 'failed';
  failureReason?: string;
  /** When it was made, on the sandbox clock. */
  at: string;
}

/** Debits one date; undefined when the mandate can no longer be debited (the schedule stops). */
export type DebitDate = (mandateId: string, reference: string, date: string) => FixedDebitRecord | undefined;

interface Plan {
  mandateId: string;
  schedule: FixedSchedule;
  /** The last instant of end_date (UTC). */
  endMs: number;
  /** Index of the next scheduled date. */
  next: number;
  records: FixedDebitRecord[];
  cancel?: () => void;
}

/** The service's debit reference for a mandate's scheduled date. */
export const fixedDebitReference = (mandateId: string, date: string): string => `${mandateId}-F${date}`;

export class FixedDebits {
  private readonly plans = new Map<string, Plan>();

  constructor(
    private readonly clock: SandboxClock,
    private readonly debit: DebitDate,
  ) {}

  /** Starts debiting an approved mandate's schedule from its approval day; a second start is ignored. */
  start(opts: { mandateId: string; schedule: FixedSchedule; endDate: string; approvedAt: number }): void {
    if (this.plans.has(opts.mandateId)) return;
    const plan: Plan = {
      mandateId: opts.mandateId,
      schedule: opts.schedule,
      endMs: Date.parse(`${opts.endDate}T00:00:00.000Z`) + DAY_MS - 1,
      next: 0,
      records: [],
    };
    const approvalDay = Math.floor(opts.approvedAt / DAY_MS) * DAY_MS;
    while (plan.next < MAX_DATES && scheduledDebitAt(plan.schedule, plan.next) < approvalDay) plan.next += 1;
    this.plans.set(plan.mandateId, plan);
    this.arm(plan);
    // A date already reached (the approval day's) is debited now, before the OTP validation answers.
    void this.clock.runDue();
  }

  /** The mandate ended (cancelled, rejected): no further date is debited. */
  stop(mandateId: string): void {
    const plan = this.plans.get(mandateId);
    plan?.cancel?.();
    if (plan) plan.cancel = undefined;
  }

  list(mandateId: string): FixedDebitRecord[] {
    return (this.plans.get(mandateId)?.records ?? []).map((r) => ({ ...r }));
  }

  /** Sets the timer of the plan's next date, if it lies within end_date. */
  private arm(plan: Plan): void {
    if (plan.next >= MAX_DATES) return;
    const at = scheduledDebitAt(plan.schedule, plan.next);
    if (at > plan.endMs) return;
    plan.cancel = this.clock.at(at, () => this.fire(plan, at));
  }

  /** The date's timer: one debit for it, then the next date. */
  private fire(plan: Plan, at: number): void {
    plan.cancel = undefined;
    const date = new Date(at).toISOString().slice(0, 10);
    const record = this.debit(plan.mandateId, fixedDebitReference(plan.mandateId, date), date);
    if (!record) return; // no longer approved: the schedule ends
    plan.records.push(record);
    plan.next += 1;
    this.arm(plan);
  }
}
