// One terminal transaction (F3) sent once, for every terminal flow: the sale (../pos-terminal.ts),
// the refund (../pos-refund.ts), the pre-authorisation and its completion (../pos-preauth.ts).
//
//   answered 00 / 51 / 55 / another code   → approved / declined (with the action to show)
//   answered 91 or 96 (or no code)         → not an answer: requeried (F4) at once, like a lost one
//   lost (timeout, reset, 5xx, worker)     → settle delay, then the requery by merchant_ref (send-once)
//   refused (400, 401/403, 404 terminal)   → rejected: nothing happened
//   requery found it                       → that record is the outcome; never sent again
//   requery 404                            → resend, same merchant_ref and request, bounded
//                                            (maxAttempts), after a doubling backoff and, if the
//                                            last send was lost by its heartbeat timeout, after
//                                            its HTTP call can no longer be in flight
//   requery cannot answer (retries ran out) → outcome_unknown, parked: the requery on a backoff
//                                            for `unknownRequeryFor`, the operator's resolveOutcome
//   a RETRY refused (400 duplicate...)     → the requery decides (send-once)
//   sealed card read gone before a send    → card_data_unavailable (nothing sent by that attempt)
//   cancelled after it may have been sent  → a non-cancellable requery records the real outcome
//
// The caller owns the state object (attempt, steps) and the status names; this module moves them
// and turns the result into a PosTransactionOutcome, worded for the flow (PosTransactionWording).
// The sealed card read the send activity kept for a resend (a lost answer, 91/96) is discarded
// once the flow has decided (best effort: its TTL ends it anyway).
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  isCancellation,
  log,
  proxyActivities,
  sleep,
} from '@temporalio/workflow';
import type { PosTerminalActivities } from '../../activities/pos-terminal';
import {
  POS_RESOLVE_OUTCOMES,
  classifyPosCode,
  type PosLinkedInitiateRequest,
  type PosRequeryOutcome,
  type PosResolveOutcome,
  type PosSealedInitiateRequest,
  type PosStep,
  type PosTransactionOptions,
  type PosTransactionRecord,
} from '../../shared/pos-terminal';
import { SECRET_UNAVAILABLE } from '../../shared/claim-check';
import type { OutcomeResolution } from '../../shared/outcome';
import { IN_FLIGHT_MARGIN_MS } from '../../shared/activity-timeouts';
import { failureMessage, failureOf, isRefusalFailure } from '../../shared/failures';
import { durationMs } from '../../shared/duration';
import { BEST_EFFORT_STORE, POLL, moneySend, readUntil } from './activity-options';
import { sendOnce, type Presence, type SendOnceResult } from './send-once';
import {
  awaitFinal,
  listenForResolutionIn,
  lostByHeartbeat,
  parkedRequery,
  type ResolutionSlot as Slot,
  type Settled,
} from './unknown-outcome';
import {
  DEVICE_SEND_HTTP_TIMEOUT_MS,
  REQUERY_WHILE_UNANSWERED,
  SETTLE_BEFORE_REQUERY,
  UNSENT_RESEND_BACKOFF,
} from './durations';

export const POS_TRANSACTION_DEFAULTS = {
  maxAttempts: 3,
  retryBackoff: UNSENT_RESEND_BACKOFF,
  requerySettleDelay: SETTLE_BEFORE_REQUERY,
  initiateTimeoutMs: DEVICE_SEND_HTTP_TIMEOUT_MS,
  requeryTimeout: REQUERY_WHILE_UNANSWERED,
} as const;

/** Not a failure type of the activities: the workflow's reading of a 91/96 answer, for send-once. */
const PROCESSOR_UNKNOWN = 'ProcessorOutcomeUnknown';

/** What one send gave the flow: the service's final answer, or nothing sent (sealed card gone). */
export type PosTransactionSent =
  { kind: 'answer'; transaction: PosTransactionRecord } | { kind: 'not_sent'; detail: string };

export type PosTransactionStatus =
  'approved' | 'declined' | 'rejected' | 'not_received' | 'outcome_unknown' | 'card_data_unavailable';

