// The one mapping from the API client's errors to Temporal activity failures, used by every
// activity: a refusal (the request broke a rule, or the service said no) proves nothing
// happened; for a money-moving call anything else is an unknown outcome the workflow settles by
// requerying, never by Temporal repeating the call.
import { ApplicationFailure } from '@temporalio/activity';
import {
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  PaymentsApiError,
  PermissionDeniedError,
  RequestValidationError,
} from '../api';
import { FailureTypes, type FailureType } from '../shared/failures';

/** A refusal's type: the request broke a rule, or the service said no (a retry gets the same answer); undefined otherwise. */
export function refusalType(err: unknown): FailureType | undefined {
  if (err instanceof BadRequestError) return FailureTypes.BadRequest;
  if (err instanceof AuthenticationError || err instanceof PermissionDeniedError) return FailureTypes.Unauthorized;
  if (err instanceof NotFoundError) return FailureTypes.NotFound;
  return undefined;
}

/**
 * Turns a client error into an ApplicationFailure with a deliberate type and retryability.
 * For a money-moving call every failure is non-retryable (the workflow requeries first), and
 * anything that may have reached the service is 'OutcomeUnknown'.
 */
export function toActivityFailure(err: unknown, opts: { moneyMoving: boolean; what: string }): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof RequestValidationError) {
    return ApplicationFailure.create({
      type: FailureTypes.InvalidRequest,
      message: `${opts.what}: ${err.message}`,
      nonRetryable: true,
      details: [err.issues],
    });
  }
  if (err instanceof PaymentsApiError) {
    const base = {
      message: `${opts.what}: ${err.message}`,
      details: [{ status: err.status, operation: err.operation, requestId: err.requestId }],
    };
    const refused = refusalType(err);
    if (refused) return ApplicationFailure.create({ ...base, type: refused, nonRetryable: true });
    if (opts.moneyMoving) {
      // Never repeated by Temporal: the workflow requeries by reference first.
      return ApplicationFailure.create({
        ...base,
        type: err.outcomeUnknown || err.requestSent ? FailureTypes.OutcomeUnknown : FailureTypes.Transient,
        nonRetryable: true,
      });
    }
    if (err.retrySafe) return ApplicationFailure.create({ ...base, type: FailureTypes.Transient, nonRetryable: false });
    return ApplicationFailure.create({ ...base, type: FailureTypes.ServiceError, nonRetryable: true });
  }
  // Not from the client (a bug, an abort): for a money-moving call we cannot know whether it left.
  const message = `${opts.what}: ${err instanceof Error ? err.message : String(err)}`;
  return opts.moneyMoving
    ? ApplicationFailure.create({ type: FailureTypes.OutcomeUnknown, message, nonRetryable: true })
    : ApplicationFailure.create({ type: FailureTypes.Transient, message, nonRetryable: false });
}
