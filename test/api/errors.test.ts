// The error hierarchy: classes by status, flags by operation traits, log-safe JSON.
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  DependencyFailedError,
  NotFoundError,
  PaymentsApiError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  UnprocessableEntityError,
  WebhookSignatureVerificationError,
  errorClassForStatus,
  flagsForStatus,
  flagsForTransport,
} from '../../src/api';

const money = { moneyMoving: true, idempotent: false };
const read = { moneyMoving: false, idempotent: true };

describe('the error hierarchy', () => {
  it('maps HTTP statuses to classes', () => {
    expect(errorClassForStatus(400)).toBe(BadRequestError);
    expect(errorClassForStatus(401)).toBe(AuthenticationError);
    expect(errorClassForStatus(403)).toBe(PermissionDeniedError);
    expect(errorClassForStatus(404)).toBe(NotFoundError);
    expect(errorClassForStatus(409)).toBe(ConflictError);
    expect(errorClassForStatus(422)).toBe(UnprocessableEntityError);
    expect(errorClassForStatus(424)).toBe(DependencyFailedError);
    expect(errorClassForStatus(429)).toBe(RateLimitError);
    expect(errorClassForStatus(500)).toBe(ServerError);
    expect(errorClassForStatus(504)).toBe(ServerError);
    expect(errorClassForStatus(418)).toBe(PaymentsApiError);
  });

  it('computes retrySafe / outcomeUnknown', () => {
    expect(flagsForStatus(400, money)).toEqual({ retrySafe: false, outcomeUnknown: false });
    expect(flagsForStatus(503, money)).toEqual({ retrySafe: false, outcomeUnknown: true });
    expect(flagsForStatus(503, read)).toEqual({ retrySafe: true, outcomeUnknown: false });
    expect(flagsForStatus(429, money)).toEqual({ retrySafe: true, outcomeUnknown: false });
    expect(flagsForTransport(false, money)).toEqual({ retrySafe: true, outcomeUnknown: false });
    expect(flagsForTransport(true, money)).toEqual({ retrySafe: false, outcomeUnknown: true });
    expect(flagsForTransport(true, read)).toEqual({ retrySafe: true, outcomeUnknown: false });
  });

  it('WebhookSignatureVerificationError is a PaymentsApiError for the receiver to throw', () => {
    const err = new WebhookSignatureVerificationError('signature mismatch', { header: 'x-service-signature' });
    expect(err).toBeInstanceOf(PaymentsApiError);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({
      name: 'WebhookSignatureVerificationError',
      header: 'x-service-signature',
      operation: 'webhook.verify',
      retrySafe: false,
      outcomeUnknown: false,
    });
  });

  it('names each class and keeps the body out of toJSON', () => {
    const err = new ServerError({
      message: 'down',
      operation: 'posTerminal.initiate',
      status: 502,
      body: { secret: 1 },
      retrySafe: false,
      outcomeUnknown: true,
      requestSent: true,
      moneyMoving: true,
    });
    expect(err.name).toBe('ServerError');
    expect(err.toJSON()).toEqual({
      name: 'ServerError',
      message: 'down',
      operation: 'posTerminal.initiate',
      status: 502,
      bodyStatus: undefined,
      requestId: undefined,
      clientRequestId: undefined,
      retrySafe: false,
      outcomeUnknown: true,
      requestSent: true,
      moneyMoving: true,
      code: undefined,
    });
  });
});
