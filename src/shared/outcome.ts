// Resolving an unknown outcome by hand, defined once for every money-moving flow.
//
// A flow whose value request may have moved money but whose service cannot say so (the requery
// could not answer) parks as `outcome_unknown` (PaymentStatus = outcome_unknown): it keeps
// requerying on a backoff for a configured period, and accepts this Update from an operator
// who has reconciled the reference elsewhere. The Update records who resolved it and why, and
// ends the flow with that outcome. Each flow names the outcomes it accepts (e.g. vending:
// vended | failed | not_vended; POS terminal: approved | declined | not_received) and refuses
// the Update (validator) while it is not parked.
import { defineUpdate } from '@temporalio/workflow';

export interface ResolveOutcomeInput<O extends string = string> {
  /** The outcome the operator established, one of the flow's own final outcomes. */
  outcome: O;
  /** Why: where the outcome was established (e.g. "settlement report 2024-05-01, line 12"). */
  reason: string;
  /** Who resolved it (operator id or e-mail). */
  operator: string;
}

/** What the flow records and returns once resolved by hand. */
export interface OutcomeResolution<O extends string = string> extends ResolveOutcomeInput<O> {
  /** Workflow time (ISO) at which the Update was accepted. */
  resolvedAt: string;
}

/** The operator Update; returns the recorded resolution. */
export const resolveOutcomeUpdate = defineUpdate<OutcomeResolution, [ResolveOutcomeInput]>('resolveOutcome');

/**
 * The validator every flow uses: refuses (with a message naming the rule) an Update that is
 * malformed, names an outcome the flow does not have, or arrives while the flow is not parked.
 */
export function checkResolveOutcome(
  input: unknown,
  allowed: readonly string[],
  parked: boolean,
): asserts input is ResolveOutcomeInput {
  if (!parked) throw new Error('resolveOutcome is accepted only while the flow is parked as outcome_unknown');
  const i = (input ?? {}) as Partial<Record<keyof ResolveOutcomeInput, unknown>>;
  if (typeof i.outcome !== 'string' || !allowed.includes(i.outcome))
    throw new Error(`outcome must be one of ${allowed.join(', ')}`);
  if (typeof i.reason !== 'string' || i.reason.trim() === '') throw new Error('reason is required');
  if (typeof i.operator !== 'string' || i.operator.trim() === '') throw new Error('operator is required');
}

/** Unknown-outcome parking defaults: requery for 24 h, backoff doubling from 10 s, capped at 10 min. */
export const UNKNOWN_OUTCOME_DEFAULTS = { requeryFor: '24h', firstBackoff: '10s', maxBackoff: '10 minutes' } as const;
