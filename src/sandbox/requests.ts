// One request's way through the sandbox: the admin API (its token checked before a byte of the
// body is read), then for the service's routes the injected fault, the route, its authentication,
// the cross-site guards, the declared fields, the handler, and the request log.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isJsonContentType } from '../http/safe-server';
import type { AdminState } from './admin';
import type { SandboxClock } from './clock';
import {
  authenticate,
  BodyTooLargeError,
  checkFields,
  fail,
  newRequestId,
  parseBody,
  readBody,
  REQUEST_LOG_LIMIT,
  send,
  type Reply,
  type RequestContext,
  type RequestLogEntry,
  type Router,
  type SandboxLogger,
} from './http';

/** The state one sandbox generation holds (reset builds a new one). */
export interface SandboxState extends AdminState {
  router: Router;
}

/** What the request handler needs of the sandbox around it. */
export interface RequestHandlerDeps {
  state: () => SandboxState;
  admin: Router;
  clock: SandboxClock;
  keys: readonly string[];
  adminToken: Buffer;
  /** How long (real time) a hanging reply holds the socket before closing it. */
  processorTimeoutMs: number;
  /** The sandbox's own origins (public URL, listening URL): the page routes take form posts from them only. */
  ownUrls: () => string[];
  logger?: SandboxLogger;
}

/** A request read up to its body. */
interface Incoming {
  req: IncomingMessage;
  url: URL;
  method: string;
  path: string;
  body: Record<string, unknown>;
  /** Undefined when the body is not valid JSON (or nests too deep). */
  parsed: ReturnType<typeof parseBody>;
  stateChanging: boolean;
  /** A state-changing API call must declare a JSON body (see jsonRequired). */
  jsonRequired: boolean;
  /** When it arrived (Date.now()), for the log line's duration. */
  started: number;
}

const ADMIN_UNAUTHORIZED = 'The admin API needs Authorization: Bearer <SANDBOX_ADMIN_TOKEN>';
/** Body fields that name the transaction in the request log. */
const REFERENCE_FIELDS = ['merchant_ref', 'transaction_reference', 'transaction_ref', 'reference'];

