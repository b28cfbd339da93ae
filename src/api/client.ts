// The typed client for every operation of the payments service. No Temporal imports: activities
// wrap it, and a backend can use it on its own. No retries inside: callers pass references so
// that a repeated attempt is recognisable, and decide from retrySafe/outcomeUnknown.
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  NotFoundError,
  PaymentsApiError,
  RequestAbortedError,
  RequestValidationError,
  ResponseValidationError,
  TimeoutError,
  ConnectionError,
  errorClassForStatus,
  flagsForStatus,
  flagsForTransport,
  type OperationTraits,
  type ValidationIssue,
} from './errors';
import {
  OPERATION_NAMES,
  OPERATIONS,
  type HttpCall,
  type OperationData,
  type OperationName,
  type OperationRequest,
} from './operations';
import { resolvePaths, type ApiPaths } from './paths';
import { redactBody } from './redact';
import { HttpTransport, TransportFailure, type CallOptions, type RawResponse } from './transport';
import type { EmptyRequest } from './schemas/common';

export type { CallOptions } from './transport';

export interface PaymentsClientOptions {
  /** Host, e.g. https://sandbox-api-d.squadco.com or the embedded sandbox's URL. A path prefix is kept. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <secretKey>`. Never logged. */
  secretKey: string;
  /** Overall deadline per call, also used as undici's headers and body timeouts. Default 30000. */
  timeoutMs?: number;
  /** TCP/TLS connect timeout of the client's own pool. Default 10000 (ignored with `dispatcher`). */
  connectTimeoutMs?: number;
  /** Overrides for the paths the spec does not show (see DEFAULT_PATHS). */
  paths?: Partial<ApiPaths>;
  /** An undici dispatcher (Agent, Pool, MockAgent). The client does not close an injected one. */
  dispatcher?: Dispatcher;
  /** Sees each call (metrics, tracing): its operation, method and outcome; never a body or a header of ours. */
  observer?: CallObserver;
}

/** What a caller may watch of each call, e.g. src/observability/service-calls.ts (metrics and a span). */
export interface CallObserver {
  /** Called just before the request is sent (after validation). */
  start(call: { operation: OperationName; method: string; moneyMoving: boolean }): CallObservation | undefined;
}

export interface CallObservation {
  /** Headers to add (e.g. W3C traceparent); they never replace the client's own (authorization, x-request-id, content type). */
  headers?: Record<string, string>;
  /** Called once: with the HTTP status when a response came, or how the call failed without one. */
  end(outcome: { status?: number; failure?: 'timeout' | 'aborted' | 'connection' }): void;
}

/**
 * What every method resolves to: the parsed, schema-checked `data` and the envelope around it.
 */
export interface ApiResult<T> {
  data: T;
  /** The envelope's message ('' when absent). */
  message: string;
  /** HTTP status of the response. */
  status: number;
  /** The envelope's own status: a number (numeric strings converted), another string ('SUCCESS'), or undefined when absent. */
  bodyStatus: number | string | undefined;
  /** The envelope's success flag; true when absent (the HTTP status was 2xx). */
  success: boolean;
  /** The server's x-request-id when it sent one, otherwise the client's. */
  requestId: string;
  /** The x-request-id the client sent. */
  clientRequestId: string;
  operation: OperationName;
}

/** The operations of one group of the table (`sms` for `sms.send`, `sms.createCampaign`, ...). */
export type OperationGroup = OperationName extends `${infer G}.${string}` ? G : never;

/** One operation as a method: its request (optional when the operation takes none) and the call's options. */
export type ClientMethod<N extends OperationName> = [OperationRequest<N>, EmptyRequest] extends [
  EmptyRequest,
  OperationRequest<N>,
]
  ? (req?: EmptyRequest, opts?: CallOptions) => Promise<ApiResult<OperationData<N>>>
  : (req: OperationRequest<N>, opts?: CallOptions) => Promise<ApiResult<OperationData<N>>>;

/** A group's methods, derived from the table: `client.sms.send` is the operation `sms.send`. */
export type ClientGroup<G extends OperationGroup> = {
  [N in OperationName as N extends `${G}.${infer M}` ? M : never]: ClientMethod<N>;
};

interface Envelope {
  bodyStatus: number | string | undefined;
  success: boolean | undefined;
  message: string;
  data: unknown;
}

function readEnvelope(body: unknown): Envelope | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const o = body as Record<string, unknown>;
  let bodyStatus: number | string | undefined;
  if (typeof o.status === 'number') bodyStatus = o.status;
  else if (typeof o.status === 'string')
    bodyStatus = /^\d{3}$/.test(o.status.trim()) ? Number(o.status.trim()) : o.status;
  let success: boolean | undefined;
  if (typeof o.success === 'boolean') success = o.success;
  else if (o.success === 'true' || o.success === 'false') success = o.success === 'true';
  const message = typeof o.message === 'string' ? o.message : '';
  return { bodyStatus, success, message, data: o.data === undefined ? null : o.data };
}

