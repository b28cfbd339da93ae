// The sandbox as its own process: `npx tsx src/sandbox/main.ts` (or `npm run sandbox`).
// Environment: SANDBOX_PORT (4010), SANDBOX_HOST (127.0.0.1), SANDBOX_SECRET_KEYS (comma list),
// SANDBOX_WEBHOOK_URL (http://127.0.0.1:4020/webhooks; 'none' sends no webhooks),
// SANDBOX_WEBHOOK_URLS (key=url pairs: a merchant account's own dashboard URL, 'none' for none),
// SANDBOX_WEBHOOK_VERSION (2), SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS (comma list), SANDBOX_PUBLIC_URL,
// SANDBOX_POS_REMOTE_COMPLETE_AFTER_MS (4000), SANDBOX_POS_PROCESSOR_TIMEOUT_MS (30000),
// SANDBOX_ADMIN_TOKEN (the /__admin bearer token; development default if unset),
// SANDBOX_QUIET=true to stop the one-line-per-request log.
import 'dotenv/config';
import { startSandbox, type SandboxLogger, type SandboxOptions } from './index';
import { productionModeOf } from '../config/config';

const DEFAULT_WEBHOOK_URL = 'http://127.0.0.1:4020/webhooks';

function numberList(name: string, value: string | undefined): number[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const list = value.split(',').map((s) => Number(s.trim()));
  if (list.some((n) => !Number.isFinite(n) || n < 0))
    throw new Error(`${name} must be a comma list of non-negative numbers`);
  return list;
}

function integer(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
}

/** SANDBOX_WEBHOOK_URLS: `key=url` pairs, comma-separated; `key=none` sends that merchant none. */
function webhookUrlsByKey(raw: string | undefined): Record<string, string | null> | undefined {
  if (!raw?.trim()) return undefined;
  const byKey: Record<string, string | null> = {};
  for (const pair of raw.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error('SANDBOX_WEBHOOK_URLS must hold key=url pairs, comma-separated');
    const url = pair.slice(at + 1).trim();
    byKey[pair.slice(0, at).trim()] = url === 'none' ? null : url;
  }
  return byKey;
}

export function optionsFromEnv(env: NodeJS.ProcessEnv): SandboxOptions {
  const version = integer('SANDBOX_WEBHOOK_VERSION', env.SANDBOX_WEBHOOK_VERSION, 2);
  if (version !== 1 && version !== 2 && version !== 3) throw new Error('SANDBOX_WEBHOOK_VERSION must be 1, 2 or 3');
  const webhook = env.SANDBOX_WEBHOOK_URL ?? DEFAULT_WEBHOOK_URL;
  return {
    port: integer('SANDBOX_PORT', env.SANDBOX_PORT, 4010),
    host: env.SANDBOX_HOST || '127.0.0.1',
    adminToken: env.SANDBOX_ADMIN_TOKEN || undefined,
    secretKeys: env.SANDBOX_SECRET_KEYS?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    webhookUrl: webhook === '' || webhook === 'none' ? undefined : webhook,
    webhookUrls: webhookUrlsByKey(env.SANDBOX_WEBHOOK_URLS),
    webhookVersion: version,
    webhookRetryScheduleMs: numberList('SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS', env.SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS),
    publicUrl: env.SANDBOX_PUBLIC_URL || undefined,
    posRemoteCompleteAfterMs: integer(
      'SANDBOX_POS_REMOTE_COMPLETE_AFTER_MS',
      env.SANDBOX_POS_REMOTE_COMPLETE_AFTER_MS,
      4_000,
    ),
    posProcessorTimeoutMs: integer('SANDBOX_POS_PROCESSOR_TIMEOUT_MS', env.SANDBOX_POS_PROCESSOR_TIMEOUT_MS, 30_000),
  };
}

/** One JSON line per event on stdout; the sandbox passes only method, path, status, duration and references. */
const consoleLogger: SandboxLogger = {
  info: (obj: unknown, msg?: unknown) =>
    console.log(JSON.stringify({ level: 'info', time: new Date().toISOString(), msg, ...(obj as object) })),
  warn: (obj: unknown, msg?: unknown) =>
    console.warn(JSON.stringify({ level: 'warn', time: new Date().toISOString(), msg, ...(obj as object) })),
};

async function main(): Promise<void> {
  // A stand-in for the payments service with development keys and an admin API: never in production.
  if (productionModeOf(process.env))
    throw new Error(
      'the payments sandbox does not run in production mode (DEPLOYMENT, NODE_ENV or PAYMENTS_ENVIRONMENT is production)',
    );
  const options = optionsFromEnv(process.env);
  const sandbox = await startSandbox({
    ...options,
    logger: process.env.SANDBOX_QUIET === 'true' ? undefined : consoleLogger,
  });
  console.log(`payments sandbox listening on ${sandbox.url}`);
  console.log(
    `  webhooks → ${options.webhookUrl ?? '(none)'} (credit notifications signed as version ${options.webhookVersion}); admin API: ${sandbox.url}/__admin (bearer SANDBOX_ADMIN_TOKEN)`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`payments sandbox: ${signal}, shutting down`);
    sandbox.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
