// The worker as its own process, as production runs it: `node dist/workers/main.js` (or
// `src/workers/main.ts` under tsx), configured only through the environment, like chaos/stack.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/config';
import { EMBEDDED_DEFAULTS } from '../../src/config/config';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { WORKFLOW_STACK_TRACES_PRELOAD } from '../../src/shared/workflow-stack-traces';
import { BUILT } from './build';

export interface WorkerProcess {
  name: string;
  child: ChildProcess;
  /** Everything it printed (pino JSON lines and anything else). */
  output(): string;
  /** Resolves at its `worker started` line; rejects if it exits first or does not start in time. */
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The environment a worker process of `config` needs (the sandbox at `paymentsBaseUrl`). */
export function workerEnvironment(
  config: AppConfig,
  paymentsBaseUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    TEMPORAL_ADDRESS: config.temporal.address,
    TEMPORAL_NAMESPACE: config.temporal.namespace,
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    PAYMENTS_BASE_URL: paymentsBaseUrl,
    PAYMENTS_SECRET_KEY: EMBEDDED_DEFAULTS.secretKey,
    PAYMENTS_TIMEOUT_MS: String(config.payments.timeoutMs),
    CLAIM_CHECK_DATABASE_URL: config.claimCheck.databaseUrl,
    CLAIM_CHECK_EMBEDDED: 'false',
    // Tests share one dev server: no Schedules left firing into a test's task queue after it stopped.
    VA_ERROR_LOG_SWEEP_EVERY_S: '0',
    RECONCILIATION_SCHEDULE: 'false',
    WORKER_VERSIONING: config.deployment.versioning ? 'on' : 'off',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

export function startWorkerProcess(
  name: string,
  env: Record<string, string>,
  entry: 'dist' | 'src' | { distDir: string } = 'dist',
  readyTimeoutMs = 60_000,
): WorkerProcess {
  // { distDir }: a copy of dist/ with another workflow bundle (another version's image).
  const main = typeof entry === 'object' ? join(entry.distDir, 'workers', 'main.js') : BUILT.workerMain;
  const args =
    entry === 'src'
      ? ['--import', 'tsx', join(PROJECT_ROOT, 'src', 'workers', 'main.ts')]
      : ['--require', WORKFLOW_STACK_TRACES_PRELOAD, main]; // as PRODUCTION_WORKER_COMMAND
  const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const onData = (d: Buffer) => (out += d.toString('utf8'));
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} not started within ${readyTimeoutMs} ms:\n${out}`)),
      readyTimeoutMs,
    );
    const check = setInterval(() => {
      if (/"msg":"worker started"/.test(out)) {
        clearTimeout(timer);
        clearInterval(check);
        resolve();
      }
    }, 50);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      clearInterval(check);
      reject(new Error(`${name} exited (${code ?? signal}) before it started:\n${out}`));
    });
  });
  ready.catch(() => undefined);
  return { name, child, output: () => out, ready, exited };
}

/** SIGTERM (graceful), SIGKILL after `killAfterMs`; resolves when it has exited. */
export async function stopWorkerProcess(
  w: WorkerProcess,
  killAfterMs = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return w.exited;
  w.child.kill('SIGTERM');
  const timer = setTimeout(() => w.child.kill('SIGKILL'), killAfterMs);
  const result = await w.exited;
  clearTimeout(timer);
  return result;
}
