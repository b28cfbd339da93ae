// The failure reading, both ends: an activity turns the client's error into an ApplicationFailure
// (src/activities/failures.ts) and workflow code reads it back (src/shared/failures.ts). What
// matters for money: only a proven refusal reads as "nothing happened"; anything that may have
// reached the service reads as an unknown outcome, and a money-moving call is never retried by
// Temporal. Real SDK failure classes, wrapped the way the worker delivers them to workflow code.
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import {
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  PaymentsApiError,
  PermissionDeniedError,
  RequestValidationError,
  ServerError,
  TimeoutError,
} from '../../src/api';
import { toActivityFailure } from '../../src/activities/failures';
import {
  failureMessage,
  failureOf,
  failureTypeOf,
  FailureTypes,
  isRefusalFailure,
  REFUSAL_TYPES,
} from '../../src/shared/failures';

const flags = { retrySafe: false, outcomeUnknown: false, requestSent: true };
const money = { moneyMoving: true, what: 'charge card' };
const read = { moneyMoving: false, what: 'verify' };

/** As the worker hands an activity's failure to workflow code: an ActivityFailure caused by it. */
function asDelivered(failure: ApplicationFailure): ActivityFailure {
  return new ActivityFailure(
    'Activity task failed',
    'chargeCard',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    undefined,
    failure,
  );
}

describe('an activity failure, as raised', () => {
  it.each([
    [
      '400',
      new BadRequestError({ message: 'amount: too small', operation: 'charge', status: 400, ...flags }),
      FailureTypes.BadRequest,
    ],
    [
      '401',
      new AuthenticationError({ message: 'no key', operation: 'charge', status: 401, ...flags }),
      FailureTypes.Unauthorized,
    ],
    [
      '403',
      new PermissionDeniedError({ message: 'forbidden', operation: 'charge', status: 403, ...flags }),
      FailureTypes.Unauthorized,
    ],
    [
      '404',
      new NotFoundError({ message: 'unknown ref', operation: 'charge', status: 404, ...flags }),
      FailureTypes.NotFound,
    ],
  ])('a %s refusal is a non-retryable refusal, whatever the call', (_, err, type) => {
    for (const opts of [money, read]) {
      const f = toActivityFailure(err, opts);
      expect(f.type).toBe(type);
      expect(f.nonRetryable).toBe(true);
      expect(f.message).toBe(`${opts.what}: ${err.message}`);
      expect(f.details).toEqual([{ status: err.status, operation: 'charge', requestId: undefined }]);
      expect(isRefusalFailure(asDelivered(f))).toBe(true);
    }
  });

  it('a request that broke a field rule never left: InvalidRequest with the issues, a refusal', () => {
    const err = new RequestValidationError('charge', [{ path: 'amount', message: 'must be an integer' }]);
    const f = toActivityFailure(err, money);
    expect(f.type).toBe(FailureTypes.InvalidRequest);
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toBe(`charge card: ${err.message}`);
    expect(f.details).toEqual([[{ path: 'amount', message: 'must be an integer' }]]);
    expect(isRefusalFailure(asDelivered(f))).toBe(true);
  });

  it('a money-moving call that may have arrived is an unknown outcome, never repeated by Temporal', () => {
    const sent = new ServerError({ message: 'bad gateway', operation: 'charge', status: 502, ...flags });
    const unknown = new TimeoutError({
      message: 'headers timeout',
      operation: 'charge',
      retrySafe: false,
      outcomeUnknown: true,
      requestSent: false,
    });
    for (const err of [sent, unknown]) {
      const f = toActivityFailure(err, money);
      expect(f.type).toBe(FailureTypes.OutcomeUnknown);
      expect(f.nonRetryable).toBe(true);
      expect(isRefusalFailure(asDelivered(f))).toBe(false);
    }
  });

  it('a money-moving call that never left is transient, and still not repeated by Temporal', () => {
    const err = new TimeoutError({
      message: 'connect timeout',
      operation: 'charge',
      retrySafe: true,
      outcomeUnknown: false,
      requestSent: false,
    });
    const f = toActivityFailure(err, money);
    expect(f.type).toBe(FailureTypes.Transient);
    expect(f.nonRetryable).toBe(true);
  });

  it('a read: retried when safe, otherwise a service error', () => {
    const safe = new ServerError({
      message: 'unavailable',
      operation: 'verify',
      status: 503,
      ...flags,
      retrySafe: true,
    });
    const unsafe = new PaymentsApiError({ message: 'odd', operation: 'verify', status: 418, ...flags });
    expect(toActivityFailure(safe, read)).toMatchObject({ type: FailureTypes.Transient, nonRetryable: false });
    expect(toActivityFailure(unsafe, read)).toMatchObject({ type: FailureTypes.ServiceError, nonRetryable: true });
  });

  it('an error not from the client: unknown for a money-moving call, transient for a read', () => {
    expect(toActivityFailure(new Error('socket hang up'), money)).toMatchObject({
      type: FailureTypes.OutcomeUnknown,
      nonRetryable: true,
      message: 'charge card: socket hang up',
    });
    expect(toActivityFailure('aborted', read)).toMatchObject({
      type: FailureTypes.Transient,
      nonRetryable: false,
      message: 'verify: aborted',
    });
  });

  it('an ApplicationFailure an activity raised on purpose passes unchanged', () => {
    const own = ApplicationFailure.create({ type: 'Custom', message: 'mine', nonRetryable: true });
    expect(toActivityFailure(own, money)).toBe(own);
  });
});

