// One F3 (Refund, Pre-Authorization or Completion) sent once, for the terminal flows beyond the
// sale: the same decisions as the sale (./pos-terminal.ts), in one place for the new flows.
// The sale keeps its own copy so its running histories replay unchanged.
//
//   F3 answered 00 / 51 / 55 / another code → approved / declined (with the action to show)
//   F3 answered 91 or 96                   → requery (F4) at once, like a lost answer
//   F3 lost (timeout, reset, 5xx, worker)  → settle delay, F4 by merchant_ref (send-once)
//   F3 refused (400, 401/403, 404)         → rejected: nothing happened
//   F4 found it                            → that record is the outcome; never sent again
//   F4 404                                 → resend, same merchant_ref and request, bounded (maxAttempts)
//   F4 cannot answer                       → outcome_unknown, parked: F4 on a backoff, resolveOutcome
//   sealed card read gone before a send    → card_data_unavailable (nothing sent by that attempt)
//   cancelled after F3 may have been sent  → a non-cancellable F4 records the real outcome
//
// The caller owns the state object (attempt, steps) and the status names; this module moves them.
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
import type { RetryPolicy } from '@temporalio/common';
import type { PosActivities } from '../activities/pos';
import {
  classifyPosCode,
  type PosF3Options,
  type PosLinkedInitiateRequest,
  type PosRequeryOutcome,
  type PosResolveOutcome,
  type PosStep,
  type PosTransactionRecord,
} from '../shared/pos';
import { SECRET_UNAVAILABLE } from '../shared/claim-check';
import { UNKNOWN_OUTCOME_DEFAULTS, type OutcomeResolution } from '../shared/outcome';
import { sendOnce, type Presence } from './send-once';
import { awaitFinal, lostByHeartbeat, type Settled } from './unknown-outcome';
import { FailureTypes, activityFailureMessage, activityFailureType } from '../shared/failures';
import { durationMs } from '../shared/duration';

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
const REFUSED: readonly string[] = [
  FailureTypes.BadRequest,
  FailureTypes.Unauthorized,
  FailureTypes.InvalidRequest,
  FailureTypes.NotFound,
];
/** The workflow's reading of a 91/96 answer, for send-once (not an activity failure type). */
const PROCESSOR_UNKNOWN = 'ProcessorOutcomeUnknown';

export type PosF3Status =
  'approved' | 'declined' | 'rejected' | 'not_received' | 'outcome_unknown' | 'card_data_unavailable';

export interface PosF3Outcome {
  status: PosF3Status;
  action: string;
  transaction?: PosTransactionRecord;
  /** The operator's resolveOutcome, when that ended it. */
  resolution?: OutcomeResolution<PosResolveOutcome>;
  /** The service refused the request (rejected): its message. */
  refusal?: string;
  cancelRequested?: boolean;
}

export interface PosF3Spec {
  /** For messages: "refund", "pre-authorisation", "completion". */
  what: string;
  /** The F3 request: transaction_type, merchant_ref, original_merchant_ref, the sealed card. */
  req: PosLinkedInitiateRequest;
  options: PosF3Options;
  /** Mutated: attempt (F3 requests sent) and steps (every initiate and requery, in order). */
  track: { attempt: number; steps: PosStep[] };
  setStatus: (status: 'initiating' | 'requerying' | 'retry_wait' | 'outcome_unknown') => void;
  /** The operator's resolution while parked (the caller's resolveOutcome handler sets it). */
  resolution: () => OutcomeResolution<PosResolveOutcome> | undefined;
}

type Sent = { kind: 'answer'; transaction: PosTransactionRecord } | { kind: 'not_sent'; detail: string };

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
    retry: requeryRetry,
  });
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

