// What the SMS and vending flows share around their steps: the input check every workflow makes
// first (the zod schema its starter shares; a broken rule fails the workflow at once, naming the
// field and the rule, never the value), and the label a flow's step record gives a failure.
import { ApplicationFailure } from '@temporalio/workflow';
import type { z } from 'zod';
import { describeIssues, failureOf, issuesOf, type FieldIssue } from '../../shared/failures';
import { lostByHeartbeat } from './unknown-outcome';

/** A non-retryable InvalidInput failure: `invalid <what>: <field rule; …>`, the issues in its details. */
export function invalidInput(what: string, issues: FieldIssue[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'InvalidInput',
    message: `invalid ${what}: ${describeIssues(issues)}`,
    nonRetryable: true,
    details: [issues],
  });
}

/** The workflow's input as `schema` parses it; throws `invalidInput(what, …)` when a rule is broken. */
export function parseFlowInput<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidInput(what, issuesOf(parsed.error));
  return parsed.data;
}

/**
 * The deliberate type of an activity's failure (failureOf), also when it reaches the workflow
 * unwrapped: a local activity's ApplicationFailure is not the cause of an ActivityFailure.
 */
export function failureType(err: unknown): string | undefined {
  return (err instanceof ApplicationFailure ? err : failureOf(err))?.type ?? undefined;
}

/** A failure's type for the step record: the activity's deliberate type, or how the attempt was lost. */
export function failureLabel(err: unknown): string {
  return failureType(err) ?? (lostByHeartbeat(err) ? 'HeartbeatTimeout' : 'ActivityFailure');
}
