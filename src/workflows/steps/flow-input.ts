// What the SMS and vending flows share around their steps: the input check every workflow makes
// first (the zod schema its starter shares; a broken rule fails the workflow at once, naming the
// field and the rule, never the value), and the label a flow's step record gives a failure.
import { ApplicationFailure } from '@temporalio/workflow';
import type { z } from 'zod';
import { failureTypeOf } from '../../shared/failures';
import { describeInputIssues, inputIssuesOf, type InputIssue } from '../../shared/input-error';
import { lostByHeartbeat } from './unknown-outcome';

/** A non-retryable InvalidInput failure: `invalid <what>: <field rule; …>`, the issues in its details. */
export function invalidInput(what: string, issues: InputIssue[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'InvalidInput',
    message: `invalid ${what}: ${describeInputIssues(issues)}`,
    nonRetryable: true,
    details: [issues],
  });
}

/** The workflow's input as `schema` parses it; throws `invalidInput(what, …)` when a rule is broken. */
export function parseFlowInput<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidInput(what, inputIssuesOf(parsed.error));
  return parsed.data;
}

/** A failure's type for the step record: the activity's deliberate type, or how the attempt was lost. */
export function failureLabel(err: unknown): string {
  return failureTypeOf(err) ?? (lostByHeartbeat(err) ? 'HeartbeatTimeout' : 'ActivityFailure');
}