/** The observer's view of one call; an observer that throws is ignored (observing never breaks a call). */
function observe(
  observer: CallObserver | undefined,
  call: Parameters<CallObserver['start']>[0],
): CallObservation | undefined {
  if (!observer) return undefined;
  let observation: CallObservation | undefined;
  try {
    observation = observer.start(call);
  } catch {
    return undefined;
  }
  if (!observation) return undefined;
  let ended = false;
  return {
    headers: observation.headers,
    end: (outcome) => {
      if (ended) return;
      ended = true;
      try {
        observation.end(outcome);
      } catch {
        // ignored on purpose
      }
    },
  };
}

export function zodIssuesToValidationIssues(issues: readonly z.core.$ZodIssue[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({ path: base ? `${base}.${key}` : key, message: 'is not a field of this request' });
      continue;
    }
    const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined;
    out.push({ path: base, message: missing ? 'is required' : issue.message });
  }
  return out;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  424: 'Failed Dependency',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export class PaymentsClient {
  /** The paths in use (defaults merged with overrides). */
  readonly paths: Readonly<ApiPaths>;
  private readonly transport: HttpTransport;
  private readonly observer: CallObserver | undefined;

  constructor(opts: PaymentsClientOptions) {
    if (!opts || typeof opts.baseUrl !== 'string' || opts.baseUrl === '')
      throw new TypeError('PaymentsClient: baseUrl is required');
    if (typeof opts.secretKey !== 'string' || opts.secretKey.trim() === '')
      throw new TypeError('PaymentsClient: secretKey is required');
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
    for (const [name, v] of [
      ['timeoutMs', timeoutMs],
      ['connectTimeoutMs', connectTimeoutMs],
    ] as const) {
      if (!Number.isInteger(v) || v <= 0) throw new TypeError(`PaymentsClient: ${name} must be a positive integer`);
    }
    this.paths = Object.freeze(resolvePaths(opts.paths));
    this.observer = opts.observer;
    this.transport = new HttpTransport({
      baseUrl: opts.baseUrl,
      secretKey: opts.secretKey,
      timeoutMs,
      connectTimeoutMs,
      dispatcher: opts.dispatcher,
    });
  }

  /** A. Hosted checkout. */
  readonly checkout = this.group('checkout');
  /** Recurring card tokens (A3-A5). */
  readonly tokens = this.group('tokens');
  /** The transaction list (A6) and verify. */
  readonly transactions = this.group('transactions');
  /** B. Direct API. */
  readonly direct = this.group('direct');
  /** C. Virtual accounts. */
  readonly virtualAccounts = this.group('virtualAccounts');
  /** D. Direct debit mandates. */
  readonly mandates = this.group('mandates');
  /** E. POS remote requests. */
  readonly posRemote = this.group('posRemote');
  /** F. POS terminal API. */
  readonly posTerminal = this.group('posTerminal');
  /** G. SMS. */
  readonly sms = this.group('sms');
  /** H. Electricity vending. */
  readonly vending = this.group('vending');

  /** The methods of one group of the table, each a call of its operation by name. */
  private group<G extends OperationGroup>(group: G): ClientGroup<G> {
    const methods = OPERATION_NAMES.filter((name) => name.startsWith(`${group}.`)).map((name) => [
      name.slice(group.length + 1),
      (req: unknown, opts?: CallOptions) => this.call(name, (req ?? {}) as OperationRequest<typeof name>, opts),
    ]);
    return Object.fromEntries(methods) as ClientGroup<G>;
  }

  /**
   * Any operation by name (what the grouped methods call). Validates the request before any I/O,
   * sends it once, and checks the response against the operation's schema.
   */
  async call<N extends OperationName>(
    operation: N,
    request: OperationRequest<N>,
    opts?: CallOptions,
  ): Promise<ApiResult<OperationData<N>>> {
    const def = OPERATIONS[operation] as unknown as OperationShape;
    if (!def) throw new TypeError(`PaymentsClient: unknown operation ${String(operation)}`);
    const traits: OperationTraits = { moneyMoving: def.moneyMoving, idempotent: def.idempotent };
    const parsed = def.request.safeParse(request ?? {}, { reportInput: true });
    if (!parsed.success) throw new RequestValidationError(operation, zodIssuesToValidationIssues(parsed.error.issues));
    const raw = await this.sendOnce(operation, traits, def.build(parsed.data, this.paths), opts);
    const envelope = checkedEnvelope(operation, traits, raw);
    const data = def.data.safeParse(envelope.data, { reportInput: false });
    if (!data.success) {
      const issues = zodIssuesToValidationIssues(data.error.issues).map((i) => ({
        path: i.path ? `data.${i.path}` : 'data',
        message: i.message,
      }));
      const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
      throw responseInvalid(
        operation,
        traits,
        raw,
        `the ${raw.status} response does not match the schema: ${summary}`,
        issues,
        envelope,
      );
    }
    return {
      data: data.data as OperationData<N>,
      message: envelope.message,
      status: raw.status,
      bodyStatus: envelope.bodyStatus,
      success: envelope.success ?? true,
      requestId: raw.requestId,
      clientRequestId: raw.clientRequestId,
      operation,
    };
  }

  /** Sends the request once (no retry: the caller decides from retrySafe/outcomeUnknown), watched by the observer. */
  private async sendOnce(
    operation: OperationName,
    traits: OperationTraits,
    call: HttpCall,
    opts: CallOptions | undefined,
  ): Promise<RawResponse> {
    const observed = observe(this.observer, { operation, method: call.method, moneyMoving: traits.moneyMoving });
    try {
      const raw = await this.transport.send(call, observed?.headers ? { ...opts, headers: observed.headers } : opts);
      observed?.end({ status: raw.status });
      return raw;
    } catch (err) {
      observed?.end({ failure: err instanceof TransportFailure ? err.kind : 'connection' });
      throw err instanceof TransportFailure ? transportError(operation, traits, err) : err;
    }
  }

  /** Closes the client's own connection pool (an injected dispatcher is left open). */
  async close(): Promise<void> {
    await this.transport.close();
  }
}

