// The one rule for value requests (a charge, a debit, a POS sale, a vend), in one home:
//
//   send it once; send it again only after a requery by its reference proved the first never
//   arrived.
//
// Every money-moving flow sends through `sendOnce`. A flow supplies only what differs: the call
// that sends, the call that requeries, and (afterwards) how a found record maps to its outcome.
//
//   send ──answer────────────────────────────────► answered
//        ──refused (the first send)──────────────► refused        nothing happened
//        ──anything else (timeout, reset, 5xx,
//          lost worker), or a resend refused ────► requery after `settleMs`
//                 found ─────────────────────────► found          never sent again
//                 absent ── read again (`absentReads`, `settleMs` apart: the service may not
//                           show a write at once); and if the lost attempt may still be in
//                           flight (Temporal, not the activity, ended it: a lost or cut-off
//                           worker), wait until `inFlightMs` after the send and read once more
//                           ── still absent → resend (up to `maxSends`) → never-received
//                 the service cannot answer ─────► unverified     never sent again; the flow
//                                                                 parks it as outcome unknown
//
// The send and its settling run in a non-cancellable scope: a workflow cancelled mid-send still
// learns what became of the request, so its cleanup can record the real outcome.
import { ApplicationFailure, CancellationScope, sleep } from '@temporalio/workflow';
import { SERVICE_ACTIVITY_START_TO_CLOSE_MS } from '../../shared/activity-timeouts';
import { failureMessage, failureOf, isRefusalFailure } from '../../shared/failures';
import { durationMs } from '../../shared/duration';
import { countRequery, countResendProvedSafe, countSendOutcome } from './metrics';
import { SETTLE_BEFORE_REQUERY } from './durations';

/** What the service's records say about the request, by its reference. */
export type Presence<R> = { found: true; record: R } | { found: false };

export interface SendOnceSpec<A, R> {
  /** Makes the request once (a one-attempt activity). `sendNumber` is 1 for the first send. */
  send: (sendNumber: number) => Promise<A>;
  /**
   * Asks the service by the request's reference (reads may retry inside). Resolves `found: false`
   * only for the service's documented not-found (src/api/not-found.ts); throws when the service
   * cannot tell.
   */
  requery: () => Promise<Presence<R>>;
  /** A failure of `send` that proves nothing happened. Default: the activity failure types in REFUSAL_TYPES. */
  isRefusal?: (err: unknown) => boolean;
  /** Most sends (default 2). */
  maxSends?: number;
  /** Pause before a requery, so a request still landing is seen (default 3 s). */
  settleMs?: number;
  /** How many consecutive "absent" answers, `settleMs` apart, prove a request never arrived (default 2). */
  absentReads?: number;
  /** Pause before a resend (default 0: the absent reads already waited). */
  resendAfterMs?: number;
  /**
   * How long after a send its HTTP call may still be open (default: the activities'
   * start-to-close, which config keeps above the HTTP timeout). A lost attempt is not resent
   * before this has passed — a worker killed mid-call fails its attempt by heartbeat timeout
   * within seconds, while its request may still land.
   */
  inFlightMs?: number;
}

export type SendOnceResult<A, R> =
  /** The service answered the send. */
  | { outcome: 'answered'; answer: A; sends: number }
  /** The service refused the first send: nothing happened. `failure` is the refusal's type and message. */
  | { outcome: 'refused'; failure: Refusal; sends: number }
  /** An answer was lost (or a resend refused), and the service holds the request: never send it again. */
  | { outcome: 'found'; record: R; lost: string; sends: number }
  /** Sent `maxSends` times; the service holds none of them. */
  | { outcome: 'never-received'; lost: string; sends: number }
  /** An answer was lost and the service could not be asked: the outcome is unknown. */
  | { outcome: 'unverified'; lost: string; sends: number };

export interface Refusal {
  type: string;
  message: string;
}

