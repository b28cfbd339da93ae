// POS terminal transaction (F3 initiate, F4 requery by merchant_ref).
//
// Every field rule is checked first; nothing is sent for an input that breaks one.
// F3 is sent through the one send-once rule (./send-once.ts): send = F3 (an activity that never
// retries by itself, heartbeating while its call is open), requery = F4 by merchant_ref. What
// this flow keeps:
//
//   F3 answered 00                         → approved
//   F3 answered 51, 55 (or another code)   → declined, with the action to show
//   F3 answered 91 or 96 (or no code)      → not an answer: requeried (F4) at once, like a lost one
//   F3 timed out / connection lost / 5xx   → requery (F4), after a short settle delay
//   F3 refused (400, 401/403, 404 terminal) → rejected: nothing happened
//   F4 found the transaction               → that is the outcome (never sent again)
//   F4 404                                 → the service never received it: a resend with the
//                                            same merchant_ref, bounded (maxAttempts), after a
//                                            doubling backoff and, if the last F3 was lost by its
//                                            heartbeat timeout, after its HTTP call can no longer
//                                            be in flight
//   F4 cannot answer (its retries ran out) → outcome_unknown, parked: never sent again, F4 asked
//                                            on a backoff for `unknownRequeryFor` (24 h), the
//                                            operator Update resolveOutcome (src/shared/outcome.ts:
//                                            approved | declined | not_received) ends it
//   a RETRY refused (400 duplicate...)     → F4 decides (send-once)
//   cancelled after F3 may have been sent  → a non-cancellable cleanup asks F4 and records what
//                                            it says (cancelRequested); never "cancelled"
//
// The card read (PAN, expiry, cardholder name, card sequence number, track2, chip data, PIN
// block) never reaches the workflow: the starter sealed it into the claim-check store and the
// input carries its handle plus BIN and last four. The F3 activity redeems the handle; the record
// is deleted once the service answered with an outcome, and kept while a resend may still be
// proved safe (a lost answer, 91/96), then discarded when the flow ends (its TTL ends it anyway).
// A card read that no longer opens (expired before F3 was sent) ends the flow as
// card_data_unavailable: nothing was sent, nothing charged; start again with a fresh card read.
// Flows started before the claim check (no patch marker) replay with their in-clear input.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';
import type { PosActivities } from '../activities/pos';
import {
  POS_RESOLVE_OUTCOMES,
  POS_SEALED_FIELDS,
  PosSealedTransactionInputSchema,
  PosTransactionInputSchema,
  classifyPosCode,
  maskedPan,
  posTransactionStateQuery,
  unsealedCardFields,
  type PosInitiateRequest,
  type PosSealedInitiateRequest,
  type PosSealedTransactionInput,
  type PosTransactionParsedInput,
  type PosRequeryOutcome,
  type PosResolveOutcome,
  type PosStep,
  type PosTransactionInput,
  type PosTransactionRecord,
  type PosTransactionResult,
  type PosTransactionState,
} from '../shared/pos';
import { SECRET_UNAVAILABLE } from '../shared/claim-check';
import {
  checkResolveOutcome,
  resolveOutcomeUpdate,
  UNKNOWN_OUTCOME_DEFAULTS,
  type OutcomeResolution,
} from '../shared/outcome';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { sendOnce, type Presence } from './send-once';
import { awaitFinal, lostByHeartbeat, type Settled } from './unknown-outcome';
import {
  FailureTypes,
  activityFailureMessage,
  activityFailureType,
  describeIssues,
  issuesOf,
  type FieldIssue,
} from '../shared/failures';
import { durationMs } from '../shared/duration';

/** Flows started after the claim check take only a sealed card read (see the header). */
const SEALED_CARD_PATCH = 'pos-sealed-card';