export async function sendPosF3(spec: PosF3Spec): Promise<PosF3Outcome> {
  const { req, options, track } = spec;
  const maxAttempts = options.maxAttempts ?? POS_F3_DEFAULTS.maxAttempts;
  const initiateTimeoutMs = options.initiateTimeoutMs ?? POS_F3_DEFAULTS.initiateTimeoutMs;
  const { posTerminalInitiateTransaction } = proxyActivities<PosActivities>({
    // Longer than the client's own deadline plus a margin: never ends while its HTTP call is open.
    startToCloseTimeout: initiateTimeoutMs + IN_FLIGHT_MARGIN_MS,
    heartbeatTimeout: '10s',
    retry: { maximumAttempts: 1 }, // never retried by Temporal: send-once requeries first
  });
  const { posDiscardSealedCard } = proxyActivities<PosActivities>({
    startToCloseTimeout: '10s',
    retry: { maximumAttempts: 3 },
  });
  const f4 = posF4(options);
  const record = (step: PosStep) => track.steps.push(step);

  let inFlightUntil = 0;
  let lastSendRefused = false;
  let cardKept = false;
  const send = async (sendNumber: number): Promise<Sent> => {
    if (sendNumber > 1) {
      spec.setStatus('retry_wait');
      const base = durationMs(options.retryBackoff ?? POS_F3_DEFAULTS.retryBackoff);
      await sleep(Math.max(base * 2 ** (track.attempt - 1), inFlightUntil - Date.now()));
    }
    track.attempt += 1;
    spec.setStatus('initiating');
    let transaction: PosTransactionRecord;
    try {
      transaction = (
        await posTerminalInitiateTransaction(req, { attempt: track.attempt, timeoutMs: initiateTimeoutMs })
      ).transaction;
    } catch (err) {
      const type = activityFailureType(err);
      if (type === SECRET_UNAVAILABLE) {
        track.attempt -= 1; // nothing was sent
        return { kind: 'not_sent', detail: activityFailureMessage(err) };
      }
      lastSendRefused = type !== undefined && REFUSED.includes(type);
      cardKept = !lastSendRefused;
      if (lastSendRefused) {
        record({ op: 'initiate', attempt: track.attempt, outcome: 'rejected', detail: type });
        throw err;
      }
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
      await sleep(durationMs(options.requerySettleDelay ?? POS_F3_DEFAULTS.requerySettleDelay));
      throw err;
    }
    lastSendRefused = false;
    record({ op: 'initiate', attempt: track.attempt, outcome: 'response', response_code: transaction.response_code });
    const c = classifyPosCode(transaction.response_code, transaction.response_message);
    cardKept = c.outcome === 'unknown';
    if (c.outcome === 'unknown') {
      throw ApplicationFailure.create({
        type: PROCESSOR_UNKNOWN,
        message: `F3 answered ${transaction.response_code || 'without a code'}: ${c.action}`,
        nonRetryable: true,
      });
    }
    return { kind: 'answer', transaction };
  };
  const requery = async (): Promise<Presence<PosTransactionRecord>> => {
    spec.setStatus('requerying');
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

  const fromTransaction = (t: PosTransactionRecord, confirmedByRequery: boolean): PosF3Outcome => {
    const c = classifyPosCode(t.response_code, t.response_message);
    if (c.outcome === 'approved')
      return { status: 'approved', action: `Approved: the ${spec.what} went through`, transaction: t };
    if (c.outcome === 'declined') return { status: 'declined', action: c.action, transaction: t };
    return {
      status: 'declined',
      action: confirmedByRequery
        ? `${c.action}: the service received the ${spec.what} (confirmed by requery) and it did not go through`
        : c.action,
      transaction: t,
    };
  };
  const notReceived = (how: string): PosF3Outcome => ({
    status: 'not_received',
    action: `The service never received the ${spec.what} (${how}); nothing moved.`,
  });

  const park = async (why: string): Promise<PosF3Outcome> => {
    const settled: Settled<PosTransactionRecord> = await awaitFinal<PosTransactionRecord>({
      startAs: 'outcome_unknown',
      requery: async () => {
        const out = await f4.watch(req.merchant_ref);
        return out.found ? { found: true, record: out.transaction } : { found: false };
      },
      isFinal: () => true,
      absentIsFinal: () => Date.now() >= inFlightUntil,
      setStatus: () => spec.setStatus('outcome_unknown'),
      resolution: () => spec.resolution(),
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
    });
    if (settled.kind === 'final') return fromTransaction(settled.record, true);
    if (settled.kind === 'absent') return notReceived(`F4 404 while the outcome was unknown: ${why}`);
    const r = settled.resolution as OutcomeResolution<PosResolveOutcome>;
    record({ op: 'resolve', attempt: track.attempt, outcome: r.outcome, detail: `by ${r.operator}: ${r.reason}` });
    return {
      status: r.outcome,
      resolution: r,
      action: `Resolved by ${r.operator}: ${r.reason} (F4 could not tell the outcome of merchant_ref ${req.merchant_ref})`,
    };
  };

  const decide = async (): Promise<PosF3Outcome> => {
    try {
      const sent = await sendOnce<Sent, PosTransactionRecord>({
        what: `POS ${spec.what} (F3)`,
        send,
        requery,
        settleMs: 0, // the send's own settle wait (after a lost answer; none after a 91/96 answer)
        absentReads: 1, // F4 404 is documented as "never received, a retry is safe"
        maxSends: maxAttempts,
        isRefusal: (err) => {
          const type = activityFailureType(err);
          return type !== undefined && REFUSED.includes(type);
        },
      });
      switch (sent.outcome) {
        case 'answered':
          if (sent.answer.kind === 'answer') return fromTransaction(sent.answer.transaction, false);
          return {
            status: 'card_data_unavailable',
            action:
              track.attempt === 0
                ? `The sealed card data expired before the ${spec.what} was sent: nothing was sent. Start again with a fresh card read.`
                : `The sealed card data expired before the retry could be sent; the service never received attempt ${track.attempt} (F4 404): nothing moved. Start again with a fresh card read.`,
          };
        case 'refused':
          return {
            status: 'rejected',
            refusal: sent.failure.message,
            action: `Refused by the service, nothing moved: ${sent.failure.message}`,
          };
        case 'found':
          return fromTransaction(sent.record, true);
        case 'never-received':
          return lastSendRefused
            ? { status: 'rejected', refusal: sent.lost, action: `Refused by the service, nothing moved: ${sent.lost}` }
            : notReceived(`F4 404 after ${track.attempt} attempt(s)`);
        case 'unverified':
          return await park(sent.lost);
      }
    } catch (err) {
      if (!isCancellation(err)) throw err;
      // Cancelled while the F3 may have moved money: ask F4, record what it says.
      return await CancellationScope.nonCancellable(async () => {
        let found: Presence<PosTransactionRecord> | undefined;
        try {
          found = await requery();
        } catch {
          found = undefined;
        }
        const note = `cancel requested after the ${spec.what} may have been sent`;
        let out: PosF3Outcome;
        if (found?.found) out = fromTransaction(found.record, true);
        else if (found && Date.now() >= inFlightUntil) out = notReceived(`${note}; F4 404`);
        else
          out = {
            status: 'outcome_unknown',
            action: `${note}: F4 could not tell; it is NOT sent again. Reconcile by merchant_ref ${req.merchant_ref}.`,
          };
        return {
          ...out,
          action: found?.found ? `${out.action} (${note}; confirmed by F4)` : out.action,
          cancelRequested: true,
        };
      });
    }
  };

  const outcome = await decide();
  if (cardKept) {
    const handle = req.card.handle;
    await CancellationScope.nonCancellable(async () => {
      try {
        await posDiscardSealedCard(handle);
      } catch (err) {
        log.warn('sealed card read not discarded; its TTL ends it', { error: activityFailureMessage(err) });
      }
    });
  }
  return outcome;
}