export interface PosTransactionOutcome {
  status: PosTransactionStatus;
  action: string;
  transaction?: PosTransactionRecord;
  /** The operator's resolveOutcome, when that ended it. */
  resolution?: OutcomeResolution<PosResolveOutcome>;
  /** The service refused the request (rejected): its message. */
  refusal?: string;
  cancelRequested?: boolean;
}

/** How a flow words its outcomes (the sale speaks of charges, the others of "the refund", …). */
export interface PosTransactionWording {
  approved: (action: string) => string;
  /** A 91/96 that the requery (F4) confirmed: the service has it and it did not go through. */
  receivedNotThrough: (action: string) => string;
  notReceived: (how: string) => string;
  /** The sealed card read was gone before the send (`attempt` sends made before it). */
  cardGone: (attempt: number) => string;
  refused: (message: string) => string;
  /** What a cancel after a send notes. */
  cancelNote: string;
  /** The subject of "… is NOT sent again". */
  notSentAgain: string;
}

/** The wording of the transactions beyond the sale: "refund", "pre-authorisation", "completion". */
export function linkedWording(what: string): PosTransactionWording {
  return {
    approved: () => `Approved: the ${what} went through`,
    receivedNotThrough: (action) =>
      `${action}: the service received the ${what} (confirmed by requery) and it did not go through`,
    notReceived: (how) => `The service never received the ${what} (${how}); nothing moved.`,
    cardGone: (attempt) =>
      attempt === 0
        ? `The sealed card data expired before the ${what} was sent: nothing was sent. Start again with a fresh card read.`
        : `The sealed card data expired before the retry could be sent; the service never received attempt ${attempt} (the requery answered 404): nothing moved. Start again with a fresh card read.`,
    refused: (message) => `Refused by the service, nothing moved: ${message}`,
    cancelNote: `cancel requested after the ${what} may have been sent`,
    notSentAgain: 'it',
  };
}

export interface PosTransactionSpec {
  wording: PosTransactionWording;
  /** The request: transaction_type, merchant_ref, original_merchant_ref (refund, completion), the sealed card. */
  req: PosSealedInitiateRequest | PosLinkedInitiateRequest;
  options: PosTransactionOptions;
  /** Mutated: attempt (requests sent) and steps (every initiate and requery, in order). */
  track: { attempt: number; steps: PosStep[] };
  setStatus: (status: 'initiating' | 'requerying' | 'retry_wait' | 'outcome_unknown') => void;
  /** The operator's resolution while parked (the caller's resolveOutcome handler sets it). */
  resolution: () => OutcomeResolution<PosResolveOutcome> | undefined;
  /** Runs once the transaction parks as outcome_unknown: the flow's needs_attention event (docs/events.md). */
  onParked?: () => Promise<void>;
}

/** Decide one transaction, then discard the card read kept for a resend. */
export async function sendPosTransaction(spec: PosTransactionSpec): Promise<PosTransactionOutcome> {
  const send = new PosTransactionSend(spec);
  const outcome = await send.decide();
  await send.discardKeptCard();
  return outcome;
}

/** The requery (F4) by merchant_ref, read-only. */
export function posTransactionLookup(options: Pick<PosTransactionOptions, 'requeryTimeout'>) {
  // Retried until it answers (found or 404) or the requery timeout ends: only then does a flow
  // park the outcome as unknown.
  const { posTerminalRequeryTransaction } = proxyActivities<PosTerminalActivities>(
    readUntil(durationMs(options.requeryTimeout ?? POS_TRANSACTION_DEFAULTS.requeryTimeout)),
  );
  // While parked: one bounded read per round; the rounds carry the backoff.
  const { posTerminalRequeryTransaction: watch } = proxyActivities<PosTerminalActivities>(POLL);
  return {
    requery: (merchantRef: string): Promise<PosRequeryOutcome> =>
      posTerminalRequeryTransaction({ merchant_ref: merchantRef }),
    watch: (merchantRef: string): Promise<PosRequeryOutcome> => watch({ merchant_ref: merchantRef }),
  };
}

