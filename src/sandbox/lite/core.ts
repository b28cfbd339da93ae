// Sandbox core: HTTP plumbing, auth per endpoint group, the controllable clock, the ledger,
// the request log and fault injection. Endpoint groups register routes on it.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const DEFAULT_SANDBOX_KEY = 'sandbox_sk_local_development_key_0001';
export const SANDBOX_KEY_PREFIX = 'sandbox_sk_';

/** Auth behaviour differs by endpoint group, as the spec lists it. */
export type AuthGroup = 'direct' | 'virtual-account' | 'pos-remote' | 'checkout' | 'default' | 'none';

export interface Reply {
  status: number;
  body?: unknown;
  /** Hold the socket open with no reply, then destroy it (a processor that never answers). */
  hang?: boolean;
  html?: string;
  /** Answer with a redirect to this URL. */
  location?: string;
}

export interface RequestContext {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  secretKey: string;
}

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

export interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  group: AuthGroup;
  handler: Handler;
}

export class SandboxClock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  iso(at = this.now()): string {
    return new Date(at).toISOString();
  }
}

export type LedgerKind = 'card_charge' | 'bank_debit' | 'ussd' | 'checkout' | 'token_charge' | 'mandate_debit' | 'pos_remote' | 'pos_sale' | 'vend' | 'va_credit';

export interface LedgerEntry {
  id: string;
  kind: LedgerKind;
  reference: string;
  /** Lowest unit for card/POS amounts; the spec's decimal string for vending and virtual accounts. */
  amount: number | string;
  currency: string;
  at: string;
}

export interface FaultRule {
  id: string;
  method?: string;
  path: string;
  kind: 'latency' | 'error5xx' | 'reset' | 'drop-before-processing' | 'drop-after-processing';
  /** How many matching requests it applies to; unlimited when absent. */
  count?: number;
  latencyMs?: number;
  status?: number;
}

export interface RequestLogEntry {
  at: string;
  method: string;
  path: string;
  status: number | 'dropped' | 'reset' | 'hung';
  /** merchant_ref / transaction reference when the body carried one (never card data). */
  reference?: string;
}

export const ok = (data: unknown, message = 'Success', status = 200): Reply => ({ status, body: { status, success: true, message, data } });
export const fail = (status: number, message: string, opts: { stringStatus?: boolean; data?: unknown } = {}): Reply => ({
  status,
  body: { status: opts.stringStatus ? String(status) : status, success: false, message, data: opts.data ?? null },
});

/** `<field> is required` for the first missing field, as the spec's 400s read. */
export function requireFields(body: Record<string, unknown>, fields: string[], opts: { stringStatus?: boolean } = {}): Reply | undefined {
  for (const f of fields) {
    const v = body[f];
    if (v === undefined || v === null) return fail(400, `${f} is required`, opts);
    if (v === '') return fail(400, `${f} is not allowed to be empty`, opts);
  }
  return undefined;
}

export class SandboxCore {
  readonly routes: Route[] = [];
  readonly clock = new SandboxClock();
  ledgerEntries: LedgerEntry[] = [];
  faults: FaultRule[] = [];
  requestLog: RequestLogEntry[] = [];

  constructor(readonly secretKeys: string[], readonly posProcessorTimeoutMs: number) {}

  route(method: string, path: string, group: AuthGroup, handler: Handler): void {
    const keys: string[] = [];
    const pattern = new RegExp(
      '^' + path.replace(/\{(\w+)\}/g, (_m, k: string) => {
        keys.push(k);
        return '([^/]+)';
      }) + '$',
    );
    this.routes.push({ method, pattern, keys, group, handler });
  }

  record(kind: LedgerKind, reference: string, amount: number | string, currency: string): LedgerEntry {
    const entry = { id: randomUUID(), kind, reference, amount, currency, at: this.clock.iso() };
    this.ledgerEntries.push(entry);
    return entry;
  }

