// After the one send (./send-once.ts): waiting for a final answer, in one home.
//
// A value request whose record the service holds as pending, or whose outcome could not be read
// (send-once's `unverified`), is never concluded from a timer: the flow keeps asking the service
// on a backoff (doubling, capped) and
//   - ends with the real outcome as soon as a requery shows a final record;
//   - ends as "never received" on the service's documented not-found, only when the flow has
//     never seen the record and no earlier send can still be in flight (`absentIsFinal`);
//   - shows `pending` for `pendingForMs`, then parks as `outcome_unknown` (PaymentStatus), still
//     requerying for `requeryForMs`, and then waits for the operator's resolveOutcome Update only
//     (src/shared/outcome.ts): never silently final.
// An operator's resolveOutcome ends the wait at once.
import { ActivityFailure, condition, setHandler, TimeoutFailure } from '@temporalio/workflow';
import {
  UNKNOWN_OUTCOME_DEFAULTS,
  checkResolveOutcome,
  resolveOutcomeUpdate,
  type OutcomeResolution,
} from '../../shared/outcome';
import { durationMs } from '../../shared/duration';
import type { Presence } from './send-once';
import { countRequery } from './metrics';

export type Settled<R> =
  { kind: 'final'; record: R } | { kind: 'absent' } | { kind: 'resolved'; resolution: OutcomeResolution };

export interface AwaitFinalSpec<R> {
  /** Asks the service by reference (throws when it cannot answer). */
  requery: () => Promise<Presence<R>>;
  /** A record that is final (vended/failed, approved/declined); anything else is still pending. */
  isFinal: (record: R) => boolean;
  /** The documented not-found may be read as "never received" now (the flow never saw a record, nothing in flight). */
  absentIsFinal: () => boolean;
  /** Where the wait starts: the service holds a pending record, or the outcome is unknown. */
  startAs: 'pending' | 'outcome_unknown';
  setStatus: (status: 'pending' | 'outcome_unknown') => void;
  /**
   * Runs once the wait parks as outcome_unknown: the flow's `needs_attention` merchant event
   * (docs/events.md). Nothing is added to history when the flow has no event target.
   */
  onParked?: () => Promise<void>;
  /** The operator's resolution, once the Update was accepted. */
  resolution: () => OutcomeResolution | undefined;
  /** Each requery's answer ('error' when the service could not answer), for the flow's step record. */
  onRead?: (read: Presence<R> | 'error') => void;
  /** How long a `pending` start shows pending before it parks (unused when the wait starts parked). */
  pendingForMs?: number;
  requeryForMs: number;
  firstBackoffMs: number;
  maxBackoffMs: number;
}

/** awaitFinal's requery period and backoff: a flow's options, or UNKNOWN_OUTCOME_DEFAULTS (24 h; 10 s doubling to 10 min). */
export function parkedRequery(
  o: Partial<Record<'unknownRequeryFor' | 'requeryBackoff' | 'requeryMaxBackoff', string | number>> = {},
): Pick<AwaitFinalSpec<unknown>, 'requeryForMs' | 'firstBackoffMs' | 'maxBackoffMs'> {
  return {
    requeryForMs: durationMs(o.unknownRequeryFor ?? UNKNOWN_OUTCOME_DEFAULTS.requeryFor),
    firstBackoffMs: durationMs(o.requeryBackoff ?? UNKNOWN_OUTCOME_DEFAULTS.firstBackoff),
    maxBackoffMs: durationMs(o.requeryMaxBackoff ?? UNKNOWN_OUTCOME_DEFAULTS.maxBackoff),
  };
}

export async function awaitFinal<R>(spec: AwaitFinalSpec<R>): Promise<Settled<R>> {
  const start = Date.now();
  let status = spec.startAs;
  spec.setStatus(status);
  if (status === 'outcome_unknown') await spec.onParked?.();
  const pendingUntil = status === 'pending' ? start + (spec.pendingForMs ?? 0) : start;
  const requeryUntil = pendingUntil + spec.requeryForMs;
  let seen = status === 'pending';
  let wait = Math.max(1, spec.firstBackoffMs);
  const resolved = () => spec.resolution() !== undefined;
  for (;;) {
    const now = Date.now();
    if (status === 'pending' && now >= pendingUntil) {
      status = 'outcome_unknown';
      spec.setStatus(status);
      await spec.onParked?.();
    }
    if (now >= requeryUntil) {
      // Requeried long enough: parked until an operator resolves it.
      await condition(resolved);
      return { kind: 'resolved', resolution: spec.resolution()! };
    }
    const nextWake = Math.min(
      wait,
      requeryUntil - now,
      status === 'pending' ? Math.max(1, pendingUntil - now) : Infinity,
    );
    if (await condition(resolved, nextWake)) return { kind: 'resolved', resolution: spec.resolution()! };
    wait = Math.min(wait * 2, spec.maxBackoffMs);
    let read: Presence<R>;
    try {
      read = await spec.requery();
    } catch {
      countRequery('awaiting_final', 'error');
      spec.onRead?.('error');
      continue;
    }
    countRequery('awaiting_final', read.found ? 'found' : 'absent');
    spec.onRead?.(read);
    if (read.found) {
      if (spec.isFinal(read.record)) return { kind: 'final', record: read.record };
      seen = true;
    } else if (!seen && spec.absentIsFinal()) {
      return { kind: 'absent' };
    }
  }
}

/**
 * A send lost by its heartbeat timeout: its worker died or was cut off mid-call, so its HTTP call
 * may still be running (until the client's timeout). Any other failure of a money-moving
 * activity ends with the call (the client's timeout is shorter than start-to-close).
 */
export function lostByHeartbeat(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'HEARTBEAT';
}

/**
 * The resolveOutcome Update of a parked flow (`cli ops resolve`): the validator takes one of
 * `outcomes`, only while `accepting()` holds and nothing was resolved yet; the first resolution is
 * kept. Answers a reader of that resolution (undefined until an operator gave one).
 */
export function listenForResolution(
  outcomes: readonly string[],
  accepting: () => boolean = () => true,
): () => OutcomeResolution | undefined {
  let resolution: OutcomeResolution | undefined;
  setHandler(
    resolveOutcomeUpdate,
    (input) => {
      resolution ??= { ...input, resolvedAt: new Date().toISOString() };
      return resolution;
    },
    { validator: (input) => checkResolveOutcome(input, outcomes, accepting() && resolution === undefined) },
  );
  return () => resolution;
}

/** Where a flow keeps the operator's resolveOutcome (one per parked outcome). */
export interface ResolutionSlot<O extends string = string> {
  value?: OutcomeResolution<O>;
}

/**
 * The resolveOutcome Update kept in a flow's slot, its reason and operator trimmed: accepted once per slot, only while
 * the flow's state is parked (outcome_unknown).
 */
export function listenForResolutionIn<O extends string>(
  outcomes: readonly O[],
  slot: () => ResolutionSlot<O>,
  state: { readonly status: string },
): void {
  setHandler(
    resolveOutcomeUpdate,
    (r) => {
      const s = slot();
      s.value ??= {
        outcome: r.outcome as O,
        reason: r.reason.trim(),
        operator: r.operator.trim(),
        resolvedAt: new Date(Date.now()).toISOString(),
      };
      return s.value;
    },
    {
      validator: (r) =>
        checkResolveOutcome(r, outcomes, state.status === 'outcome_unknown' && slot().value === undefined),
    },
  );
}
