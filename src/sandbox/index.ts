// A local stand-in for the payments service, built from the interface spec
// (../shared/spec/payments-service-interface.md) and docs/choices.md: every endpoint group A-H,
// the E-1/E-2 webhooks, a ledger of money movements, a controllable clock, fault injection and an
// admin API. In memory; starts in milliseconds; runs in-process (tests) or as its own process
// (main.ts). See docs/sandbox.md for the test data and the admin API.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSafeServer, isJsonContentType } from '../http/safe-server';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createAdminRouter, type AdminState } from './admin';
import { registerCheckout } from './checkout';
import { SandboxClock } from './clock';
import { registerDirect } from './direct';
import { RequestFaults, WebhookFaults } from './faults';
import {
  authenticate,
  BodyTooLargeError,
  checkFields,
  DEFAULT_SANDBOX_ADMIN_TOKEN,
  DEFAULT_SANDBOX_KEY,
  fail,
  newRequestId,
  parseBody,
  readBody,
  REQUEST_LOG_LIMIT,
  Router,
  SANDBOX_KEY_PREFIX,
  send,
  type Reply,
  type RequestContext,
  type RequestLogEntry,
} from './http';
import { Ledger, type LedgerEntry } from './ledger';
import { registerMandates } from './mandates';
import { PaymentStore } from './payments';
import { DEFAULT_POS_REMOTE_COMPLETE_AFTER_MS, registerPosRemote } from './pos-remote';
import { registerPosTerminal } from './pos-terminal';
import { registerSms } from './sms';
import { registerTokens } from './tokens';
import { registerTransactions } from './transactions';
import { registerVending } from './vending';
import { registerVirtualAccounts } from './virtual-accounts';
import { DEFAULT_RETRY_SCHEDULE_MS, WebhookDispatcher, type DeliveryAttempt } from './webhooks';

export { SandboxClock } from './clock';
export {
  DEFAULT_SANDBOX_ADMIN_TOKEN,
  DEFAULT_SANDBOX_KEY,
  SANDBOX_KEY_PREFIX,
  INVALID_KEY_MESSAGE,
  MERCHANT_ID,
  type RequestLogEntry,
} from './http';
export { LEDGER_KINDS, type LedgerEntry, type LedgerKind } from './ledger';
export { REQUEST_FAULT_KINDS, WEBHOOK_FAULT_KINDS, type FaultRule, type WebhookFault } from './faults';
export {
  SANDBOX_PIN,
  SANDBOX_OTP,
  TEST_CARDS,
  STEP_LIFETIME_MS,
  CHECKOUT_LIFETIME_MS,
  MAX_WRONG_TRIES,
  OTP_ONLY_LIMIT,
  chargeFor,
} from './payments';
export { PARTNER_BANK_CODE, TOKEN_ACCOUNT_PREFIX, BANK_INSUFFICIENT_FUNDS_ACCOUNT, USSD_BANK_CODES } from './direct';
export { DYNAMIC_ACCOUNT_PREFIX } from './checkout';
export { PARTNER_BANK_ACCOUNTS, MISMATCHED_BVN, DEFAULT_SIMULATED_AMOUNT } from './virtual-accounts';
export { MANDATE_OTP, MANDATE_SESSION_MS, MANDATE_MIN_DEBIT, MANDATE_MAX_WRONG_OTP } from './mandates';
export {
  POS_REMOTE_LIFETIME_MS,
  POS_REMOTE_DECLINED_AMOUNT,
  POS_REMOTE_WRONG_PIN_AMOUNT,
  POS_REMOTE_NEVER_COMPLETES_AMOUNT,
  DEFAULT_POS_REMOTE_COMPLETE_AFTER_MS,
} from './pos-remote';
export {
  TEST_TERMINALS,
  TEST_PAN_OUTCOMES,
  POS_TEST_PIN,
  DEFAULT_POS_PREAUTH_HOLD_MS,
  readPinBlock,
} from './pos-terminal';
export {
  SMS_COST_PER_PAGE,
  SMS_FAILING_NUMBER,
  SMS_FAILING_BUCKET_ID,
  SMS_MAX_MESSAGES_PER_REQUEST,
  CAMPAIGN_SEND_DELAY_MS,
  type SentSms,
} from './sms';
export { TEST_METERS, PROVIDERS } from './vending';
export {
  DEFAULT_RETRY_SCHEDULE_MS,
  PAYMENT_SIGNATURE_HEADER,
  VA_SIGNATURE_HEADER,
  type DeliveryAttempt,
} from './webhooks';

export interface SandboxLogger {
  info(...a: unknown[]): void;
  warn(...a: unknown[]): void;
}

