// Error hierarchy of the payments-service client, in the style of openai-node / stripe-node:
// one base class, one subclass per HTTP status family and per transport failure.
//
// Two flags tell a caller (an activity, a backend) what it may do next:
//
//   retrySafe       repeating the same call (same references) cannot cause a second effect
//                   and may succeed. True when the request never reached the service, or the
//                   operation is idempotent and the failure is transient.
//   outcomeUnknown  the service may have acted on the request and we do not know the result.
//                   Only for operations with effects (see OPERATIONS in ./operations.ts).
//                   Such an outcome is never "failed": verify (A6/verify, F4, E2...) first.
//
// No error carries the request body (card data, PINs, OTPs, BVNs travel there). `body` is the
// service's response body, kept as received (truncated when it is not JSON).

export interface ValidationIssue {
  /** Dotted path of the field, e.g. `card.expiry_month`; '' for the whole object. */
  path: string;
  /** The rule that was broken. Never contains the received value. */
  message: string;
}

export interface PaymentsApiErrorInit {
  message: string;
  operation: string;
  /** HTTP status, when a response arrived. */
  status?: number;
  /** The envelope's own `status` (a number, a numeric string turned into a number, or another string). */
  bodyStatus?: number | string;
  /** The message the service sent, exactly ('' for the 401 bodies with an empty message). */
  serviceMessage?: string;
  body?: unknown;
  requestId?: string;
  clientRequestId?: string;
  retrySafe: boolean;
  outcomeUnknown: boolean;
  /** Whether request bytes may have reached the service. */
  requestSent: boolean;
  moneyMoving?: boolean;
  /** Transport error code (ECONNREFUSED, UND_ERR_SOCKET, UND_ERR_HEADERS_TIMEOUT...). */
  code?: string;
  cause?: unknown;
}

/** Base class: every error the client throws is a PaymentsApiError. */
export class PaymentsApiError extends Error {
  override readonly name: string = 'PaymentsApiError';
  readonly status: number | undefined;
  readonly bodyStatus: number | string | undefined;
  readonly serviceMessage: string | undefined;
  readonly body: unknown;
  readonly operation: string;
  /** The server's x-request-id when it sent one, otherwise the one the client generated. */
  readonly requestId: string | undefined;
  /** The x-request-id the client sent. */
  readonly clientRequestId: string | undefined;
  readonly retrySafe: boolean;
  readonly outcomeUnknown: boolean;
  readonly requestSent: boolean;
  readonly moneyMoving: boolean;
  readonly code: string | undefined;

  constructor(init: PaymentsApiErrorInit) {
    super(init.message, init.cause !== undefined ? { cause: init.cause } : undefined);
    this.status = init.status;
    this.bodyStatus = init.bodyStatus;
    this.serviceMessage = init.serviceMessage;
    this.body = init.body;
    this.operation = init.operation;
    this.requestId = init.requestId;
    this.clientRequestId = init.clientRequestId;
    this.retrySafe = init.retrySafe;
    this.outcomeUnknown = init.outcomeUnknown;
    this.requestSent = init.requestSent;
    this.moneyMoving = init.moneyMoving ?? false;
    this.code = init.code;
  }

