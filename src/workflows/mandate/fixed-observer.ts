// A FIXED mandate's dates: by default observed (the service debits each date on its own, mandate create (D1) gave it
// the schedule; the flow reads the mandate list (D5) after the date and records what it took), or sent from the flow's
// own timers (`fixedDebits: 'send'`, and executions that passed the patch point before).
import { condition, patched } from '@temporalio/workflow';
import {
  MINIMUM_DEBIT_KOBO,
  OBSERVE_READS_DEFAULT_MS,
  observedDebitReference,
  scheduledDebitAt,
  startOfDayMs,
  type FixedMandateSettings,
  type MandateDebit,
} from '../../shared/mandate';
import type { MandateDebits } from './debits';
import type { MandateLedger } from './ledger';

/**
 * Patch (docs/operations.md): a FIXED mandate observes the debits the service makes on its own
 * schedule (D5) instead of sending the debit (D3) from its timers; executions that passed that point before
 * keep sending until their next continue-as-new.
 */
const FIXED_OBSERVED_PATCH = 'mandate-fixed-observed';

/** A refused date is tried again the next day (unless the input names scheduledRetryDelayMs). */
const SCHEDULED_RETRY_DELAY_DEFAULT_MS = 24 * 3600 * 1000;
/** A refused date is tried again twice (unless the input names scheduledDebitRetries). */
const SCHEDULED_RETRIES_DEFAULT = 2;

/**
 * One mandate list (D5) read of an observed date: the service's total grew, the mandate ended there, it did not grow,
 * or the mandate list failed.
 */
type Observation = 'moved' | 'ended' | 'still' | 'unread';

export class FixedMandateObserver {
  /** Whether this run observes the service's debits (decided once, see observes). */
  private observing: boolean | undefined;

  constructor(
    private readonly ledger: MandateLedger,
    private readonly debits: MandateDebits,
  ) {}

  /** FIXED: dates before the approval day are not debited: the customer had not authorised them. */
  skipDatesBeforeApproval(): void {
    const { fixed } = this.ledger.input;
    const { state } = this.ledger;
    if (!fixed) return;
    const today = startOfDayMs(Date.now());
    while (scheduledDebitAt(fixed, state.scheduleIndex) < today) {
      state.scheduleIndex += 1;
      state.skippedBeforeApproval += 1;
    }
  }

  /**
   * The next date, observed or sent. Returns true when the schedule is over. Not async: the step's own promise is
   * awaited, as before the split.
   */
  nextDate(fixed: FixedMandateSettings): Promise<boolean> {
    return this.observes() ? this.observedDate(fixed) : this.scheduledDate(fixed);
  }

  /**
   * Whether this run observes the service's own debits (the default) rather than sending the debit (D3) from
   * its timers (`fixedDebits: 'send'`, and executions that passed here before the patch).
   */
  private observes(): boolean {
    if (this.ledger.input.fixedDebits === 'send') return false;
    this.observing ??= patched(FIXED_OBSERVED_PATCH);
    return this.observing;
  }

  /**
   * One date, sent: wait for it, debit (retrying a refusal a bounded number of times). Returns true when the schedule
   * is over.
   */
  private async scheduledDate(fixed: FixedMandateSettings): Promise<boolean> {
    const { ledger } = this;
    const { state, input } = ledger;
    const at = scheduledDebitAt(fixed, state.scheduleIndex);
    if (at >= ledger.endAt) return true;
    const scheduledFor = new Date(at).toISOString().slice(0, 10);
    state.nextDebitAt = new Date(at).toISOString();
    const wait = at - Date.now();
    if (wait > 0 && (await condition(() => ledger.stopped(), wait))) return false;
    if (ledger.stopped()) return false;
    state.scheduleIndex += 1;
    const retries = input.scheduledDebitRetries ?? SCHEDULED_RETRIES_DEFAULT;
    const delay = input.scheduledRetryDelayMs ?? SCHEDULED_RETRY_DELAY_DEFAULT_MS;
    for (let attempt = 0; ; attempt++) {
      const sent = await ledger.exclusive(() => this.sendDate(fixed, scheduledFor));
      if (sent === 'ended') return false;
      const outcome = (await this.debits.settleIfPending(sent)).status;
      if (outcome !== 'failed' || attempt >= retries || state.status !== 'approved') return false;
      // A refusal moved no money: try again later with a new reference, never past the next date.
      const retryAt = Date.now() + delay;
      if (retryAt >= Math.min(scheduledDebitAt(fixed, state.scheduleIndex), ledger.endAt)) return false;
      state.nextDebitAt = new Date(retryAt).toISOString();
      if (await condition(() => ledger.stopped(), delay)) return false;
    }
  }