/** An operation of the table as the generic call sees it. */
interface OperationShape {
  moneyMoving: boolean;
  idempotent: boolean;
  request: z.ZodType;
  data: z.ZodType;
  build(req: unknown, paths: ApiPaths): HttpCall;
}

/** The response's envelope when the call succeeded: an error status (HTTP or the envelope's own) or no envelope throws. */
function checkedEnvelope(operation: OperationName, traits: OperationTraits, raw: RawResponse): Envelope {
  const envelope = readEnvelope(raw.body);
  if (raw.status < 200 || raw.status >= 300) throw statusError(operation, traits, raw, envelope, raw.status);
  if (!envelope) {
    const message = raw.bodyIsJson ? 'must be a JSON object (the envelope)' : 'must be JSON';
    throw responseInvalid(operation, traits, raw, `the ${raw.status} response body is not a JSON object`, [
      { path: '', message },
    ]);
  }
  const errorStatus =
    typeof envelope.bodyStatus === 'number' && envelope.bodyStatus >= 400 ? envelope.bodyStatus : undefined;
  if (envelope.success === false || errorStatus !== undefined)
    throw statusError(operation, traits, raw, envelope, errorStatus);
  return envelope;
}

/** A response that came (the request was sent) but is not what the operation answers: never retry-safe. */
function responseInvalid(
  operation: OperationName,
  traits: OperationTraits,
  raw: RawResponse,
  what: string,
  issues: ValidationIssue[],
  envelope?: Envelope,
): ResponseValidationError {
  return new ResponseValidationError({
    message: `${operation}: ${what}`,
    ...answered(operation, traits, raw),
    ...(envelope ? { bodyStatus: envelope.bodyStatus, serviceMessage: envelope.message } : {}),
    retrySafe: false,
    outcomeUnknown: !traits.idempotent,
    issues,
  });
}

/** What an error about a response that came carries: the call, the status, the ids and the body (redacted). */
function answered(operation: OperationName, traits: OperationTraits, raw: RawResponse) {
  return {
    operation,
    status: raw.status,
    body: redactBody(raw.body),
    requestId: raw.requestId,
    clientRequestId: raw.clientRequestId,
    requestSent: true,
    moneyMoving: traits.moneyMoving,
  };
}

function statusError(
  operation: OperationName,
  traits: OperationTraits,
  raw: RawResponse,
  envelope: Envelope | undefined,
  errorStatus: number | undefined,
): PaymentsApiError {
  const serviceMessage = envelope?.message ?? '';
  const classStatus = errorStatus ?? raw.status;
  let ErrorClass = errorClassForStatus(classStatus);
  // The mandate lookup (D5): an unknown reference answers body status 400 'No mandate found for reference …'
  // (shown with HTTP 404): a lookup that found nothing, whatever the HTTP status.
  if (operation === 'mandates.list' && /^No mandate found/i.test(serviceMessage)) ErrorClass = NotFoundError;
  const flags = classStatus >= 400 ? flagsForStatus(classStatus, traits) : { retrySafe: false, outcomeUnknown: false };
  const message =
    serviceMessage !== ''
      ? serviceMessage
      : `${operation}: HTTP ${raw.status}${STATUS_TEXT[classStatus] ? ` ${STATUS_TEXT[classStatus]}` : ''} with an empty message`;
  return new ErrorClass({
    message,
    ...answered(operation, traits, raw),
    bodyStatus: envelope?.bodyStatus,
    serviceMessage,
    ...flags,
  });
}

function transportError(operation: OperationName, traits: OperationTraits, f: TransportFailure): PaymentsApiError {
  const flags = flagsForTransport(f.requestSent, traits);
  const init = {
    message: `${operation}: ${f.message}`,
    operation,
    status: f.responseStatus,
    requestId: f.clientRequestId,
    clientRequestId: f.clientRequestId,
    requestSent: f.requestSent,
    moneyMoving: traits.moneyMoving,
    code: f.code,
    cause: f.original,
    ...flags,
  };
  if (f.kind === 'timeout') return new TimeoutError(init);
  if (f.kind === 'aborted') return new RequestAbortedError(init);
  return new ConnectionError(init);
}