export const SEND_ONCE_DEFAULTS = {
  maxSends: 2,
  settleMs: durationMs(SETTLE_BEFORE_REQUERY),
  absentReads: 2,
  inFlightMs: SERVICE_ACTIVITY_START_TO_CLOSE_MS,
} as const;

/**
 * True when the attempt's HTTP call surely ended: the activity itself reported the failure (an
 * ApplicationFailure: the call was refused, answered, reset or timed out by the client). When
 * Temporal failed the attempt instead (heartbeat or start-to-close timeout: the worker was lost or
 * cut off), its call may still be open and its request may still land.
 */
function ended(err: unknown): boolean {
  // An ApplicationFailure thrown by the flow's own send wrapper (e.g. an answer it reads as unknown) also ended the call.
  return err instanceof ApplicationFailure || failureOf(err) !== undefined;
}

function refusalOf(err: unknown): Refusal {
  const f = failureOf(err);
  return { type: f?.type ?? 'Refused', message: failureMessage(err) };
}

export function sendOnce<A, R>(spec: SendOnceSpec<A, R>): Promise<SendOnceResult<A, R>> {
  return CancellationScope.nonCancellable(async () => {
    const result = await sendAndSettle(spec);
    countSendOutcome(result.outcome);
    return result;
  });
}

async function sendAndSettle<A, R>(spec: SendOnceSpec<A, R>): Promise<SendOnceResult<A, R>> {
  const maxSends = spec.maxSends ?? SEND_ONCE_DEFAULTS.maxSends;
  const isRefusal = spec.isRefusal ?? isRefusalFailure;
  for (let sends = 1; ; sends++) {
    let lost: string;
    let neverInFlight: boolean;
    const sentAt = Date.now();
    try {
      return { outcome: 'answered', answer: await spec.send(sends), sends };
    } catch (err) {
      // The first send refused: nothing happened. A resend refused ("duplicate reference") may
      // mean the earlier send landed late: the requery decides.
      if (sends === 1 && isRefusal(err)) return { outcome: 'refused', failure: refusalOf(err), sends };
      lost = failureMessage(err);
      neverInFlight = ended(err);
    }
    let presence = await settle(spec);
    const inFlightUntil = sentAt + (spec.inFlightMs ?? SEND_ONCE_DEFAULTS.inFlightMs);
    if (presence && !presence.found && !neverInFlight && Date.now() < inFlightUntil) {
      // The lost attempt may still be open (its worker died mid-call): absent proves nothing yet.
      await sleep(inFlightUntil - Date.now());
      presence = await settle({ ...spec, absentReads: 1 });
    }
    if (presence === undefined) return { outcome: 'unverified', lost, sends };
    if (presence.found) return { outcome: 'found', record: presence.record, lost, sends };
    if (sends >= maxSends) return { outcome: 'never-received', lost, sends };
    if (spec.resendAfterMs) await sleep(spec.resendAfterMs);
    countResendProvedSafe();
  }
}

/**
 * Requeries until the service's answer is settled: found at once, or absent `absentReads` times
 * in a row. undefined when the service could not answer.
 */
export async function settle<R>(
  spec: Pick<SendOnceSpec<unknown, R>, 'requery' | 'settleMs' | 'absentReads'>,
): Promise<Presence<R> | undefined> {
  const settleMs = spec.settleMs ?? SEND_ONCE_DEFAULTS.settleMs;
  const reads = Math.max(1, spec.absentReads ?? SEND_ONCE_DEFAULTS.absentReads);
  for (let read = 1; ; read++) {
    if (settleMs > 0) await sleep(settleMs);
    let presence: Presence<R>;
    try {
      presence = await spec.requery();
    } catch {
      countRequery('lost_answer', 'error');
      return undefined;
    }
    countRequery('lost_answer', presence.found ? 'found' : 'absent');
    if (presence.found || read >= reads) return presence;
  }
}
