// The mandate's books, shared by its parts (approval, debits, the FIXED observer, cancellation): the
// state the query answers, the debits by reference and by idempotency key, the lock, the merchant
// events, and how a debit's outcome is recorded. The steps live in the parts, not here.
import { ApplicationFailure, condition, log, patched, upsertSearchAttributes } from '@temporalio/workflow';
import type { MandateSnapshot } from '../../activities/mandate';
import {
  DEBIT_SAFETY_DEFAULTS,
  MANDATE_DEBITS_KEPT,
  MANDATE_KEYS_KEPT,
  MINIMUM_DEBIT_KOBO,
  endOfDayMs,
  isUnresolvedDebit,
  type DebitSafetySettings,
  type MandateCarry,
  type MandateDebit,
  type MandateInput,
  type MandateState,
} from '../../shared/mandate';
import type { TransactionLookup } from '../../shared/payment-common';
import type { MerchantEventType } from '../../shared/merchant-event';
import { paymentSearchAttributes } from '../../shared/search-attributes';
import { failureMessage } from '../../shared/failures';
import type { Presence } from '../steps/send-once';
import { MerchantEvents, type EventTypes, type OutcomeFields } from '../steps/merchant-events';
import { reads, verify } from './proxies';

const FAILURES_KEPT = 50;

/** The mandate's own outcomes → its merchant event (docs/events.md); the waits emit nothing, completed is `complete`'s. */
const MANDATE_EVENT_TYPES: EventTypes = {
  approved: 'mandate.approved',
  failed: 'mandate.rejected',
  expired: 'mandate.expired',
  cancelled: 'mandate.cancelled',
};
/** One debit's outcome → its event (part = the debit's reference). */
const DEBIT_EVENT_TYPES: EventTypes = {
  success: 'mandate.debit.succeeded',
  failed: 'mandate.debit.failed',
  outcome_unknown: 'mandate.debit.needs_attention',
};

/**
 * Patch (docs/operations.md): an approved mandate that completes tells the merchant (`mandate.ended`);
 * executions that completed before it, on replay, emitted nothing there.
 */
const ENDED_EVENT_PATCH = 'mandate-ended-event';

/** Why an approved mandate completes: the `mandate.ended` event's status, and its `endReason` in words. */
export const MANDATE_ENDINGS = {
  balance_spent: 'balance spent',
  end_date_reached: 'end date reached',
  schedule_finished: 'schedule finished',
} as const;
export type MandateEnding = keyof typeof MANDATE_ENDINGS;

export type FoundDebit = Extract<TransactionLookup, { found: true }>;