/** Where a flow keeps the operator's resolveOutcome (one per parked transaction). */
export type ResolutionSlot = Slot<PosResolveOutcome>;

/** The resolveOutcome Update: accepted once per slot, only while the flow is parked (outcome_unknown). */
export function listenForResolveOutcome(slot: () => ResolutionSlot, state: { readonly status: string }): void {
  listenForResolutionIn(POS_RESOLVE_OUTCOMES, slot, state);
}

/** The steps of one transaction through the one send-once rule (./send-once.ts). */
export class PosTransactionSend {
  // --- state ---

  private readonly maxAttempts: number;
  private readonly initiateTimeoutMs: number;
  private readonly initiate: PosTerminalActivities['posTerminalInitiateTransaction'];
  private readonly discard: PosTerminalActivities['posDiscardSealedCard'];
  private readonly lookup: ReturnType<typeof posTransactionLookup>;
  /** No attempt may still be in flight after this (workflow time). */
  private inFlightUntil = 0;
  private lastSendRefused = false;
  /** The send activity kept the sealed card read for a resend (lost answer, 91/96). */
  private cardKept = false;

  constructor(private readonly spec: PosTransactionSpec) {
    const { options } = spec;
    this.maxAttempts = options.maxAttempts ?? POS_TRANSACTION_DEFAULTS.maxAttempts;
    this.initiateTimeoutMs = options.initiateTimeoutMs ?? POS_TRANSACTION_DEFAULTS.initiateTimeoutMs;
    // The attempt outlives the client's own deadline (initiateTimeoutMs): never cut off mid-call.
    this.initiate = proxyActivities<PosTerminalActivities>(
      moneySend(this.initiateTimeoutMs),
    ).posTerminalInitiateTransaction;
    // Best effort: the record's TTL ends it anyway, so a store that stays down does not hold the flow.
    this.discard = proxyActivities<PosTerminalActivities>(BEST_EFFORT_STORE).posDiscardSealedCard;
    this.lookup = posTransactionLookup(options);
  }

  // --- the main steps ---

  /** Send once, then the outcome; a cancel after the send asks the requery (F4) and records what it says. */
  async decide(): Promise<PosTransactionOutcome> {
    try {
      const sent = await sendOnce<PosTransactionSent, PosTransactionRecord>({
        send: (n) => this.send(n),
        requery: () => this.requery(),
        // The settle wait is the send's own (after a lost answer, not after a 91/96 answer).
        settleMs: 0,
        // The requery (F4) 404 is documented as "never received, a retry is safe".
        absentReads: 1,
        maxSends: this.maxAttempts,
      });
      return await this.outcomeOf(sent);
    } catch (err) {
      if (!isCancellation(err)) throw err;
      return await CancellationScope.nonCancellable(() => this.afterCancel());
    }
  }

  /** Best effort, not cancellable: the card read kept for a resend, once the flow has decided. */
  async discardKeptCard(): Promise<void> {
    if (!this.cardKept) return;
    const handle = this.spec.req.card.handle;
    await CancellationScope.nonCancellable(async () => {
      try {
        await this.discard(handle);
      } catch (err) {
        log.warn('sealed card read not discarded; its TTL ends it', { error: failureMessage(err) });
      }
    });
  }

  private async outcomeOf(
    sent: SendOnceResult<PosTransactionSent, PosTransactionRecord>,
  ): Promise<PosTransactionOutcome> {
    const { wording, track } = this.spec;
    switch (sent.outcome) {
      case 'answered':
        if (sent.answer.kind === 'answer') return this.fromTransaction(sent.answer.transaction, false);
        return { status: 'card_data_unavailable', action: wording.cardGone(track.attempt) };
      case 'refused':
        return this.rejected(sent.failure.message);
      case 'found':
        return this.fromTransaction(sent.record, true);
      case 'never-received':
        return this.lastSendRefused
          ? this.rejected(sent.lost)
          : this.notReceived(`the requery answered 404 after ${track.attempt} attempt(s)`);
      case 'unverified':
        return await this.park(sent.lost);
    }
  }

