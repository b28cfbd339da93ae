// A mandate's debits: asked by Update (VARIABLE), sent under the lock through send-once (D3),
// followed while pending, requeried in the background while unresolved, resolved by an operator.
//  - A requested debit's reference is derived from the caller's idempotency key
//    (`${mandateRef}-K<digest>`): the same key twice answers the same debit, never a second one.
//    Scheduled debits keep `${mandateRef}-D${sequence}`.
//  - the debit's answer is read by its `data.status`: pending is requeried (bounded backoff) and then
//    parked as outcome_unknown; failed is failed. An outcome_unknown debit does not block later
//    debits: its amount is only held back from `available`.
import { condition, log } from '@temporalio/workflow';
import type { MandateDebitAnswer } from '../../activities/mandate';
import {
  IDEMPOTENCY_KEY_RULE,
  MINIMUM_DEBIT_KOBO,
  debitKeyReference,
  debitReference,
  isUnresolvedDebit,
  type DebitRequest,
  type MandateDebit,
  type ResolveDebitRequest,
} from '../../shared/mandate';
import { failureMessage, failureOf } from '../../shared/failures';
import {
  SEND_ONCE_DEFAULTS,
  sendOnce,
  settle as settlePresence,
  type Presence,
  type SendOnceResult,
} from '../steps/send-once';
import { money } from './proxies';
import { refusal, type FoundDebit, type MandateLedger } from './ledger';

/** Consecutive documented not-found answers that prove an unresolved debit never reached the service. */
const ABSENT_READS = SEND_ONCE_DEFAULTS.absentReads;

export class MandateDebits {
  constructor(private readonly ledger: MandateLedger) {}

  // --- debits on request (VARIABLE) and by an operator ---

  /** debitMandate (Update, VARIABLE): one debit under the lock; the same idempotency key answers the same debit. */
  async debitOnRequest(req: DebitRequest): Promise<MandateDebit> {
    const { ledger } = this;
    const key = req.idempotencyKey;
    const known = key !== undefined ? ledger.keys.get(key) : undefined;
    if (known && ledger.debits.has(known)) return this.sameDebit(known);
    const entry = await ledger.exclusive(() => this.debitUnderLock(req, key));
    if (entry === undefined) return this.sameDebit(ledger.keys.get(key!)!);
    return this.settleIfPending(entry);
  }

  /** The requested debit, once it holds the lock; undefined when a duplicate got the lock first. */
  private async debitUnderLock(req: DebitRequest, key: string | undefined): Promise<MandateDebit | undefined> {
    const { ledger } = this;
    const again = key !== undefined ? ledger.keys.get(key) : undefined;
    if (again && ledger.debits.has(again)) return undefined; // a duplicate got the lock first
    // Re-checked here: a cancel or another debit may have run while this one waited.
    if (ledger.state.status !== 'approved')
      throw refusal('NotApproved', `the mandate is ${ledger.state.status}, not approved`);
    if (req.amount > ledger.available())
      throw refusal('OverBalance', `amount ${req.amount} exceeds the remaining balance ${ledger.available()}`);
    return this.debit(req.amount, ledger.narrationFor(req.narration), 'requested', { key });
  }

  /** The same key again: the same debit, once it is no longer being sent or followed. */
  private async sameDebit(reference: string): Promise<MandateDebit> {
    await condition(() => !this.ledger.inFlight.has(reference));
    return this.ledger.debits.get(reference)!;
  }

  checkDebitRequest(req: DebitRequest): void {
    const { ledger } = this;
    const { state } = ledger;
    if (state.debitType !== 'variable') throw new Error('only a VARIABLE mandate is debited on request');
    if (req?.idempotencyKey !== undefined) {
      if (typeof req.idempotencyKey !== 'string' || !IDEMPOTENCY_KEY_RULE.pattern.test(req.idempotencyKey))
        throw new Error(IDEMPOTENCY_KEY_RULE.message);
      const knownRef = ledger.keys.get(req.idempotencyKey);
      const seen = knownRef ? ledger.debits.get(knownRef) : undefined;
      if (seen) {
        // The same request again: answered with the same debit, whatever happened since.
        if (seen.amount !== req.amount)
          throw new Error(
            `idempotencyKey ${req.idempotencyKey} was used for a debit of ${seen.amount} kobo, not ${String(req.amount)}`,
          );
        return;
      }
    }
    if (state.status !== 'approved') throw new Error(`the mandate is ${state.status}, not approved`);
    if (Date.now() >= ledger.endAt) throw new Error(`the mandate ended on ${ledger.input.endDate}`);
    if (!Number.isSafeInteger(req?.amount)) throw new Error('amount must be an integer in kobo');
    if (req.amount < MINIMUM_DEBIT_KOBO) throw new Error(`amount must be at least ${MINIMUM_DEBIT_KOBO} kobo (N200)`);
    if (req.amount > ledger.available())
      throw new Error(`amount ${req.amount} exceeds the remaining balance ${ledger.available()}`);
    if (
      req.narration !== undefined &&
      (typeof req.narration !== 'string' || req.narration.length === 0 || req.narration.length > 100)
    ) {
      throw new Error('narration must be 1-100 characters');
    }
  }