  /** Returns a reply when auth fails, per the spec's group-specific messages. */
  private authenticate(req: IncomingMessage, group: AuthGroup): { reply?: Reply; key: string } {
    if (group === 'none') return { key: '' };
    const header = req.headers.authorization;
    const key = header?.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (key && this.secretKeys.includes(key)) return { key };
    const missing = !key;
    switch (group) {
      case 'pos-remote':
        return { key, reply: fail(401, 'Invalid or missing token', { stringStatus: true }) };
      case 'checkout':
        return { key, reply: missing ? { status: 401, body: { success: false, message: '', data: {} } } : fail(401, 'Initiate transaction Unauthorized') };
      case 'virtual-account':
        return { key, reply: missing ? { status: 401, body: { success: false, message: '', data: {} } } : fail(403, 'Merchant authentication failed') };
      case 'direct':
        return {
          key,
          reply: missing
            ? { status: 401, body: { success: false, message: '', data: {} } }
            : fail(403, `API key is empty or invalid: it must start with ${SANDBOX_KEY_PREFIX}`),
        };
      default:
        return { key, reply: { status: 401, body: { success: false, message: '', data: {} } } };
    }
  }

  private matchFault(method: string, path: string): FaultRule | undefined {
    for (const rule of this.faults) {
      if (rule.method && rule.method.toUpperCase() !== method) continue;
      const matches = rule.path.startsWith('^') ? new RegExp(rule.path).test(path) : path.startsWith(rule.path);
      if (!matches) continue;
      if (rule.count !== undefined) {
        if (rule.count <= 0) continue;
        rule.count -= 1;
      }
      return rule;
    }
    return undefined;
  }

  async handle(req: IncomingMessage, res: ServerResponse, admin: Handler): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const raw = await readBody(req);
    let body: Record<string, unknown> = {};
    if (raw.length > 0) {
      try {
        const parsed = JSON.parse(raw.toString('utf8')) as unknown;
        body = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
      } catch {
        return send(res, fail(400, 'Invalid JSON body'));
      }
    }
    const reference = ['merchant_ref', 'transaction_reference', 'transaction_ref', 'reference'].map((k) => body[k]).find((v) => typeof v === 'string' || typeof v === 'number');
    const log = (status: RequestLogEntry['status']) =>
      path.startsWith('/__admin') || this.requestLog.push({ at: this.clock.iso(), method, path, status, reference: reference === undefined ? undefined : String(reference) });

    if (path.startsWith('/__admin')) {
      return send(res, await admin({ method, path, params: {}, query: url.searchParams, body, secretKey: '' }));
    }

    let matched: { route: Route; params: Record<string, string> } | undefined;
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.pattern.exec(path);
      if (m) {
        matched = { route, params: Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1])])) };
        break;
      }
    }
    if (!matched) {
      log(404);
      return send(res, fail(404, 'Route not found'));
    }

    const auth = this.authenticate(req, matched.route.group);
    if (auth.reply) {
      log(auth.reply.status);
      return send(res, auth.reply);
    }

    const fault = this.matchFault(method, path);
    if (fault?.kind === 'latency') await sleep(fault.latencyMs ?? 1000);
    if (fault?.kind === 'error5xx') {
      log(fault.status ?? 503);
      return send(res, fail(fault.status ?? 503, 'Service temporarily unavailable'));
    }
    if (fault?.kind === 'reset' || fault?.kind === 'drop-before-processing') {
      log('reset');
      req.socket.destroy();
      return;
    }

    const reply = await matched.route.handler({ method, path, params: matched.params, query: url.searchParams, body, secretKey: auth.key });
    if (fault?.kind === 'drop-after-processing') {
      // The state changed; the caller never learns how.
      log('dropped');
      req.socket.destroy();
      return;
    }
    if (reply.hang) {
      log('hung');
      const timer = setTimeout(() => req.socket.destroy(), this.posProcessorTimeoutMs);
      req.socket.once('close', () => clearTimeout(timer));
      return;
    }
    log(reply.status);
    send(res, reply);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  if (reply.location !== undefined) {
    res.writeHead(reply.status, { Location: reply.location });
    res.end();
    return;
  }
  if (reply.html !== undefined) {
    res.writeHead(reply.status, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(reply.html);
    return;
  }
  res.writeHead(reply.status, { 'Content-Type': 'application/json', 'x-request-id': randomUUID() });
  res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function randomDigits(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor(Math.random() * 10);
  return s;
}

export function randomHex(bytes: number): string {
  return Array.from({ length: bytes * 2 }, () => '0123456789ABCDEF'[Math.floor(Math.random() * 16)]).join('');
}