/** An Update's refusal: final (nothing retries an Update), with its type for the caller. */
export function refusal(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

/** The books of one run of a mandate (a continue-as-new starts the next from `carry`). */
export class MandateLedger {
  /** What the query answers, and what continue-as-new carries. */
  readonly state: MandateState;
  /** The last debit's sequence number (sent and observed debits alike). */
  sequence: number;
  /** Debits sent or observed in this run: the run continues as new after `debitsPerRun`. */
  debitsThisRun = 0;
  /** A cancel signal, carried out by the main loop under the lock. */
  cancelRequested = false;
  /** One service call at a time: a debit's balance check must see the previous debit's result. */
  private busy = false;
  /** The first instant after end_date (end_date is inclusive). */
  readonly endAt: number;
  readonly settings: DebitSafetySettings;
  /** reference → debit, the last MANDATE_KEYS_KEPT (unresolved ones are never dropped). */
  readonly debits = new Map<string, MandateDebit>();
  /** idempotency key → reference. */
  readonly keys: Map<string, string>;
  /** References being sent or settled right now: a duplicate request waits for them. */
  readonly inFlight = new Set<string>();
  /** The PaymentStatus last upserted. */
  private searchStatus: string | undefined;
  /** Where the mandate's outcomes are told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;
  /** The events queued so far, handed to their deliveries one after another. */
  private emissions: Promise<void> = Promise.resolve();
  /** Why the mandate completed (complete), for its last event. */
  private ending: MandateEnding | undefined;

  constructor(
    readonly input: MandateInput,
    carry: MandateCarry | undefined,
  ) {
    this.state = carry?.state ?? {
      status: 'creating',
      mandateRef: input.mandateRef,
      debitType: input.debitType,
      amount: input.amount,
      balance: input.amount,
      totalDebited: 0,
      recentDebits: [],
      debitCount: 0,
      unresolvedDebits: [],
      failures: [],
      scheduleIndex: 0,
      skippedBeforeApproval: 0,
    };
    this.sequence = carry?.sequence ?? 0;
    this.endAt = endOfDayMs(input.endDate) + 1;
    this.settings = { ...DEBIT_SAFETY_DEFAULTS, ...definedOnly(input) };
    this.keys = new Map<string, string>(Object.entries(carry?.keys ?? {}));
    for (const d of [...(carry?.debits ?? this.state.recentDebits), ...this.state.unresolvedDebits])
      this.debits.set(d.reference, d);
    this.searchStatus = carry ? this.state.status : 'creating';
    this.events = new MerchantEvents(input.notify, 'mandate', input.mandateRef, carry?.eventSequence);
  }

  /** The first run's search attributes: the mandate is being created. */
  announce(): void {
    const { input } = this;
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow: 'mandate',
        reference: input.mandateRef,
        amount: input.amount,
        currency: 'NGN',
        status: 'creating',
      }),
    );
    this.searchStatus = 'creating';
  }

  /** Runs fn alone; a second caller waits (the loop re-checks: several waiters wake together). */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    while (this.busy) await condition(() => !this.busy);
    this.busy = true;
    try {
      return await fn();
    } finally {
      this.busy = false;
    }
  }

  /** No call holds the lock and no debit is being sent or followed. */
  idle(): boolean {
    return !this.busy && this.inFlight.size === 0;
  }

  /** A cancel was asked, or the mandate is no longer approved: a wait for a date stops. */
  stopped(): boolean {
    return this.cancelRequested || this.state.status !== 'approved';
  }

  /** Nothing more to debit: no longer approved, the balance spent, or past end_date. */
  finished(): boolean {
    return this.state.status !== 'approved' || this.state.balance < MINIMUM_DEBIT_KOBO || Date.now() >= this.endAt;
  }

  setStatus(status: MandateState['status'], endReason?: string): void {
    this.state.status = status;
    if (endReason) this.state.endReason = endReason;
    this.publish();
    const rejected = status === 'cancelled' && endReason?.startsWith('rejected');
    this.tell(rejected ? 'mandate.rejected' : MANDATE_EVENT_TYPES[status], {
      status,
      ...(endReason ? { reason: endReason } : {}),
    });
  }

  /** An approved mandate completes; `ending` says why (told by tellEnded). */
  complete(ending: MandateEnding): void {
    this.ending = ending;
    this.setStatus('completed', MANDATE_ENDINGS[ending]);
  }

  /**
   * The mandate's last word, once it completed and no debit is left unresolved (a parked debit's
   * settlement comes before it): `mandate.ended`, why, and the total debited. The patch is asked
   * only when an event could follow.
   */
  tellEnded(): void {
    const { ending } = this;
    if (!ending || !this.events.enabled || !patched(ENDED_EVENT_PATCH)) return;
    this.tell('mandate.ended', {
      status: ending,
      reason: MANDATE_ENDINGS[ending],
      amount: this.state.totalDebited,
      currency: 'NGN',
    });
  }

  /**
   * Queues one merchant event after those before it (their data.sequence is in that order). Without
   * a target nothing is queued and no command is added: flows started before events (no `notify`
   * in their input) replay unchanged.
   */
  tell(type: MerchantEventType | undefined, fields: OutcomeFields): void {
    if (!type || !this.events.enabled) return;
    this.emissions = this.emissions.then(() => this.events.emit(type, fields));
  }

  /** Every queued event handed to its delivery: awaited before the run ends or continues as new. */
  async eventsHandedOver(): Promise<void> {
    await this.emissions;
  }

  /** A debit's outcome as its event: part = its reference, the amount in kobo. */
  private tellDebit(entry: MandateDebit): void {
    this.tell(DEBIT_EVENT_TYPES[entry.status], {
      status: entry.status,
      amount: entry.amount,
      currency: 'NGN',
      part: entry.reference,
      ...(entry.error ? { reason: entry.error } : {}),
    });
  }

  fail(message: string): void {
    this.state.failures = [...this.state.failures, message].slice(-FAILURES_KEPT);
  }

  narrationFor(n?: string): string {
    return n ?? this.input.narration ?? this.input.description;
  }

  /** The debits kept, oldest first. */
  inOrder(): MandateDebit[] {
    return [...this.debits.values()].sort((a, b) => a.sequence - b.sequence);
  }

  unresolved(): MandateDebit[] {
    return [...this.debits.values()].filter(isUnresolvedDebit);
  }

  heldBack(): number {
    return this.unresolved().reduce((sum, d) => sum + d.amount, 0);
  }

  available(): number {
    return this.state.balance - this.heldBack();
  }

  findDebit(debitKey: string): MandateDebit | undefined {
    return this.debits.get(this.keys.get(debitKey) ?? debitKey);
  }

  /** Publishes the debits into the state (query), and PaymentStatus: outcome_unknown while any debit is unresolved. */
  publish(): void {
    const { state } = this;
    const all = this.inOrder();
    state.recentDebits = all.slice(-MANDATE_DEBITS_KEPT);
    state.unresolvedDebits = all.filter(isUnresolvedDebit);
    state.available = state.balance - this.heldBack();
    const wanted = state.unresolvedDebits.length > 0 ? 'outcome_unknown' : state.status;
    if (wanted !== this.searchStatus) {
      this.searchStatus = wanted;
      upsertSearchAttributes(paymentSearchAttributes({ status: wanted }));
    }
  }

  /** Stores a debit, trimming the oldest settled ones beyond MANDATE_KEYS_KEPT. */
  put(entry: MandateDebit): MandateDebit {
    const { debits, keys } = this;
    debits.set(entry.reference, entry);
    if (debits.size > MANDATE_KEYS_KEPT) {
      for (const d of this.inOrder()) {
        if (debits.size <= MANDATE_KEYS_KEPT) break;
        if (!isUnresolvedDebit(d)) debits.delete(d.reference);
      }
    }
    while (keys.size > MANDATE_KEYS_KEPT) keys.delete(keys.keys().next().value as string);
    this.publish();
    return entry;
  }

  /** A debit's outcome became final (by an answer, a requery or an operator): balance and totals follow. */
  conclude(
    entry: MandateDebit,
    status: 'success' | 'failed',
    confirmedBy: MandateDebit['confirmedBy'],
    error?: string,
    settledLater = false,
  ): void {
    entry.status = status;
    entry.confirmedBy = confirmedBy;
    entry.error = status === 'success' ? undefined : (error ?? entry.error);
    entry.nextRequeryAt = undefined;
    if (status === 'success') {
      this.state.balance -= entry.amount;
      this.state.totalDebited += entry.amount;
    } else this.fail(`${entry.reference}: ${entry.error ?? 'refused'}`);
    if (settledLater) this.fail(`${entry.reference}: settled as ${status} (${confirmedBy})`);
    this.put(entry);
    this.tellDebit(entry);
  }

  /** Parks a debit as outcome_unknown: visible, requeried in the background, resolvable by an operator. */
  park(entry: MandateDebit, why: string): void {
    const now = Date.now();
    entry.status = 'outcome_unknown';
    entry.error = why;
    entry.requeries = entry.requeries ?? 0;
    entry.requeryUntil ??= new Date(now + this.settings.unresolvedRequeryForMs).toISOString();
    entry.nextRequeryAt = new Date(now + this.settings.unresolvedRequeryFirstMs).toISOString();
    this.fail(`${entry.reference}: outcome unknown (${why}); requeried until ${entry.requeryUntil}, or resolveDebit`);
    this.put(entry);
    this.tellDebit(entry);
  }

  /** Applies a verify record (found) to an unresolved debit; true when it is final now. */
  applyRecord(entry: MandateDebit, record: FoundDebit, settledLater: boolean): boolean {
    const seen = fromVerify(record, entry.amount);
    if (seen.status === 'success' || seen.status === 'failed') {
      this.conclude(entry, seen.status, 'requery', seen.error, settledLater);
      return true;
    }
    if (seen.status === 'outcome_unknown') entry.error = seen.error;
    return false;
  }

  /** Verify by the debit's reference, as send-once's requery: throws when the service could not be asked. */
  requeryDebit(reference: string): () => Promise<Presence<FoundDebit>> {
    return async (): Promise<Presence<FoundDebit>> => {
      const found = await verify.lookupTransaction(reference);
      return found.found ? { found: true, record: found } : { found: false };
    };
  }

  /** The mandate list (D5): the mandate as the service holds it; undefined when it could not be read. */
  async readMandate(): Promise<MandateSnapshot | undefined> {
    try {
      return await reads.getMandate(this.state.mandateId!);
    } catch (err) {
      log.warn('mandate read (D5) failed', { error: failureMessage(err) });
      return undefined;
    }
  }

  /** The mandate list (D5) shows the mandate cancelled or rejected at the service: it is cancelled here too (true). */
  endedAtService(seen: MandateSnapshot): boolean {
    const ended = seen.status === 'cancelled' || seen.status === 'rejected';
    if (ended) this.setStatus('cancelled', `${seen.status} at the service`);
    return ended;
  }

  /** A new debit's entry, numbered after the last (pending until its outcome is known). */
  newEntry(
    reference: string,
    amount: number,
    kind: MandateDebit['kind'],
    extra: Pick<MandateDebit, 'key' | 'scheduledFor'>,
  ): MandateDebit {
    this.sequence += 1;
    return {
      sequence: this.sequence,
      reference,
      key: extra.key ?? reference,
      amount,
      status: 'pending',
      kind,
      at: new Date().toISOString(),
      ...(extra.scheduledFor ? { scheduledFor: extra.scheduledFor } : {}),
    };
  }

  /** What the next run starts from. */
  carryOver(): MandateCarry {
    const { state, sequence } = this;
    return {
      state,
      sequence,
      debits: [...this.debits.values()],
      keys: Object.fromEntries(this.keys),
      ...(this.events.emitted > 0 ? { eventSequence: this.events.emitted } : {}),
    };
  }
}

/** What verify's record of a debit's reference proves. */
function fromVerify(
  record: FoundDebit,
  amount: number,
): { status: 'success' | 'failed' | 'pending' | 'outcome_unknown'; error?: string } {
  switch (record.status) {
    case 'Success':
      return record.amount !== undefined && record.amount !== amount
        ? { status: 'outcome_unknown', error: `verify shows ${record.amount} kobo under this reference, not ${amount}` }
        : { status: 'success' };
    case 'Failed':
    case 'Abandoned':
      return { status: 'failed', error: `verified as ${record.status}${record.reason ? `: ${record.reason}` : ''}` };
    default:
      return { status: 'pending' };
  }
}

/** The input's debit-safety settings that are set (undefined ones keep the defaults). */
function definedOnly(input: MandateInput): Partial<DebitSafetySettings> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(DEBIT_SAFETY_DEFAULTS) as (keyof DebitSafetySettings)[]) {
    if (input[k] !== undefined) out[k] = input[k];
  }
  return out as Partial<DebitSafetySettings>;
}