export interface SandboxOptions {
  /** 0 = a free port (the default, for tests); main.ts uses SANDBOX_PORT (default 4010). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Accepted Bearer keys; each must start with sandbox_sk_. Default ['sandbox_sk_local_development_key_0001']. */
  secretKeys?: string[];
  /** The bearer token the admin API (/__admin) requires. Default DEFAULT_SANDBOX_ADMIN_TOKEN (development only). */
  adminToken?: string;
  /** Where E-1 and E-2 are POSTed (the "dashboard" webhook URL). Default none: no webhooks sent, except to a request's own webhook_url. */
  webhookUrl?: string;
  /**
   * A merchant account's own dashboard webhook URL, by secret key (null: that account sends none),
   * in place of `webhookUrl`: two merchants on one sandbox (the bench's baseline) never get each
   * other's notifications.
   */
  webhookUrls?: Record<string, string | null>;
  /** E-2 signing version. Default 2. */
  webhookVersion?: 1 | 2 | 3;
  /** Delays before each retry of an unacknowledged webhook, on the sandbox clock. Default 5 s, 30 s, 2 min, 10 min, 1 h. */
  webhookRetryScheduleMs?: number[];
  /** Base of checkout_url and auth_url. Default http://host:port. */
  publicUrl?: string;
  /** The simulated terminal completes a POS remote request this long after creation (sandbox clock). Default 4000. */
  posRemoteCompleteAfterMs?: number;
  /** How long (real time) an F3 with a malformed card_sequence_number hangs before its socket is closed. Default 30000. */
  posProcessorTimeoutMs?: number;
  /** How long an approved F3 Pre-Authorization holds the funds before a Completion is refused as expired (sandbox clock). Default 7 days. */
  posPreAuthHoldMs?: number;
  /** Optional. Gets one line per request (method, path, status, duration) and webhook problems; never card data, PINs, OTPs, BVNs or keys. */
  logger?: SandboxLogger;
}

export interface Sandbox {
  url: string;
  port: number;
  /** The sandbox clock (kept across reset). `await sandbox.clock.advance(ms)` moves it. */
  readonly clock: SandboxClock;
  /** Money movements so far (also GET /__admin/ledger). */
  ledger(filter?: { reference?: string; kind?: string }): LedgerEntry[];
  /** Webhook delivery attempts so far (also GET /__admin/webhooks). */
  deliveries(filter?: { ref?: string; target?: 'payment' | 'virtual-account' }): DeliveryAttempt[];
  /** Requests seen (also GET /__admin/requests). */
  requests(): RequestLogEntry[];
  /** The route table of the service's operations and pages (not /__admin), each with its declared fields. */
  routes(): ReturnType<Router['list']>;
  /** Forgets all state and faults (like POST /__admin/reset); the clock keeps its position. */
  reset(): void;
  close(): Promise<void>;
}

function safeOrigin(address: string): string | undefined {
  try {
    return new URL(address).origin;
  } catch {
    return undefined;
  }
}

interface State extends AdminState {
  router: Router;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const host = opts.host ?? '127.0.0.1';
  const keys = opts.secretKeys && opts.secretKeys.length > 0 ? [...opts.secretKeys] : [DEFAULT_SANDBOX_KEY];
  const badKey = keys.find((k) => !k.startsWith(SANDBOX_KEY_PREFIX) || k.length <= SANDBOX_KEY_PREFIX.length);
  if (badKey !== undefined) throw new Error(`sandbox secret keys must start with ${SANDBOX_KEY_PREFIX}`);
  if (opts.webhookUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(opts.webhookUrl))
    throw new Error('webhookUrl must be an http(s) URL');
  for (const [key, url] of Object.entries(opts.webhookUrls ?? {})) {
    if (!keys.includes(key)) throw new Error('webhookUrls: each key must be one of the secret keys');
    if (url !== null && !/^https?:\/\/[^\s]+$/.test(url))
      throw new Error('webhookUrls: each URL must be an http(s) URL');
  }
  const perKey = new Map(Object.entries(opts.webhookUrls ?? {}));
  const webhookUrlFor = (key: string): string | undefined =>
    perKey.has(key) ? (perKey.get(key) ?? undefined) : opts.webhookUrl;
  const version = opts.webhookVersion ?? 2;
  if (![1, 2, 3].includes(version)) throw new Error('webhookVersion must be 1, 2 or 3');
  const retrySchedule = opts.webhookRetryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
  if (!retrySchedule.every((ms) => Number.isFinite(ms) && ms >= 0))
    throw new Error('webhookRetryScheduleMs must hold non-negative numbers');
  const processorTimeoutMs = opts.posProcessorTimeoutMs ?? 30_000;
  const adminToken = Buffer.from(opts.adminToken ?? DEFAULT_SANDBOX_ADMIN_TOKEN, 'utf8');
  if (adminToken.length < 16) throw new Error('adminToken must be at least 16 characters');
  const logger = opts.logger;
  const clock = new SandboxClock();
  let publicUrl = opts.publicUrl?.replace(/\/+$/, '') ?? '';
  let ownUrl = ''; // set once listening

