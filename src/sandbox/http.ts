// HTTP plumbing shared by the endpoint groups: replies in the spec's envelope, the router,
// per-group authentication as the spec lists it, body parsing (JSON, and form posts from the
// sandbox's own HTML pages), HTML pages, and the request log.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Reply, RequestContext } from './request-context';
import { firstFieldError, queryObject, type RouteFields } from './validation';

export const DEFAULT_SANDBOX_KEY = 'sandbox_sk_local_development_key_0001';
/** The admin API's bearer token when none is configured (development and tests only; production refuses it). */
export const DEFAULT_SANDBOX_ADMIN_TOKEN = 'dev-sandbox-admin-token';
export const SANDBOX_KEY_PREFIX = 'sandbox_sk_';
/** The 403 message of the direct API and the mandate endpoints (also used for POS terminal, SMS, vending). */
export const INVALID_KEY_MESSAGE = `API key is empty or invalid: it must start with ${SANDBOX_KEY_PREFIX}`;
export const MERCHANT_ID = 'SBXMERCHANT';
export const MERCHANT_NAME = 'Sandbox Merchant';
export const MERCHANT_EMAIL = 'merchant@sandbox.local';
export const MAX_BODY_BYTES = 1024 * 1024;
/** How deep a JSON body may nest: the spec's deepest body (a POS card read, a mandate) is 4 levels. */
export const MAX_JSON_DEPTH = 32;

// Their home is request-context.ts (validation.ts names them too, without importing the router); routes read them here.
export type { Reply, RequestContext };

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

/**
 * Authentication per endpoint group (spec, Authentication):
 * - checkout (A1): wrong key → 401 'Initiate transaction Unauthorized', data null
 * - direct (B, A4-A6, verify), mandate (D): wrong or empty key → 403 naming the sandbox prefix
 * - virtual-account (C, A2): wrong key → 403 'Merchant authentication failed'
 * - pos-remote (E): missing or wrong → 401 'Invalid or missing token', status as a string
 * - pos-terminal (F), sms (G), vending (H): "same default credentials"; wrong → 403 as direct
 * - none: the sandbox's own HTML pages (checkout modal, 3DS challenge)
 * Everywhere except POS remote, no Authorization header at all → 401 `{success:false, message:'', data:{}}`.
 */
export type AuthGroup =
  'checkout' | 'direct' | 'mandate' | 'virtual-account' | 'pos-remote' | 'pos-terminal' | 'sms' | 'vending' | 'none';

export const ok = (data: unknown, message = 'Success', status = 200): Reply => ({
  status,
  body: { status, success: true, message, data },
});

export const fail = (
  status: number,
  message: string,
  opts: { stringStatus?: boolean; data?: unknown } = {},
): Reply => ({
  status,
  body: {
    status: opts.stringStatus ? String(status) : status,
    success: false,
    message,
    data: opts.data === undefined ? null : opts.data,
  },
});

export const UNAUTHORIZED_EMPTY: Reply = { status: 401, body: { success: false, message: '', data: {} } };

export function authenticate(
  headers: IncomingHttpHeaders,
  group: AuthGroup,
  keys: readonly string[],
): { key: string; reply?: undefined } | { key?: undefined; reply: Reply } {
  if (group === 'none') return { key: '' };
  const header = headers.authorization;
  const match = header === undefined ? null : /^Bearer\s*(.*)$/i.exec(header);
  const key = match ? match[1].trim() : '';
  if (key !== '' && keys.includes(key)) return { key };
  if (group === 'pos-remote') return { reply: fail(401, 'Invalid or missing token', { stringStatus: true }) };
  if (header === undefined) return { reply: UNAUTHORIZED_EMPTY };
  switch (group) {
    case 'checkout':
      return { reply: fail(401, 'Initiate transaction Unauthorized') };
    case 'virtual-account':
      return { reply: fail(403, 'Merchant authentication failed') };
    default:
      return { reply: fail(403, INVALID_KEY_MESSAGE) };
  }
}

export const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export function randomDigits(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(Math.random() * 10);
  return s;
}