  /** resolveDebit (Update, operator): settles an unresolved debit as debited or not. */
  async resolveDebit(req: ResolveDebitRequest): Promise<MandateDebit> {
    const d = this.ledger.findDebit(req.debitKey)!;
    d.resolution = { outcome: req.outcome, reason: req.reason, operator: req.operator, at: new Date().toISOString() };
    log.info('debit resolved by an operator', { reference: d.reference, outcome: req.outcome, operator: req.operator });
    this.ledger.conclude(
      d,
      req.outcome === 'debited' ? 'success' : 'failed',
      'operator',
      `resolved by ${req.operator}: ${req.reason}`,
      true,
    );
    return d;
  }

  checkResolve(req: ResolveDebitRequest): void {
    if (typeof req?.debitKey !== 'string' || req.debitKey === '')
      throw new Error('debitKey is required (the idempotency key or the reference)');
    if (req.outcome !== 'debited' && req.outcome !== 'not_debited')
      throw new Error("outcome must be 'debited' or 'not_debited'");
    if (typeof req.reason !== 'string' || req.reason.trim().length === 0 || req.reason.length > 500)
      throw new Error('reason must be 1-500 characters');
    if (typeof req.operator !== 'string' || req.operator.trim().length === 0 || req.operator.length > 100)
      throw new Error('operator must be 1-100 characters');
    const d = this.ledger.findDebit(req.debitKey);
    if (!d) throw new Error(`no debit ${req.debitKey} in this mandate`);
    if (!isUnresolvedDebit(d)) throw new Error(`debit ${d.reference} is already ${d.status}`);
    if (this.ledger.inFlight.has(d.reference))
      throw new Error(`debit ${d.reference} is being sent or requeried right now: try again shortly`);
  }

  // --- sending a debit ---

  /** A new debit: sent under the lock (balance checks see the previous debit), followed outside it when pending. */
  async debit(
    amount: number,
    narration: string,
    kind: MandateDebit['kind'],
    opts: { key?: string; scheduledFor?: string } = {},
  ): Promise<MandateDebit> {
    const { ledger } = this;
    const { mandateRef } = ledger.input;
    const reference = opts.key
      ? debitKeyReference(mandateRef, opts.key)
      : debitReference(mandateRef, ledger.sequence + 1);
    const entry = ledger.newEntry(reference, amount, kind, opts);
    if (opts.key) ledger.keys.set(opts.key, reference);
    ledger.state.debitCount += 1;
    ledger.debitsThisRun += 1;
    ledger.inFlight.add(reference); // stored once its send settled (a duplicate request waits for the lock meanwhile)
    try {
      await this.sendDebit(entry, narration);
    } finally {
      ledger.inFlight.delete(reference);
    }
    return entry;
  }

  /**
   * The debit (D3) through send-once; the entry ends success, failed, pending (the service said so) or outcome_unknown.
   */
  private async sendDebit(entry: MandateDebit, narration: string): Promise<void> {
    const { ledger } = this;
    const req = {
      mandateId: ledger.state.mandateId!,
      amount: entry.amount,
      reference: entry.reference,
      narration,
      customerEmail: ledger.input.customerEmail,
    };
    let lastFailure: string | undefined;
    const result: SendOnceResult<MandateDebitAnswer, FoundDebit> = await sendOnce({
      send: async () => {
        try {
          return await money.debitMandate(req);
        } catch (err) {
          lastFailure = failureOf(err)?.type ?? undefined;
          throw err;
        }
      },
      requery: ledger.requeryDebit(entry.reference),
      settleMs: ledger.settings.debitSettleMs,
    });
    switch (result.outcome) {
      case 'answered':
        entry.serviceStatus = result.answer.serviceStatus;
        if (result.answer.status === 'success')
          ledger.conclude(entry, 'success', result.sends > 1 ? 'resend' : 'response');
        else if (result.answer.status === 'failed')
          ledger.conclude(entry, 'failed', 'response', `the debit (D3) answered status ${result.answer.serviceStatus}`);
        else this.stillPending(entry, `the debit (D3) answered status ${result.answer.serviceStatus || '(none)'}`);
        return;
      case 'refused':
        ledger.conclude(entry, 'failed', 'response', result.failure.message);
        if (/not ready/i.test(result.failure.message)) await this.endIfEndedAtService();
        return;
      case 'found':
        entry.error = result.lost;
        if (!ledger.applyRecord(entry, result.record, false)) this.stillPending(entry);
        return;
      case 'never-received':
        // A "duplicate reference" refusal says the service holds the reference although verify
        // does not show it: that is no proof of absence.
        if (lastFailure === 'DuplicateReference')
          ledger.park(entry, `${result.lost}; the service knows the reference but verify does not show it`);
        else
          ledger.conclude(
            entry,
            'failed',
            'requery',
            `never reached the service (verify does not know ${entry.reference} after ${result.sends} sends): ${result.lost}`,
          );
        return;
      case 'unverified':
        ledger.park(entry, `${result.lost}; verify could not be asked`);
        return;
    }
  }

