// Electricity vending (H1-H4): one purchase is never vended twice.
//
//   1. input rules (zod, shared with the starter)
//   2. The provider list (H1) (cached by the worker): the provider must be listed
//   3. The meter lookup (H2): amount ≥ minimum_vend; the lookup's reference is the purchase's key.
//      The provider list and the meter lookup are one local activity (vendLookupListedMeter): both are reads before
//      anything is sent, so they run inside the workflow task that started the flow (one marker event instead
//      of an activity task and the workflow task it wakes; docs/performance.md). A worker lost
//      mid-read just reads again on replay.
//   4. The purchase (H3) through the one send-once rule (./steps/send-once.ts): send = the purchase, requery = the
//      transaction lookup (H4) by reference. What this flow keeps:
//      answered / found    → the record's STATUS decides, never the HTTP 200: success → vended
//                            (token), failed → failed, anything else (pending) → requeried
//                            (H4) on a backoff until final; pending past `pendingFor` parks as
//                            outcome_unknown (./steps/unknown-outcome.ts). Never re-purchased.
//      refused (400/401…)  → rejected: nothing was vended
//      never received      → not_vended (a refused resend: rejected)
//      unverified          → outcome_unknown: never sent again, requeried on a backoff for
//                            `unknownRequeryFor` (24 h); an operator may resolveOutcome
//                            (src/shared/outcome.ts) with vended | failed | not_vended
//   5. cancelled after the purchase may have been sent: a non-cancellable cleanup asks the transaction lookup once more
//      and the result carries the real outcome (or outcome_unknown) with cancelRequested; never "cancelled".
//
// Before a resend the flow waits: `retryBackoff`, and — when the earlier purchase attempt was lost by
// its heartbeat timeout (a worker that died or was cut off mid-call) — until that attempt's HTTP
// call can no longer be in flight (purchaseTimeoutMs plus the in-flight margin).
//
// Search attributes (./steps/visible-attributes.ts): a sale started by the starter writes one upsert,
// the service's reference with the final (or parked) status; the steps between are the query's.
//
// Layout, top to bottom: `vendElectricityWorkflow` (the whole story in a few lines), then
// `VendFlow`: its state, its handlers (`listen`), the main steps (`run`: look up, purchase), then
// the helpers the steps share.
import {
  CancellationScope,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { VendingActivities } from '../activities/vending';
import {
  VEND_FINAL_STATUSES,
  VEND_FIRST_STATUS,
  VEND_PROVIDER_LIST_STEP,
  VEND_RESOLVE_OUTCOMES,
  VendInputSchema,
  vendRecordOutcome,
  vendStateQuery,
  type MeterInfo,
  type VendInput,
  type VendParsedInput,
  type VendRecord,
  type VendResolveOutcome,
  type VendResult,
  type VendState,
  type VendStep,
} from '../shared/vending';
import type { OutcomeResolution } from '../shared/outcome';
import { IN_FLIGHT_MARGIN_MS } from '../shared/activity-timeouts';
import { failureMessage, isRefusalFailure } from '../shared/failures';
import { durationMs } from '../shared/duration';
import { sendOnce, type Presence } from './steps/send-once';
import { visibleAttributes, type VisibleAttributes } from './steps/visible-attributes';
import {
  awaitFinal,
  listenForResolutionIn,
  lostByHeartbeat,
  parkedRequery,
  type ResolutionSlot,
} from './steps/unknown-outcome';
import { MerchantEvents, type EventTypes } from './steps/merchant-events';
import { LOCAL_GATING_READ, POLL, moneySend, readUntil } from './steps/activity-options';
import { failureLabel, parseFlowInput } from './steps/flow-input';
import { stateCopy } from './steps/state-copy';
import {
  DEVICE_SEND_HTTP_TIMEOUT_MS,
  REQUERY_WHILE_UNANSWERED,
  SETTLE_BEFORE_REQUERY,
  UNSENT_RESEND_BACKOFF,
} from './steps/durations';
import { failureTypeOf } from '../shared/failures';

/** How long a pending purchase is requeried before the sale parks as outcome_unknown and a person looks. */
const PENDING_REQUERY_FOR = '10 minutes';

export const DEFAULTS = {
  maxPurchaseAttempts: 2,
  checkSettleDelay: SETTLE_BEFORE_REQUERY,
  retryBackoff: UNSENT_RESEND_BACKOFF,
  purchaseTimeoutMs: DEVICE_SEND_HTTP_TIMEOUT_MS,
  checkTimeout: REQUERY_WHILE_UNANSWERED,
  pendingFor: PENDING_REQUERY_FOR,
} as const;

type VendOptions = NonNullable<VendParsedInput['options']>;

/** A sale's merchant events (docs/events.md); rejected and not_vended: nothing was vended. */
const VEND_EVENT_TYPES: EventTypes = {
  vended: 'vend.succeeded',
  failed: 'vend.failed',
  rejected: 'vend.failed',
  not_vended: 'vend.failed',
  outcome_unknown: 'vend.needs_attention',
};
type VendRequest = Omit<VendParsedInput, 'options'>;

export async function vendElectricityWorkflow(raw: VendInput): Promise<VendResult> {
  const flow = new VendFlow(parseFlowInput(VendInputSchema, raw, 'vend request'));
  flow.listen();
  const result = await flow.run();
  await flow.emitOutcome(result.status, result.message);
  return result;
}

/** One sale: the lookup, then the purchase through send-once. */
class VendFlow {
  // --- state ---

  /** What the query answers. */
  private readonly state: VendState;
  private readonly input: VendRequest;
  private readonly options: VendOptions;
  private readonly purchaseTimeoutMs: number;
  /** The operator's resolveOutcome while the sale is parked. */
  private readonly resolution: ResolutionSlot<VendResolveOutcome> = {};
  private visible: VisibleAttributes | undefined;
  private meter: MeterInfo | undefined;
  /** The lookup's reference: the purchase's idempotency key. */
  private reference = '';
  /** No purchase (H3) attempt may still be in flight after this (workflow time). */
  private inFlightUntil = 0;
  private lastSendRefused = false;
  /** Where the sale's outcome is told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;

  private readonly acts: {
    /** The provider list (H1)+the meter lookup (H2), a local activity (reads only), retried for 5 minutes. */
    lookup: VendingActivities['vendLookupListedMeter'];
    /** The purchase (H3): one attempt, heartbeating; its start-to-close outlives the call's own deadline. */
    purchase: VendingActivities['vendPurchase'];
    /** The transaction lookup (H4) while the purchase settles: retried for `checkTimeout`. */
    findByReference: VendingActivities['vendFindByReference'];
    /**
     * The transaction lookup (H4) while pending or parked: one bounded read per round; the rounds carry the backoff.
     */
    watchByReference: VendingActivities['vendFindByReference'];
  };

  constructor({ options = {}, ...input }: VendParsedInput) {
    this.input = input;
    this.options = options;
    this.purchaseTimeoutMs = options.purchaseTimeoutMs ?? DEFAULTS.purchaseTimeoutMs;
    this.state = { orderRef: input.order_ref, status: 'validating', attempt: 0, steps: [] };
    this.events = new MerchantEvents(input.notify, 'vend', input.order_ref);
    this.acts = {
      lookup: proxyLocalActivities<VendingActivities>(LOCAL_GATING_READ).vendLookupListedMeter,
      purchase: proxyActivities<VendingActivities>(moneySend(this.purchaseTimeoutMs)).vendPurchase,
      // The sale's own bound (an input option): how long the transaction lookup (H4) is asked before the outcome is
      // unknown.
      findByReference: proxyActivities<VendingActivities>(
        readUntil(durationMs(options.checkTimeout ?? DEFAULTS.checkTimeout)),
      ).vendFindByReference,
      watchByReference: proxyActivities<VendingActivities>(POLL).vendFindByReference,
    };
  }

  // --- handlers ---

  listen(): void {
    setHandler(vendStateQuery, () => stateCopy(this.state));
    listenForResolutionIn(VEND_RESOLVE_OUTCOMES, () => this.resolution, this.state);
  }

  /** The sale's event: its amount in kobo (the amount of the purchase (H3) is whole naira, docs/choices.md). */
  emitOutcome(status: string, reason: string): Promise<void> {
    return this.events.emitFor(VEND_EVENT_TYPES, { status, reason, amount: this.input.amount * 100, currency: 'NGN' });
  }

  // --- main steps ---

  async run(): Promise<VendResult> {
    this.visible = visibleAttributes({
      flow: 'vend',
      reference: this.input.order_ref,
      status: VEND_FIRST_STATUS,
      currency: 'NGN',
    });
    const rejected = await this.lookUp();
    if (rejected) return rejected;
    const { amount } = this.input;
    const minimum = this.meter?.minimum_vend;
    if (minimum !== undefined && amount < minimum)
      return this.finish(
        'rejected',
        `amount ${amount} is below the meter's minimum_vend ${minimum}; nothing was vended`,
      );
    // Everything from here may follow a purchase that moved money.
    try {
      return await this.purchase();
    } catch (err) {
      if (!isCancellation(err)) throw err;
      return await CancellationScope.nonCancellable(() => this.afterCancel());
    }
  }

  /**
   * The provider list (H1) (the provider is listed) and the meter lookup (H2) (the meter, its reference) in one read; a
   * rejection ends the sale.
   */
  private async lookUp(): Promise<VendResult | undefined> {
    this.setStatus('looking_up');
    const { meter_no, meter_type, provider } = this.input;
    try {
      const found = await this.acts.lookup({ meter_no, meter_type, provider });
      if (!found.listed) {
        this.record({ op: 'lookup', outcome: 'rejected', detail: 'UnknownProvider' });
        return this.finish('rejected', `provider ${provider} is not in the provider list (H1)`);
      }
      this.meter = found.meter;
    } catch (err) {
      const message = failureMessage(err);
      if (message.startsWith(VEND_PROVIDER_LIST_STEP))
        return this.finish('rejected', `the provider list (H1) could not be read: ${message}; nothing was vended`);
      this.record({ op: 'lookup', outcome: 'rejected', detail: failureTypeOf(err) ?? 'Unknown' });
      return this.finish('rejected', `meter lookup (H2) failed: ${message}; nothing was vended`);
    }
    this.record({ op: 'lookup', outcome: 'found' });
    this.reference = this.meter.reference;
    this.state.reference = this.reference;
    this.visible?.stage({ reference: this.reference });
    return undefined;
  }

  /**
   * The purchase (H3) through send-once (the transaction lookup (H4) by reference as its requery), and what its outcome
   * means for the sale.
   */
  private async purchase(): Promise<VendResult> {
    const sent = await sendOnce<VendRecord, VendRecord>({
      send: (n) => this.send(n),
      requery: () => this.requery(),
      settleMs: durationMs(this.options.checkSettleDelay ?? DEFAULTS.checkSettleDelay),
      // The transaction lookup (H4) "not found" after the settle delay is the service's answer; a resend also waits
      // until no earlier attempt can be in flight.
      absentReads: 1,
      maxSends: this.options.maxPurchaseAttempts ?? DEFAULTS.maxPurchaseAttempts,
      // The refusals: send-once's default, REFUSAL_TYPES (src/shared/failures.ts).
    });
    switch (sent.outcome) {
      case 'answered':
        if (vendRecordOutcome(sent.answer.status) !== 'pending') return this.fromTransaction(sent.answer, '');
        return await this.watch('pending', ` (answered ${sent.answer.status})`, sent.answer);
      case 'found':
        if (vendRecordOutcome(sent.record.status) !== 'pending')
          return this.fromTransaction(sent.record, ' (found by reference after a lost answer)');
        return await this.watch(
          'pending',
          ` (found ${sent.record.status} by reference after a lost answer)`,
          sent.record,
        );
      case 'refused':
        return this.finish('rejected', `the purchase was refused: ${sent.failure.message}; nothing was vended`);
      case 'never-received':
        return this.lastSendRefused
          ? this.finish('rejected', `the purchase was refused: ${sent.lost}; nothing was vended`)
          : this.finish(
              'not_vended',
              `the service never received the purchase (not found by reference (H4) after ${this.state.attempt} attempt(s)); nothing was vended`,
            );
      case 'unverified':
        return await this.watch(
          'outcome_unknown',
          ` (the purchase got no answer (${sent.lost}) and the requery by reference (H4) could not answer; it is NOT sent again)`,
        );
    }
  }

  /** Pending or unknown: requery until final, park as outcome_unknown, accept resolveOutcome. */
  private async watch(startAs: 'pending' | 'outcome_unknown', how: string, last?: VendRecord): Promise<VendResult> {
    const settled = await awaitFinal<VendRecord>({
      startAs,
      requery: async () => {
        const check = await this.acts.watchByReference({ reference: this.reference });
        return check.found ? { found: true, record: check.transaction } : { found: false };
      },
      isFinal: (t) => vendRecordOutcome(t.status) !== 'pending',
      absentIsFinal: () => Date.now() >= this.inFlightUntil,
      setStatus: (status) => this.setStatus(status),
      onParked: () => this.emitOutcome('outcome_unknown', `${how}; parked: requeried, or resolved by an operator`),
      resolution: () => this.resolution.value,
      onRead: (read) => {
        if (read !== 'error' && read.found) last = read.record;
        this.recordCheck(read);
      },
      pendingForMs: durationMs(this.options.pendingFor ?? DEFAULTS.pendingFor),
      ...parkedRequery(this.options),
    });
    if (settled.kind === 'final')
      return this.fromTransaction(settled.record, `${how}; final after requery by reference (H4)`);
    if (settled.kind === 'absent')
      return this.finish(
        'not_vended',
        `the service does not know reference ${this.reference} (not found by reference (H4) after the purchase got no answer); nothing was vended`,
      );
    const r = settled.resolution as OutcomeResolution<VendResolveOutcome>;
    this.state.resolution = r;
    this.record({
      op: 'resolve',
      attempt: this.state.attempt,
      outcome: r.outcome,
      detail: `by ${r.operator}: ${r.reason}`,
    });
    return this.finish(
      r.outcome,
      `resolved by ${r.operator}: ${r.reason} (the service could not tell the outcome of reference ${this.reference})`,
      last,
    );
  }

  /** Cancelled while a purchase may have moved money: ask the service once more, record what it says. */
  private async afterCancel(): Promise<VendResult> {
    // undefined: the service could not tell.
    const found: Presence<VendRecord> | undefined = await this.requery().catch(() => undefined);
    const note = 'cancel requested after the purchase may have been sent';
    // Seen: the service answered the purchase (even as pending) or a check found it. A "not found"
    // after that is no proof that nothing was vended.
    const neverSeen = this.state.steps.every(
      (s) => !((s.op === 'check' && s.outcome === 'found') || (s.op === 'purchase' && s.outcome === 'response')),
    );
    let result: VendResult;
    if (found?.found && vendRecordOutcome(found.record.status) !== 'pending')
      result = this.fromTransaction(found.record, ` (${note}; found by reference (H4))`);
    else if (found && !found.found && neverSeen && Date.now() >= this.inFlightUntil)
      result = this.finish(
        'not_vended',
        `${note}: the service does not know reference ${this.reference} (not found by reference (H4)); nothing was vended`,
      );
    else
      result = this.finish(
        'outcome_unknown',
        `${note}: the service ${found?.found ? `holds it as ${found.record.status}` : 'could not tell'}; reconcile reference ${this.reference}`,
        found?.found ? found.record : undefined,
      );
    return { ...result, cancelRequested: true };
  }

  // --- helpers ---

  /** One purchase (H3) (send-once's `send`): a resend waits `retryBackoff` and until no earlier attempt can be in flight. */
  private async send(sendNumber: number): Promise<VendRecord> {
    if (sendNumber > 1) {
      this.setStatus('retry_wait');
      const backoff = durationMs(this.options.retryBackoff ?? DEFAULTS.retryBackoff);
      await sleep(Math.max(backoff, this.inFlightUntil - Date.now()));
    }
    const attempt = (this.state.attempt += 1);
    this.setStatus('purchasing');
    const request = {
      reference: this.reference,
      amount: this.input.amount,
      phone_number: this.input.phone_number,
      email: this.input.email,
    };
    try {
      const transaction = await this.acts.purchase(request, { attempt, timeoutMs: this.purchaseTimeoutMs });
      this.record({ op: 'purchase', attempt, outcome: 'response', detail: transaction.status });
      return transaction;
    } catch (err) {
      this.lastSendRefused = isRefusalFailure(err);
      if (lostByHeartbeat(err)) this.inFlightUntil = Date.now() + this.purchaseTimeoutMs + IN_FLIGHT_MARGIN_MS;
      this.record({
        op: 'purchase',
        attempt,
        outcome: this.lastSendRefused ? 'rejected' : 'unknown',
        detail: failureLabel(err),
      });
      throw err;
    }
  }

  /** The transaction lookup (H4) by reference (send-once's `requery`, and the cleanup's last look). */
  private async requery(): Promise<Presence<VendRecord>> {
    this.setStatus('checking');
    try {
      const check = await this.acts.findByReference({ reference: this.reference });
      const read: Presence<VendRecord> = check.found ? { found: true, record: check.transaction } : { found: false };
      this.recordCheck(read);
      return read;
    } catch (err) {
      this.record({
        op: 'check',
        attempt: this.state.attempt,
        outcome: 'error',
        detail: failureTypeOf(err) ?? 'Unknown',
      });
      throw err;
    }
  }

  private recordCheck(read: Presence<VendRecord> | 'error'): void {
    const attempt = this.state.attempt;
    if (read === 'error') this.record({ op: 'check', attempt, outcome: 'error', detail: 'Unavailable' });
    else if (read.found) this.record({ op: 'check', attempt, outcome: 'found', detail: read.record.status });
    else this.record({ op: 'check', attempt, outcome: 'not_found' });
  }

  private fromTransaction(t: VendRecord, how: string): VendResult {
    return vendRecordOutcome(t.status) === 'vended'
      ? this.finish('vended', `vended${how}`, t)
      : this.finish('failed', `the service holds the purchase with status ${t.status}${how}; it is not sent again`, t);
  }

  private finish(status: VendResult['status'], message: string, transaction?: VendRecord): VendResult {
    this.setStatus(status);
    return {
      ...stateCopy(this.state),
      status,
      message,
      ...(this.meter ? { meter: this.meter } : {}),
      ...(transaction ? { transaction, ...(transaction.token ? { token: transaction.token } : {}) } : {}),
    };
  }

  /**
   * PaymentStatus is written where an operator filters: the end and a parked sale
   * (`outcome_unknown`). The steps between are the query's to answer (docs/performance.md).
   */
  private setStatus(status: VendState['status']): void {
    this.state.status = status;
    if (VEND_FINAL_STATUSES.includes(status) || status === 'outcome_unknown') this.visible?.status(status);
  }

  private record(step: VendStep): void {
    this.state.steps.push(step);
  }
}