describe('an activity failure, as read in workflow code', () => {
  const refused = ApplicationFailure.create({
    type: FailureTypes.BadRequest,
    message: 'charge card: amount too small',
  });
  const unknown = ApplicationFailure.create({ type: FailureTypes.OutcomeUnknown, message: 'charge card: 502' });

  it('unwraps the cause of an ActivityFailure, and nothing else', () => {
    expect(failureOf(asDelivered(refused))).toBe(refused);
    expect(failureOf(refused)).toBeUndefined(); // not wrapped: no cause
    expect(failureOf(new Error('plain', { cause: new Error('inner') }))).toBeUndefined();
    expect(failureOf('text')).toBeUndefined();
  });

  it("reads the type of a wrapped failure and of a local activity's own failure", () => {
    expect(failureTypeOf(asDelivered(unknown))).toBe(FailureTypes.OutcomeUnknown);
    expect(failureTypeOf(unknown)).toBe(FailureTypes.OutcomeUnknown);
    expect(failureTypeOf(new Error('plain'))).toBeUndefined();
    expect(failureTypeOf(ApplicationFailure.create({ message: 'untyped' }))).toBeUndefined();
  });

  it('only the four refusal types prove nothing happened', () => {
    expect([...REFUSAL_TYPES].sort()).toEqual(['BadRequest', 'InvalidRequest', 'NotFound', 'Unauthorized']);
    for (const type of Object.values(FailureTypes)) {
      const f = asDelivered(ApplicationFailure.create({ type, message: type }));
      expect(isRefusalFailure(f)).toBe(REFUSAL_TYPES.includes(type));
    }
    expect(isRefusalFailure(refused)).toBe(false); // unwrapped: not an activity's failure
    expect(isRefusalFailure(asDelivered(ApplicationFailure.create({ message: 'untyped' })))).toBe(false);
  });

  it("gives the reason text: the failure's message, else the error and its cause", () => {
    expect(failureMessage(asDelivered(refused))).toBe('charge card: amount too small');
    expect(failureMessage(new Error('timed out', { cause: new Error('heartbeat') }))).toBe('timed out: heartbeat');
    expect(failureMessage(new Error('timed out', { cause: 'not an error' }))).toBe('timed out');
    expect(failureMessage(new Error('plain'))).toBe('plain');
    expect(failureMessage(42)).toBe('42');
  });
});