/** The query's page size: its `name` parameter, or the default, within 1 to 100. */
export const pageSize = (query: URLSearchParams, name: string, defaultSize: number): number =>
  Math.min(Math.max(Number(query.get(name) ?? defaultSize) || defaultSize, 1), 100);

/** The page of rows the query's `page` (from 1) and page size (`perPage`, unless named otherwise) choose. */
export function page<T>(rows: T[], query: URLSearchParams, defaultSize: number, sizeName = 'perPage'): T[] {
  const size = pageSize(query, sizeName, defaultSize);
  const p = Math.max(Number(query.get('page') ?? 1) || 1, 1);
  return rows.slice((p - 1) * size, p * size);
}

/** Whether a timestamp's day is within the query's two day parameters (YYYY-MM-DD, both inclusive, each optional). */
export function inDays(at: string, query: URLSearchParams, from = 'date_from', to = 'date_to'): boolean {
  const [first, last, day] = [query.get(from), query.get(to), at.slice(0, 10)];
  return (!first || day >= first) && (!last || day <= last);
}

// ---- HTML ----------------------------------------------------------------------------------

export const escapeHtml = (s: unknown): string =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function htmlPage(status: number, title: string, body: string): Reply {
  return {
    status,
    html:
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
      '<style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem}' +
      'section{border:1px solid #ccc;border-radius:6px;padding:.75rem 1rem;margin:1rem 0}label{display:block;margin:.4rem 0}' +
      'input,select{margin-left:.5rem}.error{color:#b00020}.muted{color:#666;font-size:.9em}</style></head>' +
      `<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`,
  };
}

