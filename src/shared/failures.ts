// The words every flow uses for an outcome, in one neutral home: the failure types activities
// raise (ApplicationFailure.type), the one reader of an activity's failure in workflow code
// (failureOf, failureTypeOf, failureMessage) and the one refusal list. Activities map API errors
// to these in src/activities/failures.ts; the one input-issue shape is in ./input-error.ts.
import { ApplicationFailure } from '@temporalio/common';

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

/**
 * An activity's failure reaches workflow code as an ActivityFailure whose cause is the
 * ApplicationFailure the activity threw (with its deliberate `type`); this unwraps it.
 */
export function failureOf(err: unknown): ApplicationFailure | undefined {
  return err instanceof Error && 'cause' in err && err.cause instanceof ApplicationFailure ? err.cause : undefined;
}

/**
 * The deliberate type of an activity's failure (failureOf), also when it reaches the workflow
 * unwrapped: a local activity's ApplicationFailure is not the cause of an ActivityFailure.
 */
export function failureTypeOf(err: unknown): string | undefined {
  return (err instanceof ApplicationFailure ? err : failureOf(err))?.type ?? undefined;
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
  return typeof f?.type === 'string' && REFUSAL_TYPES.includes(f.type);
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
