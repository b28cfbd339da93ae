// HTTP transport on undici: one connection pool per client (or an injected dispatcher),
// a deadline on every call, Bearer auth, JSON in and out, an x-request-id per call.
//
// It records whether the request reached the socket (undici's onRequestStart fires right before
// the request is written), so a failure can be told apart: refused before sending (safe to
// retry) or lost after sending (outcome unknown). Nothing here logs; bodies never leave it
// except as the parsed response.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import type { HttpCall } from './operations';

export interface TransportOptions {
  baseUrl: string;
  secretKey: string;
  timeoutMs: number;
  connectTimeoutMs: number;
  dispatcher?: Dispatcher;
  userAgent?: string;
}

export interface CallOptions {
  /** Overall deadline for this call (connect, send, headers, body). Default: the client's timeoutMs. */
  timeoutMs?: number;
  /** Cancels the call (e.g. a Temporal activity's cancellation signal). */
  signal?: AbortSignal;
  /** Sent as x-request-id instead of a generated one (e.g. the activity id, for correlation). */
  requestId?: string;
  /** Extra headers (trace context); the transport's own headers always win. */
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or the raw text when the body is not JSON, or undefined when empty. */
  body: unknown;
  bodyIsJson: boolean;
  clientRequestId: string;
  requestId: string;
}

export type TransportFailureKind = 'timeout' | 'aborted' | 'connection';

/** Internal: a failure without a usable response; the client turns it into a PaymentsApiError. */
export class TransportFailure extends Error {
  constructor(
    readonly kind: TransportFailureKind,
    readonly requestSent: boolean,
    readonly code: string | undefined,
    readonly clientRequestId: string,
    readonly responseStatus: number | undefined,
    message: string,
    readonly original: unknown,
  ) {
    super(message);
  }
}

const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_INVALID_ARG',
  'ERR_INVALID_URL',
]);
const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

type Controller = Dispatcher.DispatchController;

/** Wraps undici's handler to note when the request is about to be written to a socket. */
class SendTracker implements Dispatcher.DispatchHandler {
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly attempt: { sent: boolean },
  ) {}
  onRequestStart(controller: Controller, context: unknown): void {
    this.attempt.sent = true;
    this.inner.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(controller: Controller, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }
  onResponseStart(
    controller: Controller,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: Controller, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: Controller, trailers: IncomingHttpHeaders): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: Controller, error: Error): void {
    this.inner.onResponseError?.(controller, error);
  }
}

export class HttpTransport {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly origin: string;
  private readonly basePath: string;
  private closed = false;