  /** A date's debit (under the lock), or 'ended' when the mandate ended or too little is available. */
  private async sendDate(fixed: FixedMandateSettings, scheduledFor: string): Promise<MandateDebit | 'ended'> {
    const { ledger } = this;
    if (ledger.state.status !== 'approved') return 'ended';
    // Unresolved debits do not stop the schedule: their amounts are held back from what this date may take.
    const amount = Math.min(fixed.initialDebitAmount, ledger.available());
    if (amount < MINIMUM_DEBIT_KOBO) {
      if (ledger.heldBack() > 0)
        ledger.fail(
          `scheduled debit for ${scheduledFor} not sent: ${ledger.available()} kobo available while ${ledger.heldBack()} kobo of debits are unresolved`,
        );
      return 'ended';
    }
    return this.debits.debit(amount, ledger.narrationFor(), 'scheduled', { scheduledFor });
  }

  /**
   * One date, observed: the service debits it on its own (mandate create (D1) gave it the schedule), so no debit (D3)
   * is sent. The mandate list (D5) is read after the date (observeReadsMs) until its total_debited grows; the growth is
   * recorded as the date's debit. Reads stop before the next date, whose reads count any later
   * growth. Returns true when the schedule is over.
   */
  private async observedDate(fixed: FixedMandateSettings): Promise<boolean> {
    const { ledger } = this;
    const { state } = ledger;
    const index = state.scheduleIndex;
    const at = scheduledDebitAt(fixed, index);
    if (at >= ledger.endAt) return true;
    const next = scheduledDebitAt(fixed, index + 1);
    const offsets = ledger.input.observeReadsMs ?? OBSERVE_READS_DEFAULT_MS;
    const scheduledFor = new Date(at).toISOString().slice(0, 10);
    const expected = Math.min(fixed.initialDebitAmount, state.balance);
    let answered = 0;
    for (const [n, offset] of offsets.entries()) {
      if (n > 0 && at + offset >= next) break;
      state.nextDebitAt = new Date(at + offset).toISOString();
      if (await this.stoppedBy(at + offset)) return false;
      const read = await ledger.exclusive(() => this.observeOnce(index, scheduledFor, expected));
      if (read === 'moved' || read === 'ended') {
        state.scheduleIndex = index + 1;
        return false;
      }
      if (read === 'still') answered += 1;
    }
    state.scheduleIndex = index + 1;
    ledger.debitsThisRun += 1;
    this.notSeen(index, expected, scheduledFor, answered);
    return false;
  }

  /**
   * An observed date whose debit never showed: failed when the mandate list (D5) answered, unknown when it could not be
   * read.
   */
  private notSeen(index: number, expected: number, scheduledFor: string, answered: number): void {
    const { ledger } = this;
    if (answered > 0) {
      ledger.conclude(
        this.observedEntry(index, expected, scheduledFor),
        'failed',
        'observed',
        `the service's debit for ${scheduledFor} did not show in the mandate list (D5) by ${new Date().toISOString()} (${answered} reads): no money moved as far as the service shows`,
      );
      return;
    }
    const reference = observedDebitReference(ledger.input.mandateRef, index);
    const why = `the mandate list (D5) could not be read after ${scheduledFor}: whether the service debited it is not known; the next date's read counts any debit`;
    ledger.fail(`${reference}: ${why}`);
    ledger.tell('mandate.debit.needs_attention', { status: 'outcome_unknown', reason: why, part: reference });
  }

  /** Waits until `at` (workflow time); true when a cancel was asked or the mandate stopped being approved. */
  private async stoppedBy(at: number): Promise<boolean> {
    const wait = at - Date.now();
    if (wait > 0) await condition(() => this.ledger.stopped(), wait);
    return this.ledger.stopped();
  }

  /** One mandate list (D5) read of an observed date (under the lock). */
  private async observeOnce(index: number, scheduledFor: string, expected: number): Promise<Observation> {
    const { ledger } = this;
    const { state } = ledger;
    if (state.status !== 'approved') return 'ended';
    const seen = await ledger.readMandate();
    if (!seen) return 'unread';
    const grew = seen.totalDebited - state.totalDebited;
    if (grew > 0) {
      ledger.debitsThisRun += 1;
      const entry = this.observedEntry(index, grew, scheduledFor);
      if (grew !== expected)
        ledger.fail(
          `${entry.reference}: the service debited ${grew} kobo for ${scheduledFor}; the schedule says ${expected}`,
        );
      ledger.conclude(entry, 'success', 'observed');
    }
    if (ledger.endedAtService(seen)) return 'ended';
    return grew > 0 ? 'moved' : 'still';
  }

  /**
   * The entry of an observed date's debit (its reference is ours: the mandate list (D5) does not show the service's).
   */
  private observedEntry(index: number, amount: number, scheduledFor: string): MandateDebit {
    const reference = observedDebitReference(this.ledger.input.mandateRef, index);
    return this.ledger.newEntry(reference, amount, 'observed', { scheduledFor });
  }
}