export class RequestHandler {
  constructor(private readonly deps: RequestHandlerDeps) {}

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const incomingId = req.headers['x-request-id'];
    const requestId =
      typeof incomingId === 'string' && /^[\w.:-]{1,100}$/.test(incomingId) ? incomingId : newRequestId();
    const method = (req.method ?? 'GET').toUpperCase();
    const path = trimTrailingSlashes(url.pathname);
    const started = Date.now();
    const st = this.deps.state();
    const isAdmin = path === '/__admin' || path.startsWith('/__admin/');
    // The admin API authenticates before it reads a byte of the body.
    if (isAdmin && !this.adminAuthorized(req.headers.authorization))
      return send(res, fail(401, ADMIN_UNAUTHORIZED), requestId);
    let raw: Buffer;
    try {
      raw = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return send(res, fail(413, 'Request body too large'), requestId);
      throw err;
    }
    const parsed = parseBody(raw, req.headers['content-type']);
    const stateChanging = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
    const contentType = req.headers['content-type'];
    // Cross-site form guard: a browser on another site can post only forms (urlencoded, multipart,
    // text/plain) without a preflight, so API routes take a body only when it is declared JSON.
    const jsonRequired =
      stateChanging && (raw.length > 0 || contentType !== undefined) && !isJsonContentType(contentType);
    const body = parsed?.body ?? {};
    const incoming: Incoming = { req, url, method, path, body, parsed, stateChanging, jsonRequired, started };
    if (isAdmin) return send(res, await this.adminReply(incoming), requestId);
    return this.serve(st, incoming, res, requestId);
  }

  private async adminReply(r: Incoming): Promise<Reply> {
    const m = this.deps.admin.match(r.method, r.path);
    if (r.jsonRequired) return fail(415, 'Content-Type must be application/json');
    if (!('route' in m))
      return fail(m.allowed.length ? 405 : 404, m.allowed.length ? 'Method not allowed' : 'Unknown admin endpoint');
    if (!r.parsed) return fail(400, 'Invalid JSON body');
    return m.route.handler(contextFor(r, m.params, r.parsed.form, ''));
  }

  /** A service route, with the fault the admin injected for it. */
  private async serve(st: SandboxState, r: Incoming, res: ServerResponse, requestId: string): Promise<void> {
    const log = this.logger(st, r);
    const fault = st.faults.take(r.method, r.path, r.url.search.slice(1));
    if (fault?.kind === 'latency') await new Promise((done) => setTimeout(done, fault.latencyMs ?? 1000));
    if (fault?.kind === 'error5xx') {
      const status = fault.status ?? 503;
      log(status);
      return send(res, fail(status, 'Service temporarily unavailable'), requestId);
    }
    if (fault?.kind === 'reset' || fault?.kind === 'drop-before-processing') return this.destroy(r, log, 'reset');
    const reply = await this.routeReply(st, r);
    // The state (and the ledger) changed; the caller never learns how.
    if (fault?.kind === 'drop-after-processing') return this.destroy(r, log, 'dropped');
    if (reply.hang) {
      log('hung');
      const timer = setTimeout(() => r.req.socket.destroy(), this.deps.processorTimeoutMs);
      r.req.socket.once('close', () => clearTimeout(timer));
      return;
    }
    log(reply.status);
    send(res, reply, requestId);
  }

  private destroy(r: Incoming, log: (status: RequestLogEntry['status']) => void, status: 'reset' | 'dropped'): void {
    log(status);
    r.req.socket.destroy();
  }

  private async routeReply(st: SandboxState, r: Incoming): Promise<Reply> {
    const m = st.router.match(r.method, r.path);
    if (!('route' in m)) return m.allowed.length ? fail(405, 'Method not allowed') : fail(404, 'Route not found');
    const auth = authenticate(r.req.headers, m.route.group, this.deps.keys);
    if (auth.reply) return auth.reply;
    if (m.route.group === 'none' && r.stateChanging && !this.sameOrigin(r.req.headers))
      return fail(403, 'Cross-site form posts are refused');
    if (m.route.group !== 'none' && r.jsonRequired) return fail(415, 'Content-Type must be application/json');
    if (!r.parsed) return fail(400, 'Invalid JSON body');
    const ctx = contextFor(r, m.params, r.parsed.form, auth.key);
    // Every field first: the handler never looks anything up for a request that is malformed.
    return checkFields(m.route, ctx) ?? (await m.route.handler(ctx));
  }

  /** One request-log entry (and log line) for this request, with the reference its body named. */
  private logger(st: SandboxState, r: Incoming): (status: RequestLogEntry['status']) => void {
    const ref = REFERENCE_FIELDS.map((k) => r.body[k]).find((v) => typeof v === 'string' || typeof v === 'number');
    const { method, path, started } = r;
    return (status) => {
      st.requestLog.push({
        at: this.deps.clock.iso(),
        method,
        path,
        status,
        ...(ref === undefined ? {} : { reference: String(ref) }),
      });
      if (st.requestLog.length > REQUEST_LOG_LIMIT) st.requestLog.splice(0, st.requestLog.length - REQUEST_LOG_LIMIT);
      this.deps.logger?.info({ method, path, status, ms: Date.now() - started }, 'sandbox request');
    };
  }

  private adminAuthorized(header: string | undefined): boolean {
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) return false;
    const given = Buffer.from(match[1], 'utf8');
    return given.length === this.deps.adminToken.length && timingSafeEqual(given, this.deps.adminToken);
  }

  /** The page routes (checkout modal, 3DS) take form posts, but only from the sandbox's own pages. */
  private sameOrigin(headers: IncomingMessage['headers']): boolean {
    const site = headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
    const origin = headers.origin;
    if (origin === undefined) return true; // not a browser, or a browser that says nothing cross-site
    return this.deps.ownUrls().some((own) => own !== '' && safeOrigin(own) === origin);
  }
}

/** What a handler sees of this request, admin (no secret key) or API. */
function contextFor(r: Incoming, params: Record<string, string>, form: boolean, secretKey: string): RequestContext {
  const { method, path, body } = r;
  return { method, path, params, query: r.url.searchParams, body, form, secretKey, headers: r.req.headers };
}

function safeOrigin(address: string): string | undefined {
  try {
    return new URL(address).origin;
  } catch {
    return undefined;
  }
}

/** The path without trailing slashes, in linear time (a regex on a long run of slashes was quadratic). */
function trimTrailingSlashes(pathname: string): string {
  let end = pathname.length;
  while (end > 0 && pathname.charCodeAt(end - 1) === 47) end--;
  return end === 0 ? '/' : pathname.slice(0, end);
}
