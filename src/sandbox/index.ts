// A local stand-in for the payments service, built from the interface spec
// (../shared/spec/payments-service-interface.md) and docs/choices.md: every endpoint group A-H,
// the payment and credit webhooks (E-1/E-2), a ledger of money movements, a controllable clock, fault injection and an
// admin API. In memory; starts in milliseconds; runs in-process (tests) or as its own process
// (main.ts). See docs/sandbox.md for the test data and the admin API.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSafeServer } from '../http/safe-server';
import { createAdminRouter } from './admin';
import { registerCheckout } from './checkout';
import { SandboxClock } from './clock';
import { registerDirect } from './direct';
import { RequestFaults, WebhookFaults } from './faults';
import {
  DEFAULT_SANDBOX_ADMIN_TOKEN,
  DEFAULT_SANDBOX_KEY,
  fail,
  newRequestId,
  Router,
  SANDBOX_KEY_PREFIX,
  send,
  type RequestLogEntry,
  type SandboxLogger,
} from './http';
import { Ledger, type LedgerEntry } from './ledger';
import { registerMandates } from './mandates';
import { PaymentStore } from './payments';
import { DEFAULT_POS_REMOTE_COMPLETE_AFTER_MS, registerPosRemote } from './pos-remote';
import { registerPosTerminal } from './pos-terminal';
import { RequestHandler, type SandboxState } from './requests';
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

export type { SandboxLogger } from './http';