  const build = (): State => {
    const ledger = new Ledger(clock);
    const faults = new RequestFaults();
    const webhookFaults = new WebhookFaults();
    const webhooks = new WebhookDispatcher(clock, webhookFaults, retrySchedule, logger);
    const router = new Router();
    const payments = new PaymentStore({ clock, ledger, webhooks, webhookUrlFor });
    const checkout = registerCheckout(router, payments, () => publicUrl);
    const direct = registerDirect(router, payments, () => publicUrl);
    registerTokens(router, payments);
    const virtualAccounts = registerVirtualAccounts(
      router,
      { clock, ledger, webhooks, checkout },
      { webhookUrlFor, version },
    );
    const mandates = registerMandates(router, { clock, ledger, payments });
    const posRemote = registerPosRemote(
      router,
      { clock, ledger },
      { completeAfterMs: opts.posRemoteCompleteAfterMs ?? DEFAULT_POS_REMOTE_COMPLETE_AFTER_MS },
    );
    registerTransactions(router, payments, () => posRemote.transactionRecords());
    registerPosTerminal(router, { clock, ledger }, { preAuthHoldMs: opts.posPreAuthHoldMs });
    const sms = registerSms(router, { clock });
    registerVending(router, { clock, ledger });
    return {
      clock,
      ledger,
      faults,
      webhookFaults,
      webhooks,
      router,
      requestLog: [],
      direct,
      posRemote,
      mandates,
      virtualAccounts,
      sms,
    };
  };

  let state = build();
  const reset = () => {
    const old = state;
    clock.clearTimers();
    state = build();
    void old.webhooks.close().catch(() => undefined);
  };
  const admin = createAdminRouter(
    () => state,
    async () => reset(),
  );