const DEFAULTS = {
  maxAttempts: 3,
  retryBackoff: '2s',
  requerySettleDelay: '3s',
  initiateTimeoutMs: 45_000,
  requeryTimeout: '10 minutes',
  unknownRequeryFor: UNKNOWN_OUTCOME_DEFAULTS.requeryFor,
  requeryBackoff: UNKNOWN_OUTCOME_DEFAULTS.firstBackoff,
  requeryMaxBackoff: UNKNOWN_OUTCOME_DEFAULTS.maxBackoff,
} as const;

/** Margin over the HTTP timeout: start-to-close, and the wait before a resend after a lost heartbeat. */
const IN_FLIGHT_MARGIN_MS = 15_000;
/** F3's heartbeat timeout: a worker lost mid-call is noticed this quickly. */
const INITIATE_HEARTBEAT_TIMEOUT = '10s';
const REFUSED: readonly string[] = [
  FailureTypes.BadRequest,
  FailureTypes.Unauthorized,
  FailureTypes.InvalidRequest,
  FailureTypes.NotFound,
];

/** What one F3 send gave the flow: the service's final answer, or nothing sent (sealed card gone). */
type Sent = { kind: 'answer'; transaction: PosTransactionRecord } | { kind: 'not_sent'; detail: string };

export async function posTerminalTransactionWorkflow(
  raw: PosSealedTransactionInput | PosTransactionInput,
): Promise<PosTransactionResult> {
  // ---- 1. every field rule, before anything is sent ----
  const sealedCard = patched(SEALED_CARD_PATCH);
  const invalid = (issues: FieldIssue[]) =>
    ApplicationFailure.create({
      type: 'InvalidInput',
      message: `invalid POS transaction: ${describeIssues(issues)}`,
      nonRetryable: true,
      details: [issues],
    });
  let req: PosSealedInitiateRequest | PosInitiateRequest;
  let options: NonNullable<PosTransactionParsedInput['options']>;
  if (sealedCard) {
    // Card-read fields are refused by name (never by value); the rest is checked as usual.
    const rest = Object.fromEntries(
      Object.entries(raw ?? {}).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)),
    );
    const parsed = PosSealedTransactionInputSchema.safeParse(rest);
    const issues = [...unsealedCardFields(raw), ...(parsed.success ? [] : issuesOf(parsed.error))];
    if (!parsed.success || issues.length > 0) throw invalid(issues);
    ({ options = {}, ...req } = parsed.data);
  } else {
    // A flow started before the claim check: its input holds the card read (encrypted by the codec).
    const parsed = PosTransactionInputSchema.safeParse(raw);
    if (!parsed.success) throw invalid(issuesOf(parsed.error));
    ({ options = {}, ...req } = parsed.data);
  }
  const maxAttempts = options.maxAttempts ?? DEFAULTS.maxAttempts;
  const initiateTimeoutMs = options.initiateTimeoutMs ?? DEFAULTS.initiateTimeoutMs;

  const { posTerminalInitiateTransaction } = proxyActivities<PosActivities>({
    // Longer than the client's own deadline (initiateTimeoutMs) plus a margin: the activity never
    // times out while its HTTP call is open; the heartbeat timeout notices a lost worker.
    startToCloseTimeout: initiateTimeoutMs + IN_FLIGHT_MARGIN_MS,
    heartbeatTimeout: INITIATE_HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 1 }, // never retried by Temporal: the workflow requeries first
  });
  const { posDiscardSealedCard } = proxyActivities<PosActivities>({
    startToCloseTimeout: '10s',
    retry: { maximumAttempts: 3 },
  });
  const requeryRetry: RetryPolicy = {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    nonRetryableErrorTypes: [FailureTypes.Unauthorized, FailureTypes.InvalidRequest, FailureTypes.BadRequest],
  };
  const { posTerminalRequeryTransaction } = proxyActivities<PosActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: durationMs(options.requeryTimeout ?? DEFAULTS.requeryTimeout),
    // F4 is read-only: retried until it answers (found or 404) or the requery timeout ends.
    retry: requeryRetry,
  });
  // While parked: one bounded read per round; the rounds carry the backoff.
  const { posTerminalRequeryTransaction: posTerminalWatchTransaction } = proxyActivities<PosActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: '2 minutes',
    retry: { ...requeryRetry, maximumAttempts: 3 },
  });

  const state: PosTransactionState = {
    merchantRef: req.merchant_ref,
    status: 'validating',
    attempt: 0,
    steps: [],
    ...('card' in req ? { card: { maskedPan: maskedPan(req.card) } } : {}),
  };
  /** The F3 activity kept the sealed card read for a resend (lost answer, 91/96): discarded when the flow ends. */
  let cardKept = false;
  setHandler(posTransactionStateQuery, () => ({ ...state, steps: [...state.steps] }));
  let resolution: OutcomeResolution<PosResolveOutcome> | undefined;
  setHandler(
    resolveOutcomeUpdate,
    (r) => {
      resolution ??= {
        outcome: r.outcome as PosResolveOutcome,
        reason: r.reason.trim(),
        operator: r.operator.trim(),
        resolvedAt: new Date(Date.now()).toISOString(),
      };
      return resolution;
    },
    {
      validator: (r) =>
        checkResolveOutcome(r, POS_RESOLVE_OUTCOMES, state.status === 'outcome_unknown' && resolution === undefined),
    },
  );
  const setStatus = (status: PosTransactionState['status']) => {
    state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const record = (step: PosStep) => state.steps.push(step);
  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'pos-terminal',
      reference: req.merchant_ref,
      status: 'validating',
      amount: Number(req.amount),
      currency: req.currency,
    }),
  );

  // ---- F3 through send-once; F4 by merchant_ref is its requery ----
  /** No F3 attempt may still be in flight after this (workflow time). */
  let inFlightUntil = 0;
  let lastSendRefused = false;
  const send = async (sendNumber: number): Promise<Sent> => {
    if (sendNumber > 1) {
      // send-once sends again only after F4 answered 404 for the attempt just made.
      setStatus('retry_wait');
      await sleep(
        Math.max(backoff(options.retryBackoff ?? DEFAULTS.retryBackoff, state.attempt), inFlightUntil - Date.now()),
      );
    }
    state.attempt += 1;
    setStatus('initiating');
    let transaction: PosTransactionRecord;
    try {
      transaction = (
        await posTerminalInitiateTransaction(req, { attempt: state.attempt, timeoutMs: initiateTimeoutMs })
      ).transaction;
    } catch (err) {
      const type = activityFailureType(err);
      if (type === SECRET_UNAVAILABLE) {
        // Nothing was sent: this attempt does not count, and there is nothing to requery.
        state.attempt -= 1;
        return { kind: 'not_sent', detail: activityFailureMessage(err) };
      }
      lastSendRefused = type !== undefined && REFUSED.includes(type);
      cardKept = !lastSendRefused;
      if (lastSendRefused) {
        record({ op: 'initiate', attempt: state.attempt, outcome: 'rejected', detail: type });
        throw err;
      }
      // OutcomeUnknown (timeout, lost connection, 5xx, unreadable answer), an activity or
      // heartbeat timeout, a lost worker, anything else: it may have reached the service.
      const lostHeartbeat = lostByHeartbeat(err);
      if (lostHeartbeat) inFlightUntil = Date.now() + initiateTimeoutMs + IN_FLIGHT_MARGIN_MS;
      record({
        op: 'initiate',
        attempt: state.attempt,
        outcome: 'unknown',
        detail:
          type ??
          (lostHeartbeat
            ? 'HeartbeatTimeout'
            : err instanceof ActivityFailure && err.cause instanceof TimeoutFailure
              ? 'ActivityTimeout'
              : 'Unknown'),
      });
      // Let an in-flight request land before asking for it (91/96 below need no wait: the service answered).
      await sleep(durationMs(options.requerySettleDelay ?? DEFAULTS.requerySettleDelay));
      throw err;
    }
    lastSendRefused = false;
    record({ op: 'initiate', attempt: state.attempt, outcome: 'response', response_code: transaction.response_code });
    const c = classifyPosCode(transaction.response_code, transaction.response_message);
    cardKept = c.outcome === 'unknown';
    if (c.outcome === 'unknown') {
      // 91 or 96: the outcome is unknown until F4 tells; to send-once this is a lost answer.
      throw ApplicationFailure.create({
        type: PROCESSOR_UNKNOWN,
        message: `F3 answered ${transaction.response_code || 'without a code'}: ${c.action}`,
        nonRetryable: true,
      });
    }
    return { kind: 'answer', transaction };
  };
  const requery = async (): Promise<Presence<PosTransactionRecord>> => {
    setStatus('requerying');
    let out: PosRequeryOutcome;
    try {
      out = await posTerminalRequeryTransaction({ merchant_ref: req.merchant_ref });
    } catch (err) {
      record({
        op: 'requery',
        attempt: state.attempt,
        outcome: 'error',
        detail: activityFailureType(err) ?? 'Unknown',
      });
      throw err;
    }
    if (out.found) {
      record({ op: 'requery', attempt: state.attempt, outcome: 'found', response_code: out.transaction.response_code });
      return { found: true, record: out.transaction };
    }
    record({ op: 'requery', attempt: state.attempt, outcome: 'not_found' });
    return { found: false };
  };

  const finish = (
    status: PosTransactionResult['status'],
    action: string,
    transaction?: PosTransactionRecord,
  ): PosTransactionResult => {
    setStatus(status);
    return {
      ...state,
      steps: [...state.steps],
      status,
      action,
      ...(transaction ? { transaction, responseCode: transaction.response_code } : {}),
    };
  };
  const fromTransaction = (t: PosTransactionRecord, confirmedByRequery: boolean): PosTransactionResult => {
    const c = classifyPosCode(t.response_code, t.response_message);
    if (c.outcome === 'approved') return finish('approved', c.action, t);
    if (c.outcome === 'declined') return finish('declined', c.action, t);
    // 91/96 confirmed by F4: the service has it and it did not go through. Never sent again.
    return finish(
      'declined',
      confirmedByRequery
        ? `${c.action}: the service received the transaction (confirmed by requery); try again later as a new sale`
        : c.action,
      t,
    );
  };
  const notReceived = (how: string) =>
    finish(
      'not_received',
      `The service never received the transaction (${how}); nothing was charged. Start again with a fresh card read.`,
    );

  /** Unknown outcome: parked, F4 on a backoff, resolveOutcome accepted. */
  const park = async (why: string): Promise<PosTransactionResult> => {
    const settled: Settled<PosTransactionRecord> = await awaitFinal<PosTransactionRecord>({
      startAs: 'outcome_unknown',
      requery: async () => {
        const out = await posTerminalWatchTransaction({ merchant_ref: req.merchant_ref });
        return out.found ? { found: true, record: out.transaction } : { found: false };
      },
      isFinal: () => true,
      absentIsFinal: () => Date.now() >= inFlightUntil,
      setStatus: () => setStatus('outcome_unknown'),
      resolution: () => resolution,
      onRead: (read) =>
        record(
          read === 'error'
            ? { op: 'requery', attempt: state.attempt, outcome: 'error', detail: 'Unavailable' }
            : read.found
              ? { op: 'requery', attempt: state.attempt, outcome: 'found', response_code: read.record.response_code }
              : { op: 'requery', attempt: state.attempt, outcome: 'not_found' },
        ),
      pendingForMs: 0,
      requeryForMs: durationMs(options.unknownRequeryFor ?? DEFAULTS.unknownRequeryFor),
      firstBackoffMs: durationMs(options.requeryBackoff ?? DEFAULTS.requeryBackoff),
      maxBackoffMs: durationMs(options.requeryMaxBackoff ?? DEFAULTS.requeryMaxBackoff),
    });
    if (settled.kind === 'final') return fromTransaction(settled.record, true);
    if (settled.kind === 'absent') return notReceived(`F4 404 while the outcome was unknown: ${why}`);
    const r = settled.resolution as OutcomeResolution<PosResolveOutcome>;
    state.resolution = r;
    record({ op: 'resolve', attempt: state.attempt, outcome: r.outcome, detail: `by ${r.operator}: ${r.reason}` });
    return finish(
      r.outcome,
      `Resolved by ${r.operator}: ${r.reason} (F4 could not tell the outcome of merchant_ref ${req.merchant_ref})`,
    );
  };

  // ---- 2. the flow ----
  const result = await decide();
  if (cardKept && 'card' in req) {
    const handle = req.card.handle;
    await CancellationScope.nonCancellable(async () => {
      try {
        await posDiscardSealedCard(handle);
      } catch (err) {
        log.warn('sealed card read not discarded; its TTL ends it', { error: activityFailureMessage(err) });
      }
    });
  }
  return result;

  async function decide(): Promise<PosTransactionResult> {
    // Everything from here may follow an F3 that moved money.
    try {
      const sent = await sendOnce<Sent, PosTransactionRecord>({
        what: 'POS transaction (F3)',
        send,
        requery,
        // The settle wait is the send's own (after a lost answer, not after a 91/96 answer).
        settleMs: 0,
        // F4 404 is documented as "never received, a retry is safe".
        absentReads: 1,
        maxSends: maxAttempts,
        isRefusal: (err) => {
          const type = activityFailureType(err);
          return type !== undefined && REFUSED.includes(type);
        },
      });
      switch (sent.outcome) {
        case 'answered':
          if (sent.answer.kind === 'answer') return fromTransaction(sent.answer.transaction, false);
          return finish(
            'card_data_unavailable',
            state.attempt === 0
              ? 'The sealed card data expired before the transaction was sent: nothing was sent and nothing was charged. Start again with a fresh card read and a new merchant_ref.'
              : `The sealed card data expired before the retry could be sent; the service never received attempt ${state.attempt} (F4 404): nothing was charged. Start again with a fresh card read and a new merchant_ref.`,
          );
        case 'refused':
          return finish('rejected', `Refused by the service, nothing was charged: ${sent.failure.message}`);
        case 'found':
          return fromTransaction(sent.record, true);
        case 'never-received':
          return lastSendRefused
            ? finish('rejected', `Refused by the service, nothing was charged: ${sent.lost}`)
            : notReceived(`F4 404 after ${state.attempt} attempt(s)`);
        case 'unverified':
          return await park(sent.lost);
      }
    } catch (err) {
      if (!isCancellation(err)) throw err;
      // Cancelled while a sale may have moved money: ask F4, record what it says.
      return await CancellationScope.nonCancellable(async () => {
        let found: Presence<PosTransactionRecord> | undefined;
        try {
          found = await requery();
        } catch {
          found = undefined;
        }
        const note = 'cancel requested after F3 may have been sent';
        let out: PosTransactionResult;
        if (found?.found) out = fromTransaction(found.record, true);
        else if (found && Date.now() >= inFlightUntil) out = notReceived(`${note}; F4 404`);
        else
          out = finish(
            'outcome_unknown',
            `${note}: F4 could not tell; the transaction is NOT sent again. Reconcile by merchant_ref ${req.merchant_ref}.`,
          );
        return {
          ...out,
          action: found?.found ? `${out.action} (${note}; confirmed by F4)` : out.action,
          cancelRequested: true,
        };
      });
    }
  }
}

/** Not a failure type of the activities: the workflow's reading of a 91/96 answer, for send-once. */
const PROCESSOR_UNKNOWN = 'ProcessorOutcomeUnknown';

function backoff(base: string | number, attempt: number): number {
  const ms = typeof base === 'number' ? base : durationMs(base);
  return ms * 2 ** (attempt - 1);
}
