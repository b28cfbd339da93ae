// How long the harness waits for one flow of each kind: its lane time (the normal path under chaos)
// plus the flow's own worst case before it reaches a final state once the chaos stops, read from
// the flow's defaults, so a flow that does the right thing slowly is never counted lost or unknown
// because the harness stopped waiting first (docs/chaos.md, "Deadlines").
import { UNKNOWN_OUTCOME_DEFAULTS } from '../src/shared/outcome';
import { SEND_ONCE_DEFAULTS } from '../src/workflows/steps/send-once';
import { POS_TRANSACTION_DEFAULTS } from '../src/workflows/steps/pos-terminal-send';
import { DEFAULTS as VEND_DEFAULTS } from '../src/workflows/vending';
import { DEFAULT_LIFETIME as POS_REMOTE_LIFETIME } from '../src/workflows/pos-remote';
import { durationMs } from '../src/shared/duration';
import { POS_REMOTE_SEARCH_GRACE } from './kinds/pos-remote';
import { RECURRING_CYCLES } from './kinds/recurring';

/**
 * A parked outcome's requery ladder (src/workflows/steps/unknown-outcome.ts): waits doubling from
 * `firstMs`, capped at `maxMs`. Its worst case here is the sum of the waits up to and including the
 * first capped one (10 + 20 + … + 320 + 600 s = 1230 s with the defaults): by then every doubling
 * round has run, and a requery past the chaos (no faults in the tail) answers. A flow still parked
 * after that stays parked for `requeryFor` (24 h) or an operator: that is a real unknown.
 */
export function ladderMs(firstMs: number, maxMs: number): number {
  if (firstMs <= 0 || maxMs < firstMs) throw new Error(`ladder: first ${firstMs} ms, max ${maxMs} ms`);
  let total = 0;
  for (let wait = firstMs; ; wait *= 2) {
    total += Math.min(wait, maxMs);
    if (wait >= maxMs) return total;
  }
}

const LADDER_MS = ladderMs(
  durationMs(UNKNOWN_OUTCOME_DEFAULTS.firstBackoff),
  durationMs(UNKNOWN_OUTCOME_DEFAULTS.maxBackoff),
);

/**
 * Per kind, what a flow can spend beyond its lane time before it is final, from its own defaults:
 * - card, bank: a lost charge's answer waits until the send can no longer be in flight
 *   (send-once's inFlightMs), then the ladder;
 * - recurring: that for each cycle the driver runs (each cycle is its own charge);
 * - mandate: that for the mandate's creation and for its one debit;
 * - pos-terminal: F4 retried for requeryTimeout, then the ladder;
 * - vend: H4 retried for checkTimeout after the purchase's own timeout, then the ladder;
 * - pos-remote: a lost E1 is searched for the request's lifetime + the driver's search grace, then
 *   once more for another lifetime, then the ladder;
 * - va-credit: nothing beyond the lane (no unknown outcome: the hand-over retries, C3 is a read).
 */
export const BEYOND_LANE_MS: Readonly<Record<string, number>> = {
  card: SEND_ONCE_DEFAULTS.inFlightMs + LADDER_MS,
  bank: SEND_ONCE_DEFAULTS.inFlightMs + LADDER_MS,
  recurring: RECURRING_CYCLES * (SEND_ONCE_DEFAULTS.inFlightMs + LADDER_MS),
  mandate: 2 * (SEND_ONCE_DEFAULTS.inFlightMs + LADDER_MS),
  'pos-terminal': durationMs(POS_TRANSACTION_DEFAULTS.requeryTimeout) + LADDER_MS,
  vend: VEND_DEFAULTS.purchaseTimeoutMs + durationMs(VEND_DEFAULTS.checkTimeout) + LADDER_MS,
  'pos-remote': 2 * durationMs(POS_REMOTE_LIFETIME) + durationMs(POS_REMOTE_SEARCH_GRACE) + LADDER_MS,
  'va-credit': 0,
};

/** Epoch ms by which a flow of `kind` started at `startedAt` must be final: lane time + its own worst case. */
export function flowDeadline(kind: string, startedAt: number, laneMs: number): number {
  const beyond = BEYOND_LANE_MS[kind];
  if (beyond === undefined) throw new Error(`no deadline for kind ${kind}`);
  return startedAt + laneMs + beyond;
}