  /** The service holds the debit but has not settled it: stored as pending, to be followed. */
  private stillPending(entry: MandateDebit, why?: string): void {
    entry.status = 'pending';
    if (why !== undefined) entry.error = why;
    this.ledger.put(entry);
  }

  /** "Not ready for debit": the mandate may have been cancelled or rejected at the service. */
  private async endIfEndedAtService(): Promise<void> {
    const seen = await this.ledger.readMandate();
    if (seen) this.ledger.endedAtService(seen);
  }

  // --- following a debit until it is final ---

  /** A sent debit still pending: followed outside the lock until final or parked. */
  async settleIfPending(entry: MandateDebit): Promise<MandateDebit> {
    if (entry.status !== 'pending') return entry;
    this.ledger.inFlight.add(entry.reference);
    try {
      await this.followPending(entry);
    } finally {
      this.ledger.inFlight.delete(entry.reference);
    }
    return entry;
  }

  /** A pending debit: requeried on a bounded backoff until final, then parked as outcome_unknown. */
  private async followPending(entry: MandateDebit): Promise<void> {
    const { ledger } = this;
    const { pendingRequeryMs } = ledger.settings;
    for (const waitMs of pendingRequeryMs) {
      if (entry.status !== 'pending') return; // an operator resolved it meanwhile
      const presence = await settlePresence({
        requery: ledger.requeryDebit(entry.reference),
        settleMs: waitMs,
        absentReads: 1,
      });
      if (entry.status !== 'pending') return;
      if (presence?.found && ledger.applyRecord(entry, presence.record, true)) return;
    }
    if (entry.status === 'pending')
      ledger.park(entry, `${entry.error ?? 'pending'}; still not final after ${pendingRequeryMs.length} requeries`);
  }

  /** Background: requeries outcome_unknown debits on a doubling backoff until found final or the period ends. */
  async watchUnresolved(): Promise<void> {
    const { ledger } = this;
    const { settings } = ledger;
    for (;;) {
      const next = this.nextRequeryAt();
      if (next === undefined) {
        await condition(() => this.nextRequeryAt() !== undefined);
        continue;
      }
      const wait = next - Date.now();
      if (wait > 0) {
        await condition(() => (this.nextRequeryAt() ?? Infinity) < next, wait);
        continue;
      }
      const due = [...this.ledger.debits.values()].filter(
        (d) =>
          d.status === 'outcome_unknown' &&
          d.nextRequeryAt &&
          Date.parse(d.nextRequeryAt) <= Date.now() &&
          !this.ledger.inFlight.has(d.reference),
      );
      for (const d of due) {
        let presence: Presence<FoundDebit> | undefined;
        try {
          presence = await ledger.requeryDebit(d.reference)();
        } catch (err) {
          log.warn('requery of an unresolved debit failed', { reference: d.reference, error: failureMessage(err) });
        }
        if (d.status !== 'outcome_unknown') continue; // resolved meanwhile
        if (presence?.found && ledger.applyRecord(d, presence.record, true)) continue;
        // The documented not-found, read ABSENT_READS times in a row over minutes: the request never reached the
        // service (send-once's proof).
        d.absentReads = presence && !presence.found ? (d.absentReads ?? 0) + 1 : 0;
        if (d.absentReads >= ABSENT_READS) {
          ledger.conclude(
            d,
            'failed',
            'requery',
            `${d.error ?? 'no answer'}; verify does not know ${d.reference} (${d.absentReads} reads): it never reached the service`,
            true,
          );
          continue;
        }
        d.requeries = (d.requeries ?? 0) + 1;
        const backoff = Math.min(settings.unresolvedRequeryFirstMs * 2 ** d.requeries, settings.unresolvedRequeryMaxMs);
        const until = Date.parse(d.requeryUntil ?? new Date(Date.now()).toISOString());
        if (Date.now() + backoff > until) {
          d.nextRequeryAt = undefined;
          ledger.fail(
            `${d.reference}: still unknown after requerying until ${d.requeryUntil}; an operator must resolve it (resolveDebit)`,
          );
        } else d.nextRequeryAt = new Date(Date.now() + backoff).toISOString();
        ledger.put(d);
      }
    }
  }

  /** The next background requery of outcome_unknown debits (ms), or undefined. */
  private nextRequeryAt(): number | undefined {
    let next: number | undefined;
    for (const d of this.ledger.debits.values()) {
      if (d.status !== 'outcome_unknown' || !d.nextRequeryAt || this.ledger.inFlight.has(d.reference)) continue;
      const at = Date.parse(d.nextRequeryAt);
      if (next === undefined || at < next) next = at;
    }
    return next;
  }
}