  /** Plain, log-safe summary (no body: callers decide whether to log it). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      status: this.status,
      bodyStatus: this.bodyStatus,
      requestId: this.requestId,
      clientRequestId: this.clientRequestId,
      retrySafe: this.retrySafe,
      outcomeUnknown: this.outcomeUnknown,
      requestSent: this.requestSent,
      moneyMoving: this.moneyMoving,
      code: this.code,
    };
  }
}

/** HTTP 400, or a 2xx whose envelope says status 400. */
export class BadRequestError extends PaymentsApiError {
  override readonly name = 'BadRequestError';
}
/** HTTP 401 (the body's message is often empty). */
export class AuthenticationError extends PaymentsApiError {
  override readonly name = 'AuthenticationError';
}
/** HTTP 403: key empty or invalid, 'Merchant authentication failed'. */
export class PermissionDeniedError extends PaymentsApiError {
  override readonly name = 'PermissionDeniedError';
}
/** HTTP 404; also the mandate lookup's 'No mandate found for reference …' (body status 400). */
export class NotFoundError extends PaymentsApiError {
  override readonly name = 'NotFoundError';
}
/** HTTP 409 (not in the spec; mapped for completeness). */
export class ConflictError extends PaymentsApiError {
  override readonly name = 'ConflictError';
}
/** HTTP 422 (not in the spec; mapped for completeness). */
export class UnprocessableEntityError extends PaymentsApiError {
  override readonly name = 'UnprocessableEntityError';
}
/** HTTP 424: an upstream validation failed (business account lookup, mandate OTP session). */
export class DependencyFailedError extends PaymentsApiError {
  override readonly name = 'DependencyFailedError';
}
/** HTTP 429 (rate limits are 'not shown' in the spec): not processed, safe to retry later. */
export class RateLimitError extends PaymentsApiError {
  override readonly name = 'RateLimitError';
}
/** HTTP 5xx: outcome unknown for operations with effects. */
export class ServerError extends PaymentsApiError {
  override readonly name = 'ServerError';
}

/**
 * No HTTP response. `requestSent=false` (refused, DNS failure, socket error before the request
 * was written) → retrySafe. `requestSent=true` (reset or closed after the request was written)
 * → outcomeUnknown for operations with effects.
 */
export class ConnectionError extends PaymentsApiError {
  override readonly name = 'ConnectionError';
}

/**
 * A timeout: connect (requestSent=false, retrySafe), or waiting for headers/body or the overall
 * deadline after the request was sent (requestSent=true, outcomeUnknown for operations with
 * effects). Never means "failed".
 */
export class TimeoutError extends PaymentsApiError {
  override readonly name = 'TimeoutError';
}

/** The caller's AbortSignal fired. Same sent/unknown rules as TimeoutError. */
export class RequestAbortedError extends PaymentsApiError {
  override readonly name = 'RequestAbortedError';
}

/** A 2xx whose body does not match the schema. outcomeUnknown for operations with effects. */
export class ResponseValidationError extends PaymentsApiError {
  override readonly name = 'ResponseValidationError';
  readonly issues: ValidationIssue[];
  constructor(init: PaymentsApiErrorInit & { issues: ValidationIssue[] }) {
    super(init);
    this.issues = init.issues;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/** An error raised before any request: nothing was sent, nothing to retry. */
const NEVER_SENT = { retrySafe: false, outcomeUnknown: false, requestSent: false } as const;

/** The request broke a rule of the spec; thrown before any byte is sent. */
export class RequestValidationError extends PaymentsApiError {
  override readonly name = 'RequestValidationError';
  readonly issues: ValidationIssue[];
  constructor(operation: string, issues: ValidationIssue[]) {
    super({
      message: `${operation}: invalid request: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`,
      operation,
      ...NEVER_SENT,
    });
    this.issues = issues;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/** For the webhook receiver: a notification whose signature does not verify. */
export class WebhookSignatureVerificationError extends PaymentsApiError {
  override readonly name = 'WebhookSignatureVerificationError';
  /** Which header was checked (x-service-encrypted-body, x-service-signature, ...). */
  readonly header: string | undefined;
  constructor(message = 'webhook signature verification failed', opts: { header?: string; operation?: string } = {}) {
    super({ message, operation: opts.operation ?? 'webhook.verify', ...NEVER_SENT });
    this.header = opts.header;
  }
}

/** What an operation is, for retrySafe/outcomeUnknown. */
export interface OperationTraits {
  /** Moves money (charge, authorize, debit, vend...). */
  moneyMoving: boolean;
  /** Repeating it has no further effect (reads, lookups, cancels, deletes). */
  idempotent: boolean;
}

type StatusErrorClass = new (init: PaymentsApiErrorInit) => PaymentsApiError;

const CLASS_FOR_STATUS: Readonly<Record<number, StatusErrorClass>> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  424: DependencyFailedError,
  429: RateLimitError,
};

export function errorClassForStatus(status: number): StatusErrorClass {
  return CLASS_FOR_STATUS[status] ?? (status >= 500 ? ServerError : PaymentsApiError);
}

type Flags = { retrySafe: boolean; outcomeUnknown: boolean };
const RETRY_SAFE: Flags = { retrySafe: true, outcomeUnknown: false };
const SETTLED: Flags = { retrySafe: false, outcomeUnknown: false };
/** The request may have been acted on: only an idempotent operation may simply be repeated. */
const mayHaveActed = (traits: OperationTraits): Flags =>
  traits.idempotent ? RETRY_SAFE : { retrySafe: false, outcomeUnknown: true };

/** retrySafe/outcomeUnknown for a response with an error status. */
export function flagsForStatus(status: number, traits: OperationTraits): Flags {
  if (status === 429) return { ...RETRY_SAFE };
  if (status >= 500) return { ...mayHaveActed(traits) };
  // 4xx: the service refused the request; repeating it changes nothing.
  return { ...SETTLED };
}

/** retrySafe/outcomeUnknown for a failure without a (usable) response. */
export function flagsForTransport(requestSent: boolean, traits: OperationTraits): Flags {
  return { ...(requestSent ? mayHaveActed(traits) : RETRY_SAFE) };
}

export function isPaymentsApiError(err: unknown): err is PaymentsApiError {
  return err instanceof PaymentsApiError;
}