  /**
   * Unknown outcome: parked, the requery (F4) on a backoff until it tells (or proves absence), or the operator resolves
   * it.
   */
  private async park(why: string): Promise<PosTransactionOutcome> {
    const { options, track, req } = this.spec;
    const settled: Settled<PosTransactionRecord> = await awaitFinal<PosTransactionRecord>({
      startAs: 'outcome_unknown',
      requery: async () => {
        const out = await this.lookup.watch(req.merchant_ref);
        return out.found ? { found: true, record: out.transaction } : { found: false };
      },
      isFinal: () => true,
      absentIsFinal: () => Date.now() >= this.inFlightUntil,
      setStatus: () => this.spec.setStatus('outcome_unknown'),
      onParked: this.spec.onParked,
      resolution: () => this.spec.resolution(),
      onRead: (read) =>
        this.record(
          read === 'error'
            ? { op: 'requery', attempt: track.attempt, outcome: 'error', detail: 'Unavailable' }
            : read.found
              ? { op: 'requery', attempt: track.attempt, outcome: 'found', response_code: read.record.response_code }
              : { op: 'requery', attempt: track.attempt, outcome: 'not_found' },
        ),
      ...parkedRequery(options),
    });
    if (settled.kind === 'final') return this.fromTransaction(settled.record, true);
    if (settled.kind === 'absent')
      return this.notReceived(`the requery answered 404 while the outcome was unknown: ${why}`);
    const r = settled.resolution as OutcomeResolution<PosResolveOutcome>;
    this.record({ op: 'resolve', attempt: track.attempt, outcome: r.outcome, detail: `by ${r.operator}: ${r.reason}` });
    return {
      status: r.outcome,
      resolution: r,
      action: `Resolved by ${r.operator}: ${r.reason} (the requery could not tell the outcome of merchant_ref ${req.merchant_ref})`,
    };
  }

  /** Cancelled while the transaction may have moved money: ask the requery (F4), record what it says. */
  private async afterCancel(): Promise<PosTransactionOutcome> {
    const { wording, req } = this.spec;
    let found: Presence<PosTransactionRecord> | undefined;
    try {
      found = await this.requery();
    } catch {
      found = undefined;
    }
    const note = wording.cancelNote;
    let out: PosTransactionOutcome;
    if (found?.found) out = this.fromTransaction(found.record, true);
    else if (found && Date.now() >= this.inFlightUntil) out = this.notReceived(`${note}; the requery answered 404`);
    else
      out = {
        status: 'outcome_unknown',
        action: `${note}: the requery could not tell; ${wording.notSentAgain} is NOT sent again. Reconcile by merchant_ref ${req.merchant_ref}.`,
      };
    return {
      ...out,
      action: found?.found ? `${out.action} (${note}; confirmed by the requery)` : out.action,
      cancelRequested: true,
    };
  }

  // --- helpers ---

  /**
   * One send; a resend waits a doubling backoff and, after a lost heartbeat, until the last call can no longer be in
   * flight.
   */
  private async send(sendNumber: number): Promise<PosTransactionSent> {
    const { options, track, req } = this.spec;
    if (sendNumber > 1) {
      // send-once sends again only after the requery (F4) answered 404 for the attempt just made.
      this.spec.setStatus('retry_wait');
      const base = durationMs(options.retryBackoff ?? POS_TRANSACTION_DEFAULTS.retryBackoff);
      await sleep(Math.max(base * 2 ** (track.attempt - 1), this.inFlightUntil - Date.now()));
    }
    track.attempt += 1;
    this.spec.setStatus('initiating');
    let transaction: PosTransactionRecord;
    try {
      transaction = (await this.initiate(req, { attempt: track.attempt, timeoutMs: this.initiateTimeoutMs }))
        .transaction;
    } catch (err) {
      return await this.sendFailed(err);
    }
    this.lastSendRefused = false;
    this.record({
      op: 'initiate',
      attempt: track.attempt,
      outcome: 'response',
      response_code: transaction.response_code,
    });
    const c = classifyPosCode(transaction.response_code, transaction.response_message);
    this.cardKept = c.outcome === 'unknown';
    if (c.outcome === 'unknown') {
      // 91 or 96: the outcome is unknown until the requery (F4) tells; to send-once this is a lost answer.
      throw ApplicationFailure.create({
        type: PROCESSOR_UNKNOWN,
        message: `the send was answered ${transaction.response_code || 'without a code'}: ${c.action}`,
        nonRetryable: true,
      });
    }
    return { kind: 'answer', transaction };
  }

