// HTTP transport on undici: one connection pool per client (or an injected dispatcher),
// a deadline on every call, Bearer auth, JSON in and out, an x-request-id per call.
//
// It records whether the request reached the socket (undici's onRequestStart fires right before
// the request is written), so a failure can be told apart: refused before sending (safe to
// retry) or lost after sending (outcome unknown). Nothing here logs; bodies never leave it
// except as the parsed response.
import { randomUUID } from 'node:crypto';
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

/** Wraps undici's handler to note when the request is about to be written to a socket. */
class SendTracker implements Dispatcher.DispatchHandler {
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly state: { sent: boolean },
  ) {}
  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.state.sent = true;
    this.inner.onRequestStart?.(controller, context);
  }
  onRequestUpgrade(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: import('node:http').IncomingHttpHeaders,
    socket: import('node:stream').Duplex,
  ): void {
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: import('node:http').IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: import('node:http').IncomingHttpHeaders): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }
  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
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
    const clientRequestId = callOpts.requestId ?? randomUUID();
    const timeoutMs = callOpts.timeoutMs ?? this.opts.timeoutMs;
    const state = { sent: false };
    if (this.closed)
      throw new TransportFailure(
        'connection',
        false,
        'CLIENT_CLOSED',
        clientRequestId,
        undefined,
        'the client is closed',
        undefined,
      );
    if (callOpts.signal?.aborted)
      throw new TransportFailure(
        'aborted',
        false,
        'ABORTED',
        clientRequestId,
        undefined,
        'aborted before sending',
        callOpts.signal.reason,
      );

    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const onCallerAbort = () => controller.abort(callOpts.signal?.reason ?? new Error('aborted'));
    callOpts.signal?.addEventListener('abort', onCallerAbort, { once: true });

    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) search.append(k, String(v));
    const [pathOnly, existingQuery] = call.path.split('?', 2) as [string, string | undefined];
    const qs = [existingQuery, search.toString()].filter(Boolean).join('&');
    const path = `${this.basePath}${pathOnly}${qs ? `?${qs}` : ''}`;

    const headers: Record<string, string> = {
      ...callOpts.headers,
      authorization: `Bearer ${this.opts.secretKey}`,
      accept: 'application/json',
      'x-request-id': clientRequestId,
      'user-agent': this.opts.userAgent ?? 'payflow-payments-client/0.1',
    };
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
    } else if (call.method !== 'GET' && call.method !== 'DELETE') {
      // POST/PATCH without inputs (SMS deletes): an empty JSON object.
      body = '{}';
      headers['content-type'] = 'application/json';
    }

    const tracked = this.dispatcher.compose(
      (dispatch) => (options, handler) => dispatch(options, new SendTracker(handler, state)),
    );
    let status: number | undefined;
    try {
      const res = await tracked.request({
        origin: this.origin,
        path,
        method: call.method,
        headers,
        body,
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = res.statusCode;
      const text = await res.body.text();
      const serverRequestId = firstHeader(res.headers['x-request-id']);
      let parsed: unknown = undefined;
      let bodyIsJson = false;
      if (text.trim() !== '') {
        try {
          parsed = JSON.parse(text);
          bodyIsJson = true;
        } catch {
          parsed = text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
        }
      }
      return {
        status: res.statusCode,
        headers: res.headers,
        body: parsed,
        bodyIsJson,
        clientRequestId,
        requestId: serverRequestId ?? clientRequestId,
      };
    } catch (err) {
      const code = errorCode(err);
      const sent = state.sent && !(code !== undefined && NOT_SENT_CODES.has(code));
      if (callOpts.signal?.aborted && !timedOut) {
        throw new TransportFailure(
          'aborted',
          sent,
          'ABORTED',
          clientRequestId,
          status,
          sent
            ? 'aborted by the caller after the request was sent'
            : 'aborted by the caller before the request was sent',
          err,
        );
      }
      if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
        const what =
          code === 'UND_ERR_CONNECT_TIMEOUT'
            ? 'connecting'
            : sent
              ? status === undefined
                ? 'waiting for the response'
                : 'reading the response body'
              : 'before the request was sent';
        throw new TransportFailure(
          'timeout',
          sent,
          code ?? 'TIMEOUT',
          clientRequestId,
          status,
          `timed out ${what} (${timeoutMs} ms)`,
          err,
        );
      }
      const detail = err instanceof Error ? err.message : String(err);
      throw new TransportFailure(
        'connection',
        sent,
        code,
        clientRequestId,
        status,
        `${sent ? 'connection lost after the request was sent' : 'could not send the request'}: ${detail}`,
        err,
      );
    } finally {
      clearTimeout(timer);
      callOpts.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() !== '' ? s.trim() : undefined;
}
