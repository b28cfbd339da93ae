// The words every flow uses for an outcome, in one neutral home: the failure types activities
// raise (ApplicationFailure.type), how workflow code reads an activity's failure, and the field
// issues an input error names. Activities map API errors to these in src/activities/failures.ts.
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';

/** A rule broken by an input field: the field's name and the rule, never the value. */
export interface FieldIssue {
  path: string;
  message: string;
}

export function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

export function describeIssues(issues: FieldIssue[]): string {
  return issues.map((i) => (i.path ? `${i.path} ${i.message}` : i.message)).join('; ');
}

/** The failure types activities raise (ApplicationFailure.type). */
export const FailureTypes = {
  /** The request broke a field rule; nothing was sent. */
  InvalidRequest: 'InvalidRequest',
  /** 400: the service refused the request; nothing happened. */
  BadRequest: 'BadRequest',
  /** 401/403: the key is wrong; nothing happened. */
  Unauthorized: 'Unauthorized',
  /** 404. */
  NotFound: 'NotFound',
  /** The service may have acted; verify by reference before anything else. */
  OutcomeUnknown: 'OutcomeUnknown',
  /** A transient failure of a read; the activity's retry policy repeats it. */
  Transient: 'Transient',
  /** Any other failure of the service. */
  ServiceError: 'ServiceError',
} as const;
export type FailureType = (typeof FailureTypes)[keyof typeof FailureTypes];

/** The ApplicationFailure type behind an activity failure, if any. */
export function activityFailureType(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** The message of the failure behind an activity failure. */
export function activityFailureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure && err.cause ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * An activity's failure reaches workflow code as an ActivityFailure whose cause is the
 * ApplicationFailure the activity threw (with its deliberate `type`); this unwraps it.
 */
export function failureOf(err: unknown): ApplicationFailure | undefined {
  return err instanceof Error && 'cause' in err && err.cause instanceof ApplicationFailure ? err.cause : undefined;
}

/** Failure types that prove the service refused the request: nothing happened. */
export const REFUSAL_TYPES: readonly string[] = [
  FailureTypes.BadRequest,
  FailureTypes.InvalidRequest,
  FailureTypes.Unauthorized,
  FailureTypes.NotFound,
];

export function isRefusalFailure(err: unknown): boolean {
  const f = failureOf(err);
  return f !== undefined && REFUSAL_TYPES.includes(f.type ?? '');
}

/** A failure's message, for the flow's reason text. */
export function failureMessage(err: unknown): string {
  const f = failureOf(err);
  if (f) return f.message;
  return err instanceof Error
    ? err.cause instanceof Error
      ? `${err.message}: ${err.cause.message}`
      : err.message
    : String(err);
}