  /** The send failed: nothing sent (card read gone), refused, or it may have reached the service (rethrown). */
  private async sendFailed(err: unknown): Promise<PosTransactionSent> {
    const { options, track } = this.spec;
    // An untyped failure's type is '' after conversion: no type either.
    const type = failureOf(err)?.type || undefined;
    if (type === SECRET_UNAVAILABLE) {
      // Nothing was sent: this attempt does not count, and there is nothing to requery.
      track.attempt -= 1;
      return { kind: 'not_sent', detail: failureMessage(err) };
    }
    this.lastSendRefused = isRefusalFailure(err);
    this.cardKept = !this.lastSendRefused;
    if (this.lastSendRefused) {
      this.record({ op: 'initiate', attempt: track.attempt, outcome: 'rejected', detail: type });
      throw err;
    }
    // OutcomeUnknown (timeout, lost connection, 5xx, unreadable answer), an activity or
    // heartbeat timeout, a lost worker, anything else: it may have reached the service.
    const lostHeartbeat = lostByHeartbeat(err);
    if (lostHeartbeat) this.inFlightUntil = Date.now() + this.initiateTimeoutMs + IN_FLIGHT_MARGIN_MS;
    this.record({
      op: 'initiate',
      attempt: track.attempt,
      outcome: 'unknown',
      detail:
        type ??
        (lostHeartbeat
          ? 'HeartbeatTimeout'
          : err instanceof ActivityFailure && err.cause instanceof TimeoutFailure
            ? 'ActivityTimeout'
            : 'Unknown'),
    });
    // Let an in-flight request land before asking for it (91/96 need no wait: the service answered).
    await sleep(durationMs(options.requerySettleDelay ?? POS_TRANSACTION_DEFAULTS.requerySettleDelay));
    throw err;
  }

  /** The requery (F4) by merchant_ref, recorded as a step; throws when the requery could not answer. */
  private async requery(): Promise<Presence<PosTransactionRecord>> {
    const { track, req } = this.spec;
    this.spec.setStatus('requerying');
    let out: PosRequeryOutcome;
    try {
      out = await this.lookup.requery(req.merchant_ref);
    } catch (err) {
      this.record({
        op: 'requery',
        attempt: track.attempt,
        outcome: 'error',
        detail: failureOf(err)?.type ?? 'Unknown',
      });
      throw err;
    }
    if (out.found) {
      this.record({
        op: 'requery',
        attempt: track.attempt,
        outcome: 'found',
        response_code: out.transaction.response_code,
      });
      return { found: true, record: out.transaction };
    }
    this.record({ op: 'requery', attempt: track.attempt, outcome: 'not_found' });
    return { found: false };
  }

  private fromTransaction(t: PosTransactionRecord, confirmedByRequery: boolean): PosTransactionOutcome {
    const { wording } = this.spec;
    const c = classifyPosCode(t.response_code, t.response_message);
    if (c.outcome === 'approved') return { status: 'approved', action: wording.approved(c.action), transaction: t };
    if (c.outcome === 'declined') return { status: 'declined', action: c.action, transaction: t };
    // 91/96 confirmed by the requery (F4): the service has it and it did not go through. Never sent again.
    return {
      status: 'declined',
      action: confirmedByRequery ? wording.receivedNotThrough(c.action) : c.action,
      transaction: t,
    };
  }

  private notReceived(how: string): PosTransactionOutcome {
    return { status: 'not_received', action: this.spec.wording.notReceived(how) };
  }

  private rejected(message: string): PosTransactionOutcome {
    return { status: 'rejected', refusal: message, action: this.spec.wording.refused(message) };
  }

  private record(step: PosStep): void {
    this.spec.track.steps.push(step);
  }
}
