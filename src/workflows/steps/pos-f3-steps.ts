// The steps of one F3 through the one send-once rule (./send-once.ts), shared by every terminal
// flow: the sale (./pos-terminal.ts) and the F3s beyond it (./pos-f3.ts: refund,
// pre-authorisation, completion). What they share is the glue, not the outcome: each flow turns
// the result into its own statuses and messages.
//
//   send      F3 once per attempt (never retried by Temporal, heartbeating); a resend waits a
//             doubling backoff and, after a lost heartbeat, until the last call can no longer be
//             in flight. A refusal (400, 401/403, 404) is a refusal; a 91/96 answer is a lost
//             answer (send-once requeries); anything else waits the settle delay first.
//             A sealed card read gone before the send: nothing sent, the attempt does not count.
//   requery   F4 by merchant_ref (retried until it answers or `requeryTimeout` ends).
//   park      outcome_unknown: F4 on a backoff until it tells, or the operator's resolveOutcome.
//   discard   the sealed card read the F3 activity kept for a resend, once the flow has decided.
//
// Each step is the same function the flows had inline (the same awaits, the same commands in the
// same order), so running flows replay unchanged: callers `await` these functions' promises
// directly, with no extra async layer between.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  log,
  proxyActivities,
  sleep,
} from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';
import type { PosActivities } from '../../activities/pos';
import {
  classifyPosCode,
  type PosF3Options,
  type PosInitiateRequest,
  type PosLinkedInitiateRequest,
  type PosRequeryOutcome,
  type PosResolveOutcome,
  type PosSealedInitiateRequest,
  type PosStep,
  type PosTransactionRecord,
} from '../../shared/pos';
import { SECRET_UNAVAILABLE } from '../../shared/claim-check';
import { UNKNOWN_OUTCOME_DEFAULTS, type OutcomeResolution } from '../../shared/outcome';
import { sendOnce, type Presence, type SendOnceResult } from './send-once';
import { awaitFinal, lostByHeartbeat, type Settled } from './unknown-outcome';
import { FailureTypes, activityFailureMessage, activityFailureType } from '../../shared/failures';
import { durationMs } from '../../shared/duration';

export const POS_F3_DEFAULTS = {
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
/** Not a failure type of the activities: the workflow's reading of a 91/96 answer, for send-once. */
const PROCESSOR_UNKNOWN = 'ProcessorOutcomeUnknown';

/** What one F3 send gave the flow: the service's final answer, or nothing sent (sealed card gone). */
export type PosF3Sent = { kind: 'answer'; transaction: PosTransactionRecord } | { kind: 'not_sent'; detail: string };

/** F4 by merchant_ref, read-only, retried until it answers or `requeryTimeout` ends. */
export function posF4(options: Pick<PosF3Options, 'requeryTimeout'>) {
  const requeryRetry: RetryPolicy = {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    nonRetryableErrorTypes: [FailureTypes.Unauthorized, FailureTypes.InvalidRequest, FailureTypes.BadRequest],
  };
  const { posTerminalRequeryTransaction } = proxyActivities<PosActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: durationMs(options.requeryTimeout ?? POS_F3_DEFAULTS.requeryTimeout),
    // F4 is read-only: retried until it answers (found or 404) or the requery timeout ends.
    retry: requeryRetry,
  });
  // While parked: one bounded read per round; the rounds carry the backoff.
  const { posTerminalRequeryTransaction: watch } = proxyActivities<PosActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: '2 minutes',
    retry: { ...requeryRetry, maximumAttempts: 3 },
  });
  return {
    requery: (merchantRef: string): Promise<PosRequeryOutcome> =>
      posTerminalRequeryTransaction({ merchant_ref: merchantRef }),
    watch: (merchantRef: string) => watch({ merchant_ref: merchantRef }),
  };
}

export interface PosF3StepsContext {
  /** The F3 request: the sale's (sealed, or in clear for a flow from before the claim check) or a linked one. */
  req: PosSealedInitiateRequest | PosLinkedInitiateRequest | PosInitiateRequest;
  options: PosF3Options;
  /** Mutated: attempt (F3 requests sent) and steps (every initiate and requery, in order). */
  track: { attempt: number; steps: PosStep[] };
  setStatus: (status: 'initiating' | 'requerying' | 'retry_wait' | 'outcome_unknown') => void;
  /** The operator's resolution while parked (the caller's resolveOutcome handler sets it). */
  resolution: () => OutcomeResolution<PosResolveOutcome> | undefined;
}

