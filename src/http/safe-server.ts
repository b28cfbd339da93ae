// One home for what every HTTP server we ship (webhook receiver, codec server, sandbox) does
// before its own routes run, so that no request — whatever its path, headers, body or method —
// can throw out of a request handler and end the process:
//  - node:http limits set on purpose (below), and malformed HTTP answered by 'clientError';
//  - the request URL parsed without throwing (`GET //`, `%ZZ`, absolute-form junk → 400);
//  - bodies read with the limit enforced while reading (and from Content-Length first): 413;
//  - a handler that throws or rejects answers 500 (or the error's statusCode) and the server stays up.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { HttpExchange } from '../telemetry/metrics';
import { withServerSpan, type ServerSpanOptions } from '../telemetry/server-spans';

/** The limits we set deliberately (each server may lower the body limit). */
export const HTTP_LIMITS = {
  /** Whole request (headers and body) must arrive within this. */
  requestTimeoutMs: 30_000,
  /** Headers must arrive within this (slowloris). */
  headersTimeoutMs: 10_000,
  /** Idle keep-alive sockets are closed after this. */
  keepAliveTimeoutMs: 5_000,
  /** Largest header block; larger gets 431 from node. */
  maxHeaderSize: 16 * 1024,
  /** Default body limit. */
  maxBodyBytes: 1024 * 1024,
} as const;

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** The request's path and query, or undefined when its target is not a usable origin-form URL. */
export function parseRequestUrl(req: IncomingMessage): URL | undefined {
  const target = req.url ?? '/';
  // Only origin-form targets ("/path?query") are served; "//x", "*", "http://…" are not paths of ours.
  if (!target.startsWith('/') || target.startsWith('//')) return undefined;
  try {
    const url = new URL(target, 'http://localhost');
    decodeURIComponent(url.pathname); // a malformed %-escape is a bad request, not a crash later
    return url;
  } catch {
    return undefined;
  }
}

/** Reads the body, refusing more than `limit` bytes as soon as it is known (Content-Length) or read. */
export async function readBodyLimited(req: IncomingMessage, limit: number = HTTP_LIMITS.maxBodyBytes): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new HttpError(413, 'request body too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * True for `application/json` and `application/<x>+json` (parameters such as charset ignored).
 * Browsers can post cross-site only as a form (urlencoded, multipart, text/plain) without a
 * preflight, so a state-changing JSON route that insists on a JSON content type cannot be
 * driven by another site's page.
 */
export function isJsonContentType(header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const media = header.split(';')[0].trim().toLowerCase();
  return media === 'application/json' || /^application\/[\w.+-]+\+json$/.test(media);
}

/** True for the HTML form encodings (urlencoded, multipart): what another site's form posts. */
export function isHtmlFormContentType(header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const media = header.split(';')[0].trim().toLowerCase();
  return media === 'application/x-www-form-urlencoded' || media === 'multipart/form-data';
}

/** Throws 415 unless the request declares a JSON body (the cross-site form-post guard). */
export function requireJsonContentType(req: IncomingMessage): void {
  if (!isJsonContentType(req.headers['content-type']))
    throw new HttpError(415, 'Content-Type must be application/json');
}

export function replyJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export interface SafeServerOptions {
  /** Called when a handler failed; never with request bodies. */
  onError?: (err: unknown, req: IncomingMessage) => void;
  /** Called once per request when its response finished (or the client went away), e.g. HTTP metrics. */
  observe?: (exchange: HttpExchange) => void;
  /** A SERVER span per request, active while the handler runs (its log lines carry trace_id/span_id). */
  span?: ServerSpanOptions;
}

/**
 * A node:http server whose handler gets a parsed URL and can throw freely: a malformed target is
 * answered 400 before the handler runs, a thrown HttpError answers its status, anything else 500.
 */
export function createSafeServer(
  handler: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | void,
  opts: SafeServerOptions = {},
): Server {
  const server = createServer(
    {
      maxHeaderSize: HTTP_LIMITS.maxHeaderSize,
      requestTimeout: HTTP_LIMITS.requestTimeoutMs,
      headersTimeout: HTTP_LIMITS.headersTimeoutMs,
    },
    (req, res) => {
      // A client that goes away mid-request must not surface as an unhandled 'error'.
      req.on('error', () => undefined);
      res.on('error', () => undefined);
      const url = parseRequestUrl(req);
      if (opts.observe) {
        const started = performance.now();
        let observed = false;
        const done = () => {
          if (observed) return;
          observed = true;
          try {
            opts.observe!({
              method: req.method,
              path: url?.pathname,
              status: res.headersSent ? res.statusCode : 499,
              durationMs: performance.now() - started,
            });
          } catch {
            // Observing never breaks a request.
          }
        };
        res.once('finish', done);
        res.once('close', done);
      }
      if (!url) {
        req.resume();
        return replyJson(res, 400, { error: 'malformed request target' }, { Connection: 'close' });
      }
      let pending: Promise<void> | void;
      const invoke = () => handler(req, res, url);
      try {
        pending = opts.span ? withServerSpan(opts.span, req, res, url.pathname, invoke) : invoke();
      } catch (err) {
        pending = Promise.reject(err);
      }
      void Promise.resolve(pending).catch((err: unknown) => {
        const status = err instanceof HttpError ? err.statusCode : 500;
        if (!(err instanceof HttpError)) opts.onError?.(err, req);
        replyJson(
          res,
          status,
          { error: err instanceof HttpError ? err.message : 'internal error' },
          status === 413 ? { Connection: 'close' } : {},
        );
        if (status === 413) req.resume();
      });
    },
  );
  server.keepAliveTimeout = HTTP_LIMITS.keepAliveTimeoutMs;
  // Malformed HTTP (bad request line, oversized headers, timeouts): answer and close, never throw.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
    );
  });
  return server;
}