export interface SandboxOptions {
  /** 0 = a free port (the default, for tests); main.ts uses SANDBOX_PORT (default 4010). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Accepted Bearer keys; each must start with sandbox_sk_. Default ['sandbox_sk_local_development_key_0001']. */
  secretKeys?: string[];
  /** The bearer token the admin API (/__admin) requires. Default DEFAULT_SANDBOX_ADMIN_TOKEN (development only). */
  adminToken?: string;
  /** Where the webhooks are POSTed (the "dashboard" webhook URL). Default none: no webhooks sent, except to a request's own webhook_url. */
  webhookUrl?: string;
  /**
   * A merchant account's own dashboard webhook URL, by secret key (null: that account sends none),
   * in place of `webhookUrl`: two merchants on one sandbox (the bench's baseline) never get each
   * other's notifications.
   */
  webhookUrls?: Record<string, string | null>;
  /** Credit notifications' signing version (E-2). Default 2. */
  webhookVersion?: 1 | 2 | 3;
  /** Delays before each retry of an unacknowledged webhook, on the sandbox clock. Default 5 s, 30 s, 2 min, 10 min, 1 h. */
  webhookRetryScheduleMs?: number[];
  /** Base of checkout_url and auth_url. Default http://host:port. */
  publicUrl?: string;
  /** The simulated terminal completes a POS remote request this long after creation (sandbox clock). Default 4000. */
  posRemoteCompleteAfterMs?: number;
  /** How long (real time) a terminal transaction with a malformed card_sequence_number hangs before its socket is closed. Default 30000. */
  posProcessorTimeoutMs?: number;
  /** How long an approved Pre-Authorization holds the funds before a Completion is refused as expired (sandbox clock). Default 7 days. */
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

/** The options checked, with their defaults. */
interface Settings {
  keys: string[];
  webhookUrlFor: (key: string) => string | undefined;
  version: 1 | 2 | 3;
  retrySchedule: number[];
  adminToken: Buffer;
}

const HTTP_URL = /^https?:\/\/[^\s]+$/;

function settingsFrom(opts: SandboxOptions): Settings {
  const keys = opts.secretKeys && opts.secretKeys.length > 0 ? [...opts.secretKeys] : [DEFAULT_SANDBOX_KEY];
  if (keys.some((k) => !k.startsWith(SANDBOX_KEY_PREFIX) || k.length <= SANDBOX_KEY_PREFIX.length))
    throw new Error(`sandbox secret keys must start with ${SANDBOX_KEY_PREFIX}`);
  if (opts.webhookUrl !== undefined && !HTTP_URL.test(opts.webhookUrl))
    throw new Error('webhookUrl must be an http(s) URL');
  for (const [key, url] of Object.entries(opts.webhookUrls ?? {})) {
    if (!keys.includes(key)) throw new Error('webhookUrls: each key must be one of the secret keys');
    if (url !== null && !HTTP_URL.test(url)) throw new Error('webhookUrls: each URL must be an http(s) URL');
  }
  const perKey = new Map(Object.entries(opts.webhookUrls ?? {}));
  const version = opts.webhookVersion ?? 2;
  if (![1, 2, 3].includes(version)) throw new Error('webhookVersion must be 1, 2 or 3');
  const retrySchedule = opts.webhookRetryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
  if (!retrySchedule.every((ms) => Number.isFinite(ms) && ms >= 0))
    throw new Error('webhookRetryScheduleMs must hold non-negative numbers');
  const adminToken = Buffer.from(opts.adminToken ?? DEFAULT_SANDBOX_ADMIN_TOKEN, 'utf8');
  if (adminToken.length < 16) throw new Error('adminToken must be at least 16 characters');
  return {
    keys,
    webhookUrlFor: (key) => (perKey.has(key) ? (perKey.get(key) ?? undefined) : opts.webhookUrl),
    version,
    retrySchedule,
    adminToken,
  };
}

/** A fresh sandbox generation: every endpoint group registered on a new router, over new stores. */
function buildState(clock: SandboxClock, opts: SandboxOptions, s: Settings, publicUrl: () => string): SandboxState {
  const { webhookUrlFor, version } = s;
  const ledger = new Ledger(clock);
  const faults = new RequestFaults();
  const webhookFaults = new WebhookFaults();
  const webhooks = new WebhookDispatcher(clock, webhookFaults, s.retrySchedule, opts.logger);
  const router = new Router();
  const payments = new PaymentStore({ clock, ledger, webhooks, webhookUrlFor });
  const checkout = registerCheckout(router, payments, publicUrl);
  const direct = registerDirect(router, payments, publicUrl);
  registerTokens(router, payments);
  const virtualAccounts = registerVirtualAccounts(
    router,
    { clock, ledger, webhooks, checkout },
    { webhookUrlFor, version },
  );
  const mandates = registerMandates(router, { clock, ledger, payments });
  const completeAfterMs = opts.posRemoteCompleteAfterMs ?? DEFAULT_POS_REMOTE_COMPLETE_AFTER_MS;
  const posRemote = registerPosRemote(router, { clock, ledger }, { completeAfterMs });
  registerTransactions(router, payments, () => posRemote.transactionRecords());
  registerPosTerminal(router, { clock, ledger }, { preAuthHoldMs: opts.posPreAuthHoldMs });
  const sms = registerSms(router, { clock });
  registerVending(router, { clock, ledger });
  const requestLog: RequestLogEntry[] = [];
  return {
    clock,
    ledger,
    faults,
    webhookFaults,
    webhooks,
    router,
    requestLog,
    direct,
    posRemote,
    mandates,
    virtualAccounts,
    sms,
  };
}

/** Listens on the port (0: a free one) and host; resolves once listening. */
async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const host = opts.host ?? '127.0.0.1';
  const settings = settingsFrom(opts);
  const logger = opts.logger;
  const clock = new SandboxClock();
  let publicUrl = opts.publicUrl?.replace(/\/+$/, '') ?? '';
  let ownUrl = ''; // set once listening

  let state = buildState(clock, opts, settings, () => publicUrl);
  const reset = () => {
    const old = state;
    clock.clearTimers();
    state = buildState(clock, opts, settings, () => publicUrl);
    void old.webhooks.close().catch(() => undefined);
  };
  const handler = new RequestHandler({
    state: () => state,
    admin: createAdminRouter(
      () => state,
      async () => reset(),
    ),
    clock,
    keys: settings.keys,
    adminToken: settings.adminToken,
    processorTimeoutMs: opts.posProcessorTimeoutMs ?? 30_000,
    ownUrls: () => [publicUrl, ownUrl],
    logger,
  });
  // createSafeServer: a malformed target is a 400 before `handle` runs, and nothing thrown ends the process.
  const server = createSafeServer((req, res, url) =>
    handler.handle(req, res, url).catch((err: unknown) => {
      logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'sandbox handler failed');
      send(res, fail(500, 'Internal sandbox error'), newRequestId());
    }),
  );
  const port = await listen(server, opts.port ?? 0, host);
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