export function posF3Steps(ctx: PosF3StepsContext) {
  const { req, options, track } = ctx;
  const maxAttempts = options.maxAttempts ?? POS_F3_DEFAULTS.maxAttempts;
  const initiateTimeoutMs = options.initiateTimeoutMs ?? POS_F3_DEFAULTS.initiateTimeoutMs;
  const { posTerminalInitiateTransaction } = proxyActivities<PosActivities>({
    // Longer than the client's own deadline (initiateTimeoutMs) plus a margin: the activity never
    // times out while its HTTP call is open; the heartbeat timeout notices a lost worker.
    startToCloseTimeout: initiateTimeoutMs + IN_FLIGHT_MARGIN_MS,
    heartbeatTimeout: INITIATE_HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 1 }, // never retried by Temporal: send-once requeries first
  });
  const { posDiscardSealedCard } = proxyActivities<PosActivities>({
    startToCloseTimeout: '10s',
    retry: { maximumAttempts: 3 },
  });
  const f4 = posF4(options);
  const record = (step: PosStep) => track.steps.push(step);

  /** No F3 attempt may still be in flight after this (workflow time). */
  let inFlightUntil = 0;
  let lastSendRefused = false;
  /** The F3 activity kept the sealed card read for a resend (lost answer, 91/96): discarded when the flow ends. */
  let cardKept = false;

  const send = async (sendNumber: number): Promise<PosF3Sent> => {
    if (sendNumber > 1) {
      // send-once sends again only after F4 answered 404 for the attempt just made.
      ctx.setStatus('retry_wait');
      const base = durationMs(options.retryBackoff ?? POS_F3_DEFAULTS.retryBackoff);
      await sleep(Math.max(base * 2 ** (track.attempt - 1), inFlightUntil - Date.now()));
    }
    track.attempt += 1;
    ctx.setStatus('initiating');
    let transaction: PosTransactionRecord;
    try {
      transaction = (
        await posTerminalInitiateTransaction(req, { attempt: track.attempt, timeoutMs: initiateTimeoutMs })
      ).transaction;
    } catch (err) {
      const type = activityFailureType(err);
      if (type === SECRET_UNAVAILABLE) {
        // Nothing was sent: this attempt does not count, and there is nothing to requery.
        track.attempt -= 1;
        return { kind: 'not_sent', detail: activityFailureMessage(err) };
      }
      lastSendRefused = type !== undefined && REFUSED.includes(type);
      cardKept = !lastSendRefused;
      if (lastSendRefused) {
        record({ op: 'initiate', attempt: track.attempt, outcome: 'rejected', detail: type });
        throw err;
      }
      // OutcomeUnknown (timeout, lost connection, 5xx, unreadable answer), an activity or
      // heartbeat timeout, a lost worker, anything else: it may have reached the service.
      const lostHeartbeat = lostByHeartbeat(err);
      if (lostHeartbeat) inFlightUntil = Date.now() + initiateTimeoutMs + IN_FLIGHT_MARGIN_MS;
      record({
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
      // Let an in-flight request land before asking for it (91/96 below need no wait: the service answered).
      await sleep(durationMs(options.requerySettleDelay ?? POS_F3_DEFAULTS.requerySettleDelay));
      throw err;
    }
    lastSendRefused = false;
    record({ op: 'initiate', attempt: track.attempt, outcome: 'response', response_code: transaction.response_code });
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

  /** F4 by merchant_ref, recorded as a step; throws when F4 could not answer. */
  const requery = async (): Promise<Presence<PosTransactionRecord>> => {
    ctx.setStatus('requerying');
    let out: PosRequeryOutcome;
    try {
      out = await f4.requery(req.merchant_ref);
    } catch (err) {
      record({
        op: 'requery',
        attempt: track.attempt,
        outcome: 'error',
        detail: activityFailureType(err) ?? 'Unknown',
      });
      throw err;
    }
    if (out.found) {
      record({ op: 'requery', attempt: track.attempt, outcome: 'found', response_code: out.transaction.response_code });
      return { found: true, record: out.transaction };
    }
    record({ op: 'requery', attempt: track.attempt, outcome: 'not_found' });
    return { found: false };
  };

  return {
    /** F3 through send-once, F4 its requery. `what` names it in send-once's messages. */
    send: (what: string): Promise<SendOnceResult<PosF3Sent, PosTransactionRecord>> =>
      sendOnce<PosF3Sent, PosTransactionRecord>({
        what,
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
      }),

    requery,

    /** Parked as outcome_unknown: F4 on a backoff until it tells (or proves absence), or the operator resolves it. */
    park: (): Promise<Settled<PosTransactionRecord>> =>
      awaitFinal<PosTransactionRecord>({
        startAs: 'outcome_unknown',
        requery: async () => {
          const out = await f4.watch(req.merchant_ref);
          return out.found ? { found: true, record: out.transaction } : { found: false };
        },
        isFinal: () => true,
        absentIsFinal: () => Date.now() >= inFlightUntil,
        setStatus: () => ctx.setStatus('outcome_unknown'),
        resolution: () => ctx.resolution(),
        onRead: (read) =>
          record(
            read === 'error'
              ? { op: 'requery', attempt: track.attempt, outcome: 'error', detail: 'Unavailable' }
              : read.found
                ? { op: 'requery', attempt: track.attempt, outcome: 'found', response_code: read.record.response_code }
                : { op: 'requery', attempt: track.attempt, outcome: 'not_found' },
          ),
        pendingForMs: 0,
        requeryForMs: durationMs(options.unknownRequeryFor ?? POS_F3_DEFAULTS.unknownRequeryFor),
        firstBackoffMs: durationMs(options.requeryBackoff ?? POS_F3_DEFAULTS.requeryBackoff),
        maxBackoffMs: durationMs(options.requeryMaxBackoff ?? POS_F3_DEFAULTS.requeryMaxBackoff),
      }),

    /** No attempt can still be in flight: an F4 404 now proves the service never received it. */
    inFlightOver: (): boolean => Date.now() >= inFlightUntil,
    /** The last F3 was refused (a resend refused as a duplicate is decided by F4). */
    lastSendRefused: (): boolean => lastSendRefused,
    /** The F3 activity kept the sealed card read (a resend was possible): discard it once decided. */
    cardKept: (): boolean => cardKept,

    /** Best effort, not cancellable: the record's TTL ends it anyway. */
    discardCard: (handle: string): Promise<void> =>
      CancellationScope.nonCancellable(async () => {
        try {
          await posDiscardSealedCard(handle);
        } catch (err) {
          log.warn('sealed card read not discarded; its TTL ends it', { error: activityFailureMessage(err) });
        }
      }),
  };
}
