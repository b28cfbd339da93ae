// One configuration, parsed once from the environment with zod.
// Bad config fails at start with the variable's name and the rule it breaks.
import { z } from 'zod';

/** Only for the embedded stack: a sandbox key and a dev encryption key, never valid in production. */
export const EMBEDDED_DEFAULTS = {
  baseUrl: 'http://127.0.0.1:4010',
  secretKey: 'sandbox_sk_local_development_key_0001',
  encryptionKeys: 'dev-2026:ZGV2LW9ubHktcGF5bG9hZC1rZXktMzItYnl0ZXMhISE=',
  codecToken: 'dev-codec-token',
} as const;

export const KNOWN_PRODUCTION_HOSTS = ['api-d.squadco.com'];

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const bool = (fallback: boolean) =>
  z.enum(['true', 'false', '1', '0']).default(fallback ? 'true' : 'false').transform((v) => v === 'true' || v === '1');
const optionalPath = z.string().regex(/^\//, 'must start with /').optional();

const encryptionKeyList = z
  .string()
  .min(1)
  .transform((raw, ctx) => {
    const keys: { id: string; key: Buffer }[] = [];
    for (const entry of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
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
    PAYMENTS_ENVIRONMENT: z.enum(['test', 'production']).default('test'),
    PAYMENTS_BASE_URL: z.url({ protocol: /^https?$/ }).default(EMBEDDED_DEFAULTS.baseUrl),
    PAYMENTS_SECRET_KEY: z.string().min(8, 'must be at least 8 characters').default(EMBEDDED_DEFAULTS.secretKey),
    PAYMENTS_SANDBOX_KEY_PREFIX: z.string().min(1).default('sandbox_sk_'),
    PAYMENTS_PRODUCTION_HOSTS: z.string().default(KNOWN_PRODUCTION_HOSTS.join(',')),
    PAYMENTS_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
    PAYMENTS_PATH_SIMULATE_TRANSFER: optionalPath,
    PAYMENTS_PATH_CHARGE_TOKEN: optionalPath,
    PAYMENTS_PATH_CANCEL_TOKEN: optionalPath,
    PAYMENTS_PATH_QUERY_TRANSACTIONS: optionalPath,
    PAYMENTS_PATH_VERIFY_TRANSACTION: optionalPath,
    PAYMENTS_PATH_TERMINAL_CONFIG: optionalPath,
    PAYMENTS_PATH_KEY_EXCHANGE: optionalPath,
    PAYMENTS_PATH_POS_TRANSACTION: optionalPath,
    PAYMENTS_PATH_POS_REQUERY: optionalPath,

    TEMPORAL_ADDRESS: z.string().regex(/^[^:\s]+:\d+$/, 'must be host:port').default('127.0.0.1:7233'),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('payments'),
    TEMPORAL_UI_PORT: port(8233),
    TEMPORAL_DATA_DIR: z.string().min(1).default('.data'),

    SANDBOX_ENABLED: bool(true),
    SANDBOX_PORT: port(4010),
    WEBHOOK_PORT: port(4020),
    WEBHOOK_HOST: z.string().min(1).default('127.0.0.1'),
    CODEC_PORT: port(4030),
    CODEC_HOST: z.string().min(1).default('127.0.0.1'),
    CODEC_SERVER_TOKEN: z.string().min(8, 'must be at least 8 characters').default(EMBEDDED_DEFAULTS.codecToken),
    // Default: the Web UI's own origins on TEMPORAL_UI_PORT.
    CODEC_CORS_ORIGINS: z.string().optional(),

    PAYLOAD_ENCRYPTION_KEYS: encryptionKeyList.prefault(EMBEDDED_DEFAULTS.encryptionKeys),
    PAYLOAD_ENCRYPTION_KEY_ID: z.string().optional(),

    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((env, ctx) => {
    const host = new URL(env.PAYMENTS_BASE_URL).hostname;
    const productionHosts = env.PAYMENTS_PRODUCTION_HOSTS.split(',').map((h) => h.trim()).filter(Boolean);
    const onProductionHost = productionHosts.includes(host);
    const sandboxKey = env.PAYMENTS_SECRET_KEY.startsWith(env.PAYMENTS_SANDBOX_KEY_PREFIX);
    if (onProductionHost && env.PAYMENTS_ENVIRONMENT !== 'production') {
      ctx.addIssue({ code: 'custom', path: ['PAYMENTS_ENVIRONMENT'], message: `must be "production" when PAYMENTS_BASE_URL points at the production host ${host}` });
    }
    if (env.PAYMENTS_ENVIRONMENT === 'production') {
      if (sandboxKey) {
        ctx.addIssue({ code: 'custom', path: ['PAYMENTS_SECRET_KEY'], message: `a sandbox key (prefix ${env.PAYMENTS_SANDBOX_KEY_PREFIX}) is refused on the production host` });
      }
      if (env.PAYLOAD_ENCRYPTION_KEYS.some((k) => EMBEDDED_DEFAULTS.encryptionKeys.startsWith(`${k.id}:`))) {
        ctx.addIssue({ code: 'custom', path: ['PAYLOAD_ENCRYPTION_KEYS'], message: 'the embedded development key is refused in production' });
      }
      if (env.CODEC_SERVER_TOKEN === EMBEDDED_DEFAULTS.codecToken) {
        ctx.addIssue({ code: 'custom', path: ['CODEC_SERVER_TOKEN'], message: 'the embedded development token is refused in production' });
      }
    } else if (!sandboxKey) {
      ctx.addIssue({ code: 'custom', path: ['PAYMENTS_SECRET_KEY'], message: `a live key is refused on the test host: test keys start with ${env.PAYMENTS_SANDBOX_KEY_PREFIX}` });
    }
    if (env.PAYLOAD_ENCRYPTION_KEY_ID && !env.PAYLOAD_ENCRYPTION_KEYS.some((k) => k.id === env.PAYLOAD_ENCRYPTION_KEY_ID)) {
      ctx.addIssue({ code: 'custom', path: ['PAYLOAD_ENCRYPTION_KEY_ID'], message: 'must name one of the keys in PAYLOAD_ENCRYPTION_KEYS' });
    }
  });

export type Env = z.output<typeof envSchema>;

export interface AppConfig {
  payments: {
    environment: 'test' | 'production';
    baseUrl: string;
    /** Never log or copy this outside config and the HTTP client. */
    secretKey: string;
    timeoutMs: number;
    paths: Partial<Record<
      | 'simulateTransfer' | 'chargeToken' | 'cancelToken' | 'queryTransactions' | 'verifyTransaction'
      | 'terminalConfig' | 'keyExchange' | 'posTransaction' | 'posRequery',
      string
    >>;
  };
  temporal: { address: string; namespace: string; taskQueue: string; uiPort: number; dataDir: string };
  sandbox: { enabled: boolean; port: number };
  webhooks: { host: string; port: number };
  codec: { host: string; port: number; token: string; corsOrigins: string[] };
  encryption: { keys: { id: string; key: Buffer }[]; activeKeyId: string };
  logLevel: Env['LOG_LEVEL'];
}

export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i.variable}: ${i.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function definedOnly<T extends Record<string, string | undefined>>(o: T): Partial<Record<keyof T, string>> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<Record<keyof T, string>>;
}

/** Parses the environment; throws ConfigError naming each bad variable and its rule. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  // Empty strings count as unset, so `FOO=` in a .env file falls back to the default.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => ({
        variable: String(issue.path[0] ?? 'config'),
        // Never echo the received value: it may be a secret.
        message: issue.message,
      })),
    );
  }
  const env = parsed.data;
  return {
    payments: {
      environment: env.PAYMENTS_ENVIRONMENT,
      baseUrl: env.PAYMENTS_BASE_URL.replace(/\/+$/, ''),
      secretKey: env.PAYMENTS_SECRET_KEY,
      timeoutMs: env.PAYMENTS_TIMEOUT_MS,
      paths: definedOnly({
        simulateTransfer: env.PAYMENTS_PATH_SIMULATE_TRANSFER,
        chargeToken: env.PAYMENTS_PATH_CHARGE_TOKEN,
        cancelToken: env.PAYMENTS_PATH_CANCEL_TOKEN,
        queryTransactions: env.PAYMENTS_PATH_QUERY_TRANSACTIONS,
        verifyTransaction: env.PAYMENTS_PATH_VERIFY_TRANSACTION,
        terminalConfig: env.PAYMENTS_PATH_TERMINAL_CONFIG,
        keyExchange: env.PAYMENTS_PATH_KEY_EXCHANGE,
        posTransaction: env.PAYMENTS_PATH_POS_TRANSACTION,
        posRequery: env.PAYMENTS_PATH_POS_REQUERY,
      }),
    },
    temporal: {
      address: env.TEMPORAL_ADDRESS,
      namespace: env.TEMPORAL_NAMESPACE,
      taskQueue: env.TEMPORAL_TASK_QUEUE,
      uiPort: env.TEMPORAL_UI_PORT,
      dataDir: env.TEMPORAL_DATA_DIR,
    },
    sandbox: { enabled: env.SANDBOX_ENABLED, port: env.SANDBOX_PORT },
    webhooks: { host: env.WEBHOOK_HOST, port: env.WEBHOOK_PORT },
    codec: {
      host: env.CODEC_HOST,
      port: env.CODEC_PORT,
      token: env.CODEC_SERVER_TOKEN,
      corsOrigins: (env.CODEC_CORS_ORIGINS ?? `http://localhost:${env.TEMPORAL_UI_PORT},http://127.0.0.1:${env.TEMPORAL_UI_PORT}`)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    },
    encryption: {
      keys: env.PAYLOAD_ENCRYPTION_KEYS,
      // The first key encrypts unless another is named; all listed keys decrypt.
      activeKeyId: env.PAYLOAD_ENCRYPTION_KEY_ID ?? env.PAYLOAD_ENCRYPTION_KEYS[0].id,
    },
    logLevel: env.LOG_LEVEL,
  };
}