export const formatAmount = (amount: number, currency: string) =>
  `${currency} ${(amount / 100).toLocaleString('en-NG', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

// ---- Router --------------------------------------------------------------------------------

export interface Route {
  method: string;
  /** The path as registered, with its `{name}` placeholders. */
  path: string;
  pattern: RegExp;
  keys: string[];
  group: AuthGroup;
  /** The request's fields, checked before the handler runs (validation.ts). */
  fields: RouteFields;
  handler: Handler;
}

export class Router {
  private routes: Route[] = [];

  /**
   * `path` may hold `{name}` placeholders, each matching one path segment. `fields` declares what
   * the request must look like ({} when it carries nothing); each placeholder must be declared in
   * `fields.params`, so no identifier reaches a lookup unchecked.
   */
  add(method: string, path: string, group: AuthGroup, fields: RouteFields, handler: Handler): void {
    const keys: string[] = [];
    const pattern = new RegExp(
      '^' +
        path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, k: string) => {
          keys.push(k);
          return '([^/]+)';
        }) +
        '$',
    );
    const declared = Object.keys(fields.params?.shape ?? {});
    const undeclared = keys.filter((k) => !declared.includes(k));
    if (undeclared.length > 0 || declared.length !== keys.length)
      throw new Error(`${method} ${path}: fields.params must declare exactly the path parameters (${keys.join(', ')})`);
    this.routes.push({ method, path, pattern, keys, group, fields, handler });
  }

  /** The route table, in registration order (the route-walking test reads it). */
  list(): readonly Pick<Route, 'method' | 'path' | 'group' | 'fields'>[] {
    return this.routes.map(({ method, path, group, fields }) => ({ method, path, group, fields }));
  }

  match(method: string, path: string): { route: Route; params: Record<string, string> } | { allowed: string[] } {
    const allowed: string[] = [];
    for (const route of this.routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      let params: Record<string, string>;
      try {
        params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1])]));
      } catch {
        continue;
      }
      return { route, params };
    }
    return { allowed };
  }
}

/** A route's handler: a named function of its endpoint group's state and the request. */
export type RouteHandler<D> = (deps: D, ctx: RequestContext) => Reply | Promise<Reply>;
/** One row of an endpoint group's route table: method, path, fields, handler. */
export type RouteRow<D> = readonly [method: string, path: string, fields: RouteFields, handle: RouteHandler<D>];

/** Registers a table of routes that share one authentication group, in its order (the first matching route answers). */
export function addRoutes<D>(router: Router, group: AuthGroup, deps: D, rows: readonly RouteRow<D>[]): void {
  for (const [method, path, fields, handle] of rows)
    router.add(method, path, group, fields, (ctx) => handle(deps, ctx));
}

/**
 * The one validation step: the route's declared fields, then its lookup-free business rules, all
 * checked before its handler can look anything up. Answers the first error in the route group's
 * error shape, or undefined.
 */
export function checkFields(route: Route, ctx: RequestContext): Reply | undefined {
  const input = { params: ctx.params, query: queryObject(ctx.query), body: ctx.body };
  const error = firstFieldError(route.fields, input);
  if (error) {
    const message = route.fields.message?.(error.field, error.rule) ?? `${error.field} ${error.rule}`;
    return refusal(route, ctx, 400, message);
  }
  const broken = route.fields.rules?.(input);
  return broken ? refusal(route, ctx, broken.status ?? 400, broken.message) : undefined;
}

/** A refused request in the route group's error shape. */
function refusal(route: Route, ctx: RequestContext, status: number, message: string): Reply {
  switch (route.group) {
    case 'checkout': // A1: {success: false, message, data: null}, as the spec shows it
      return { status, body: { success: false, message, data: null } };
    case 'pos-remote': // E: error bodies carry status as a string
      return fail(status, message, { stringStatus: true });
    case 'none': // the sandbox's own pages: a form post gets a page
      if (!ctx.form) return fail(status, message);
      return (
        route.fields.formError?.(message, ctx) ??
        htmlPage(status, 'Invalid request', `<p class="error">${escapeHtml(message)}</p>`)
      );
    default:
      return fail(status, message);
  }
}

// ---- Request reading and replying -------------------------------------------------------------

export class BodyTooLargeError extends Error {}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  // A declared length over the limit is refused before a byte is read.
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) throw new BodyTooLargeError('request body too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError('request body too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * How deep a JSON text nests (brackets outside strings), in one pass: a body nested thousands deep
 * would parse, then break every later recursive read of it (the ledger's search, a webhook's body).
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) max = Math.max(max, ++depth);
    else if (c === 125 || c === 93) depth--;
  }
  return max;
}

/** Parses JSON (whatever the content type says, as callers often send text/plain) or a form post. */
export function parseBody(
  raw: Buffer,
  contentType: string | undefined,
): { body: Record<string, unknown>; form: boolean } | undefined {
  const isForm = (contentType ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
  if (isForm) return { body: Object.fromEntries(new URLSearchParams(raw.toString('utf8'))), form: true };
  if (raw.length === 0) return { body: {}, form: false };
  const text = raw.toString('utf8');
  if (jsonDepth(text) > MAX_JSON_DEPTH) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    return { body: asObject(parsed), form: false };
  } catch {
    return undefined;
  }
}

export function send(res: ServerResponse, reply: Reply, requestId: string): void {
  if (res.headersSent || res.destroyed) return;
  if (reply.location !== undefined) {
    res.writeHead(reply.status, { Location: reply.location, 'x-request-id': requestId });
    res.end();
    return;
  }
  if (reply.html !== undefined) {
    res.writeHead(reply.status, { 'Content-Type': 'text/html; charset=utf-8', 'x-request-id': requestId });
    res.end(reply.html);
    return;
  }
  // Serialised before any header is sent: a body that cannot be serialised is a 500, not a hung reply.
  let json: string;
  try {
    json = reply.body === undefined ? '' : JSON.stringify(reply.body);
  } catch {
    json = JSON.stringify({ status: 500, success: false, message: 'Internal error', data: null });
    reply = { status: 500 };
  }
  res.writeHead(reply.status, { 'Content-Type': 'application/json', 'x-request-id': requestId });
  res.end(json);
}

export const newRequestId = () => randomUUID();

export interface RequestLogEntry {
  at: string;
  method: string;
  path: string;
  /** HTTP status, or what happened instead of a reply. */
  status: number | 'dropped' | 'reset' | 'hung';
  /** merchant_ref / transaction reference / reference when the body carried one (never card data). */
  reference?: string;
}

export const REQUEST_LOG_LIMIT = 5000;

/** Where the sandbox logs its requests and webhook problems (never card data, PINs, OTPs, BVNs or keys). */
export interface SandboxLogger {
  info(...a: unknown[]): void;
  warn(...a: unknown[]): void;
}