  function adminAuthorized(header: string | undefined): boolean {
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) return false;
    const given = Buffer.from(match[1], 'utf8');
    return given.length === adminToken.length && timingSafeEqual(given, adminToken);
  }

  /** The page routes (checkout modal, 3DS) take form posts, but only from the sandbox's own pages. */
  function sameOrigin(headers: IncomingMessage['headers']): boolean {
    const site = headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
    const origin = headers.origin;
    if (origin === undefined) return true; // not a browser, or a browser that says nothing cross-site
    return [publicUrl, ownUrl].some((own) => own !== '' && safeOrigin(own) === origin);
  }

  /** The path without trailing slashes, in linear time (a regex on a long run of slashes was quadratic). */
  function trimTrailingSlashes(pathname: string): string {
    let end = pathname.length;
    while (end > 0 && pathname.charCodeAt(end - 1) === 47) end--;
    return end === 0 ? '/' : pathname.slice(0, end);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const incomingId = req.headers['x-request-id'];
    const requestId =
      typeof incomingId === 'string' && /^[\w.:-]{1,100}$/.test(incomingId) ? incomingId : newRequestId();
    const method = (req.method ?? 'GET').toUpperCase();
    const path = trimTrailingSlashes(url.pathname);
    const started = Date.now();
    const st = state;
    const isAdmin = path === '/__admin' || path.startsWith('/__admin/');

    // The admin API authenticates before it reads a byte of the body.
    if (isAdmin && !adminAuthorized(req.headers.authorization))
      return send(res, fail(401, 'The admin API needs Authorization: Bearer <SANDBOX_ADMIN_TOKEN>'), requestId);

    let raw: Buffer;
    try {
      raw = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return send(res, fail(413, 'Request body too large'), requestId);
      throw err;
    }
    const parsed = parseBody(raw, req.headers['content-type']);
    const body = parsed?.body ?? {};
    const refValue = ['merchant_ref', 'transaction_reference', 'transaction_ref', 'reference']
      .map((k) => body[k])
      .find((v) => typeof v === 'string' || typeof v === 'number');
    const log = (status: RequestLogEntry['status']) => {
      if (isAdmin) return;
      st.requestLog.push({
        at: clock.iso(),
        method,
        path,
        status,
        ...(refValue === undefined ? {} : { reference: String(refValue) }),
      });
      if (st.requestLog.length > REQUEST_LOG_LIMIT) st.requestLog.splice(0, st.requestLog.length - REQUEST_LOG_LIMIT);
      logger?.info({ method, path, status, ms: Date.now() - started }, 'sandbox request');
    };

    const stateChanging = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
    const contentType = req.headers['content-type'];
    // Cross-site form guard: a browser on another site can post only forms (urlencoded, multipart,
    // text/plain) without a preflight, so API routes take a body only when it is declared JSON.
    const jsonRequired =
      stateChanging && (raw.length > 0 || contentType !== undefined) && !isJsonContentType(contentType);
    // What a handler sees of this request, admin (no secret key) or API.
    const contextFor = (params: Record<string, string>, form: boolean, secretKey: string): RequestContext => ({
      method,
      path,
      params,
      query: url.searchParams,
      body,
      form,
      secretKey,
      headers: req.headers,
    });

    if (isAdmin) {
      const m = admin.match(method, path);
      const reply: Reply = !adminAuthorized(req.headers.authorization)
        ? fail(401, 'The admin API needs Authorization: Bearer <SANDBOX_ADMIN_TOKEN>')
        : jsonRequired
          ? fail(415, 'Content-Type must be application/json')
          : !('route' in m)
            ? fail(m.allowed.length ? 405 : 404, m.allowed.length ? 'Method not allowed' : 'Unknown admin endpoint')
            : !parsed
              ? fail(400, 'Invalid JSON body')
              : await m.route.handler(contextFor(m.params, parsed.form, ''));
      return send(res, reply, requestId);
    }

    const fault = st.faults.take(method, path, url.search.slice(1));
    if (fault?.kind === 'latency') await new Promise((r) => setTimeout(r, fault.latencyMs ?? 1000));
    if (fault?.kind === 'error5xx') {
      const status = fault.status ?? 503;
      log(status);
      return send(res, fail(status, 'Service temporarily unavailable'), requestId);
    }
    if (fault?.kind === 'reset' || fault?.kind === 'drop-before-processing') {
      log('reset');
      req.socket.destroy();
      return;
    }

    let reply: Reply;
    const m = st.router.match(method, path);
    if (!('route' in m)) {
      reply = m.allowed.length ? fail(405, 'Method not allowed') : fail(404, 'Route not found');
    } else {
      const auth = authenticate(req.headers, m.route.group, keys);
      if (auth.reply) reply = auth.reply;
      else if (m.route.group === 'none' && stateChanging && !sameOrigin(req.headers))
        reply = fail(403, 'Cross-site form posts are refused');
      else if (m.route.group !== 'none' && jsonRequired) reply = fail(415, 'Content-Type must be application/json');
      else if (!parsed) reply = fail(400, 'Invalid JSON body');
      else {
        const ctx = contextFor(m.params, parsed.form, auth.key);
        // Every field first: the handler never looks anything up for a request that is malformed.
        reply = checkFields(m.route, ctx) ?? (await m.route.handler(ctx));
      }
    }

    if (fault?.kind === 'drop-after-processing') {
      // The state (and the ledger) changed; the caller never learns how.
      log('dropped');
      req.socket.destroy();
      return;
    }
    if (reply.hang) {
      log('hung');
      const timer = setTimeout(() => req.socket.destroy(), processorTimeoutMs);
      req.socket.once('close', () => clearTimeout(timer));
      return;
    }
    log(reply.status);
    send(res, reply, requestId);
  }

  // createSafeServer: a malformed target is a 400 before `handle` runs, and nothing thrown ends the process.
  const server = createSafeServer((req, res, url) =>
    handle(req, res, url).catch((err: unknown) => {
      logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'sandbox handler failed');
      send(res, fail(500, 'Internal sandbox error'), newRequestId());
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const reachableHost =
    host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  ownUrl = `http://${reachableHost}:${port}`;
  if (!publicUrl) publicUrl = ownUrl;
  clock.start();

  let closed: Promise<void> | undefined;
  return {
    url: ownUrl,
    port,
    get clock() {
      return clock;
    },
    ledger: (filter = {}) => {
      void clock.runDue(); // fires due timers (e.g. a POS remote completion) synchronously
      return state.ledger.list(filter);
    },
    deliveries: (filter = {}) => state.webhooks.deliveries(filter),
    requests: () => [...state.requestLog],
    routes: () => state.router.list(),
    reset,
    close: () =>
      (closed ??= (async () => {
        clock.stop();
        clock.clearTimers();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await state.webhooks.close().catch(() => undefined);
      })()),
  };
}
