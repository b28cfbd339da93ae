// Helpers for the sandbox's black-box tests: plain HTTP calls (global fetch), a webhook receiver
// that keeps the exact raw bytes, an independent HMAC check with openssl, and the admin API.
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../support/polling';
import { SANDBOX_ADMIN_HEADERS } from '../support/sandbox-admin';
import { DEFAULT_SANDBOX_KEY, startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox';

export const KEY = DEFAULT_SANDBOX_KEY;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export interface CallResult {
  status: number;
  body: Json | undefined;
  text: string;
  headers: Headers;
}

export interface CallOptions {
  /** The Bearer key; null sends no Authorization header. Default: the sandbox key. */
  key?: string | null;
  /** Send the body as an HTML form (application/x-www-form-urlencoded). */
  form?: boolean;
  headers?: Record<string, string>;
}

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  opts: CallOptions = {},
): Promise<CallResult> {
  const key = opts.key === undefined ? KEY : opts.key;
  const headers: Record<string, string> = {
    ...(key === null ? {} : { Authorization: `Bearer ${key}` }),
    ...opts.headers,
  };
  let payload: string | undefined;
  if (body !== undefined) {
    if (opts.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(body as Record<string, string>).toString();
    } else {
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
        headers['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    }
  }
  const res = await fetch(`${base}${path}`, { method, headers, body: payload, redirect: 'manual' });
  const text = await res.text();
  let json: Json | undefined;
  try {
    json = text ? (JSON.parse(text) as Json) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text, headers: res.headers };
}

/** A client bound to one sandbox. */
export function client(sb: Sandbox) {
  const c = (method: string, path: string, body?: unknown, opts?: CallOptions) =>
    call(sb.url, method, path, body, opts);
  return {
    call: c,
    get: (path: string, opts?: CallOptions) => c('GET', path, undefined, opts),
    post: (path: string, body: unknown = {}, opts?: CallOptions) => c('POST', path, body, opts),
    admin: {
      get: (path: string) => c('GET', `/__admin${path}`, undefined, { key: null, headers: SANDBOX_ADMIN_HEADERS }),
      post: (path: string, body: unknown = {}) =>
        c('POST', `/__admin${path}`, body, { key: null, headers: SANDBOX_ADMIN_HEADERS }),
      del: (path: string) => c('DELETE', `/__admin${path}`, undefined, { key: null, headers: SANDBOX_ADMIN_HEADERS }),
      /** Waits until the webhook deliveries in flight have finished (their results recorded). */
      settle: async () => {
        expect(
          (await c('POST', '/__admin/webhooks/settle', {}, { key: null, headers: SANDBOX_ADMIN_HEADERS })).status,
        ).toBe(200);
      },
      advance: async (ms: number) => {
        const r = await c('POST', '/__admin/clock/advance', { ms }, { key: null, headers: SANDBOX_ADMIN_HEADERS });
        expect(r.status).toBe(200);
      },
    },
  };
}

/**
 * One sandbox and an HTTP client for it for a whole test file (started before the first test,
 * closed after the last). With a receiver, the sandbox sends its webhooks there and the
 * receiver's hits are cleared before each test.
 */
export function useSandbox(
  opts: Omit<SandboxOptions, 'port' | 'webhookUrl'> = {},
  receiver?: Receiver,
): { readonly sb: Sandbox; readonly api: ReturnType<typeof client> } {
  const env = {} as { sb: Sandbox; api: ReturnType<typeof client> };
  beforeAll(async () => {
    if (receiver) await receiver.start();
    env.sb = await startSandbox({ ...opts, port: 0, ...(receiver ? { webhookUrl: receiver.url } : {}) });
    env.api = client(env.sb);
  });
  afterAll(async () => {
    await env.sb.close();
    if (receiver) await receiver.stop();
  });
  if (receiver) beforeEach(() => receiver.reset());
  return env;
}

export interface Hit {
  raw: Buffer;
  headers: IncomingHttpHeaders;
  json: Json;
}

/** A local webhook receiver that records every delivery's raw bytes and answers as told. */
export class Receiver {
  hits: Hit[] = [];
  /** What to answer; default 200 with the credit notification's acknowledgement (harmless for payment webhooks). */
  respond: (hit: Hit) => { status: number; body?: unknown } = (hit) => ({
    status: 200,
    body: {
      response_code: 200,
      transaction_reference: hit.json.transaction_reference,
      response_description: 'Success',
    },
  });
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        let json: Json = {};
        try {
          json = JSON.parse(raw.toString('utf8')) as Json;
        } catch {
          // kept as raw
        }
        const hit = { raw, headers: req.headers, json };
        this.hits.push(hit);
        const answer = this.respond(hit);
        res.writeHead(answer.status, { 'Content-Type': 'application/json' });
        res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks`;
    return this;
  }

  reset(): void {
    this.hits = [];
    this.respond = new Receiver().respond;
  }

  /** Deliveries whose body mentions `ref`. */
  for(ref: string): Hit[] {
    return this.hits.filter((h) => h.raw.includes(ref));
  }

  async waitFor(ref: string, n = 1, ms = 3000): Promise<Hit[]> {
    await eventually(() => this.for(ref).length >= n, {
      timeoutMs: ms,
      intervalMs: 10,
      description: `${n} webhook(s) for ${ref}`,
    });
    return this.for(ref);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((r) => this.server?.close(r));
  }
}

/** HMAC-SHA512 computed by openssl, independently of the sandbox's code; lowercase hex. */
export function opensslHmac(data: Buffer | string, key: string): string {
  const out = execFileSync('openssl', ['dgst', '-sha512', '-hmac', key], { input: data }).toString().trim();
  return out.split('= ').pop()!.trim();
}

export const uid = (prefix: string) => `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** A mandate create body (D1) the sandbox accepts: an e-mandate, VARIABLE, 10 000 NGN over a year; `over` on top. */
export const mandateBody = (over: Record<string, unknown> = {}) => ({
  mandate_type: 'emandate',
  debit_type: 'variable',
  amount: 1_000_000,
  account_number: '0123456789',
  bank_code: '058',
  description: 'Subscription',
  start_date: '2026-11-22',
  end_date: '2027-11-22',
  customer_email: `${uid('c')}@example.com`,
  transaction_reference: uid('MREF-'),
  customerInformation: {
    identity: { type: 'bvn', number: '22212345678' },
    firstName: 'Ada',
    lastName: 'Obi',
    address: '1 Way',
    phone: '08012345678',
  },
  ...over,
});