  constructor(private readonly opts: TransportOptions) {
    const url = new URL(opts.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError('PaymentsClient: baseUrl must be an http(s) URL');
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    if (opts.dispatcher) {
      this.dispatcher = opts.dispatcher;
      this.ownsDispatcher = false;
    } else {
      this.dispatcher = new Agent({
        connect: { timeout: opts.connectTimeoutMs },
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
        keepAliveTimeout: 4_000,
      });
      this.ownsDispatcher = true;
    }
  }

  async send(call: HttpCall, callOpts: CallOptions = {}): Promise<RawResponse> {
    const attempt: Attempt = { clientRequestId: callOpts.requestId ?? randomUUID(), sent: false, status: undefined };
    const timeoutMs = callOpts.timeoutMs ?? this.opts.timeoutMs;
    if (this.closed) throw failure(attempt, 'connection', 'CLIENT_CLOSED', 'the client is closed', undefined);
    if (callOpts.signal?.aborted)
      throw failure(attempt, 'aborted', 'ABORTED', 'aborted before sending', callOpts.signal.reason);
    const deadline = new Deadline(timeoutMs, callOpts.signal);
    const tracked = this.dispatcher.compose(
      (dispatch) => (options, handler) => dispatch(options, new SendTracker(handler, attempt)),
    );
    try {
      const res = await tracked.request({
        origin: this.origin,
        path: this.pathOf(call),
        method: call.method,
        ...this.headersAndBody(call, attempt.clientRequestId, callOpts.headers),
        signal: deadline.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      attempt.status = res.statusCode;
      return {
        ...parseBody(await res.body.text()),
        status: res.statusCode,
        headers: res.headers,
        ...requestIds(res.headers, attempt),
      };
    } catch (err) {
      throw failureOf(err, attempt, {
        timeoutMs,
        timedOut: deadline.timedOut,
        callerAborted: callOpts.signal?.aborted === true,
      });
    } finally {
      deadline.dispose();
    }
  }

  /** The base URL's path, the call's path and its query (one the path carries first). */
  private pathOf(call: HttpCall): string {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) search.append(k, String(v));
    const [pathOnly, existingQuery] = call.path.split('?', 2) as [string, string | undefined];
    const qs = [existingQuery, search.toString()].filter(Boolean).join('&');
    return `${this.basePath}${pathOnly}${qs ? `?${qs}` : ''}`;
  }

  private headersAndBody(
    call: HttpCall,
    clientRequestId: string,
    extra: Record<string, string> | undefined,
  ): { headers: Record<string, string>; body: string | undefined } {
    const headers: Record<string, string> = {
      ...extra,
      authorization: `Bearer ${this.opts.secretKey}`,
      accept: 'application/json',
      'x-request-id': clientRequestId,
      'user-agent': this.opts.userAgent ?? 'payflow-payments-client/0.1',
    };
    // POST/PATCH without inputs (SMS deletes): an empty JSON object.
    const body =
      call.body !== undefined
        ? JSON.stringify(call.body)
        : call.method !== 'GET' && call.method !== 'DELETE'
          ? '{}'
          : undefined;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return { headers, body };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** One call as it goes: its id, whether the request reached the socket, the status once one came. */
interface Attempt {
  clientRequestId: string;
  sent: boolean;
  status: number | undefined;
}

/** The call's deadline, and the caller's signal joined to it. */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort: () => void;
  timedOut = false;

  constructor(
    timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    this.onCallerAbort = () => this.controller.abort(callerSignal?.reason ?? new Error('aborted'));
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }
}

function failure(
  attempt: Attempt,
  kind: TransportFailureKind,
  code: string | undefined,
  message: string,
  original: unknown,
): TransportFailure {
  return new TransportFailure(kind, attempt.sent, code, attempt.clientRequestId, attempt.status, message, original);
}

/** Why a call failed without a usable response: the caller's abort, the deadline, or the connection. */
function failureOf(
  err: unknown,
  attempt: Attempt,
  how: { timeoutMs: number; timedOut: boolean; callerAborted: boolean },
): TransportFailure {
  const code = errorCode(err);
  // A refused connection or a bad address never reached the service, whatever undici had started.
  const sent = attempt.sent && !(code !== undefined && NOT_SENT_CODES.has(code));
  const seen = { ...attempt, sent };
  if (how.callerAborted && !how.timedOut)
    return failure(
      seen,
      'aborted',
      'ABORTED',
      `aborted by the caller ${sent ? 'after' : 'before'} the request was sent`,
      err,
    );
  if (how.timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    const what =
      code === 'UND_ERR_CONNECT_TIMEOUT'
        ? 'connecting'
        : !sent
          ? 'before the request was sent'
          : attempt.status === undefined
            ? 'waiting for the response'
            : 'reading the response body';
    return failure(seen, 'timeout', code ?? 'TIMEOUT', `timed out ${what} (${how.timeoutMs} ms)`, err);
  }
  const detail = err instanceof Error ? err.message : String(err);
  const what = sent ? 'connection lost after the request was sent' : 'could not send the request';
  return failure(seen, 'connection', code, `${what}: ${detail}`, err);
}

/** The response body: parsed JSON, or the text (cut at 2000 characters) when it is not JSON, or undefined when empty. */
function parseBody(text: string): Pick<RawResponse, 'body' | 'bodyIsJson'> {
  if (text.trim() === '') return { body: undefined, bodyIsJson: false };
  try {
    return { body: JSON.parse(text) as unknown, bodyIsJson: true };
  } catch {
    return { body: text.length > 2000 ? `${text.slice(0, 2000)}…` : text, bodyIsJson: false };
  }
}

/** Ours, and the server's x-request-id when it sent one (else ours again). */
function requestIds(
  headers: RawResponse['headers'],
  attempt: Attempt,
): Pick<RawResponse, 'clientRequestId' | 'requestId'> {
  return {
    clientRequestId: attempt.clientRequestId,
    requestId: firstHeader(headers['x-request-id']) ?? attempt.clientRequestId,
  };
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() !== '' ? s.trim() : undefined;
}
