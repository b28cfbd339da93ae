// The bench's stack, all real and local: a Temporal dev server (in memory), the claim-check
// PostgreSQL (embedded), and the sandbox, the webhook receiver, our worker and the baseline worker
// as processes of their own. The bench process itself is the client (our starters, raw Temporal calls).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../src/http/free-port';
import { startDevServer, type DevServer } from '../../src/stack/temporal-dev-server';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/claim-check/embedded';
import { loadConfig, type AppConfig } from '../../src/config/config';
import { closeStarters, connectStarters, type StarterContext } from '../../src/starters/connect';
import { DEFAULT_SANDBOX_ADMIN_TOKEN } from '../../src/sandbox';
import { ROOT, startNodeProcess, type BenchProcess } from './processes';
import { WORKFLOW_STACK_TRACES_PRELOAD } from '../../src/shared/workflow-stack-traces';

/** The heap cap production runs the worker with (deploy/k8s/worker-deployment.yaml's NODE_OPTIONS). */
export const WORKER_HEAP_MB = 768;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * Our worker and receiver run as production runs them: compiled (dist/workers/main.js with the
 * prebuilt workflow bundle and the production heap cap; dist/webhooks/main.js). `npm run build` first when dist is missing or older than src.
 */
export function ensureBuilt(log: (s: string) => void): void {
  const bundle = join(ROOT, 'dist', 'workflow-bundle.js');
  if (existsSync(bundle) && statSync(bundle).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  log('building dist/ and the workflow bundle (npm run build), as production runs the worker…');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

export const SECRET_KEY = 'sandbox_sk_local_development_key_0001';
/**
 * The baseline is another merchant account on the same sandbox: its notifications go to its own
 * receiver (bench/baseline/receiver.ts), never to ours, so our receiver and task queue do no work
 * for it (issue #25: the old harness sent them to our receiver, which started a holder each).
 */
export const BASELINE_SECRET_KEY = 'sandbox_sk_bench_baseline_merchant_0001';
/** The sandbox's two merchant accounts: ours (webhooks to our receiver) and the baseline's (to its own). */
export const sandboxMerchantsEnv = (receiverUrl: string, baselineReceiverUrl: string): Record<string, string> => ({
  SANDBOX_SECRET_KEYS: `${SECRET_KEY},${BASELINE_SECRET_KEY}`,
  SANDBOX_WEBHOOK_URL: `${receiverUrl}/webhooks`,
  SANDBOX_WEBHOOK_URLS: `${BASELINE_SECRET_KEY}=${baselineReceiverUrl}/webhooks`,
});

export const OURS_QUEUE = 'bench-ours';
export const BASELINE_QUEUE = 'bench-baseline';

export interface BenchStack {
  devServer: DevServer;
  sandboxUrl: string;
  receiverUrl: string;
  /** Environment our processes share (the worker's own task queue and health port are added per worker). */
  env: Record<string, string>;
  config: AppConfig;
  starters: StarterContext;
  /** A plain client (default data converter) for the baseline's workflows. */
  plain: Client;
  ours: BenchProcess;
  baseline: BenchProcess;
  sandbox: BenchProcess;
  receiver: BenchProcess;
  /** The baseline merchant's own webhook receiver (verifies and answers 200, nothing else). */
  baselineReceiver: BenchProcess;
  baselineReceiverUrl: string;
  /** The claim-check PostgreSQL's wrapper pid (treeCpuMs counts its processes). */
  postgresPid: number;
  /** Starts another of our workers (own process) on `taskQueue` with extra env (tuning). */
  startOurWorker(taskQueue: string, extraEnv?: Record<string, string>): Promise<BenchProcess>;
  stop(): Promise<void>;
}

const httpOk = (url: string) => async () => (await fetch(url)).ok;

export async function startBenchStack(opts: {
  log: (line: string) => void;
  posRemoteCompleteAfterMs: number;
  workerEnv?: Record<string, string>;
  /** Our processes with production's default configuration (log level info, schedules on), not the bench's tuning. */
  productionConfig?: boolean;
  /** Extra node flags for our workers (e.g. --cpu-prof to see where a flow's CPU goes). */
  workerNodeArgs?: string[];
  /** The same for the baseline worker. */
  baselineNodeArgs?: string[];
  /** Node options for our receiver (e.g. `--cpu-prof` from `npm run bench:profile -- … receiver`). */
  receiverNodeArgs?: string[];
}): Promise<BenchStack> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    opts.log('starting the Temporal dev server (in memory)…');
    const devServer = await startDevServer({ port: 0, uiPort: null, namespace: 'default' });
    stops.push(() => devServer.stop());

    const pgDir = await mkdtemp(join(tmpdir(), 'bench-pg-'));
    stops.push(() => rm(pgDir, { recursive: true, force: true }));
    const pgPort = await freePort();
    const pg: EmbeddedPostgres = await startEmbeddedPostgres({
      dataDir: join(pgDir, 'data'),
      port: pgPort,
      password: 'bench',
      database: 'claimcheck',
    });
    stops.push(() => pg.stop());

    const [sandboxPort, receiverPort, baselineReceiverPort] = [await freePort(), await freePort(), await freePort()];
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    const receiverUrl = `http://127.0.0.1:${receiverPort}`;
    const baselineReceiverUrl = `http://127.0.0.1:${baselineReceiverPort}`;
    const env: Record<string, string> = {
      NODE_ENV: 'development',
      TEMPORAL_ADDRESS: devServer.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_EXTERNAL: 'true',
      TEMPORAL_TASK_QUEUE: OURS_QUEUE,
      PAYMENTS_BASE_URL: sandboxUrl,
      PAYMENTS_SECRET_KEY: SECRET_KEY,
      CLAIM_CHECK_DATABASE_URL: pg.url,
      CLAIM_CHECK_EMBEDDED: 'false',
      METRICS_PORT: 'off',
      OTEL_SDK_DISABLED: 'true',
      // The bench's tuning: quieter logs and no schedules. `--production-config` keeps the
      // defaults production starts with (log level info, the schedules on).
      ...(opts.productionConfig
        ? {}
        : { LOG_LEVEL: 'warn', VA_ERROR_LOG_SWEEP_EVERY_S: '0', RECONCILIATION_SCHEDULE: 'false' }),
    };
    const config = loadConfig({ ...env, WEBHOOK_PORT: String(receiverPort), SANDBOX_ENABLED: 'false' });

    opts.log('starting the sandbox and the webhook receiver (own processes)…');
    const sandbox = await startNodeProcess(
      'sandbox',
      'src/sandbox/main.ts',
      {
        SANDBOX_PORT: String(sandboxPort),
        ...sandboxMerchantsEnv(receiverUrl, baselineReceiverUrl),
        SANDBOX_QUIET: 'true',
        SANDBOX_POS_REMOTE_COMPLETE_AFTER_MS: String(opts.posRemoteCompleteAfterMs),
      },
      /listening on/,
    );
    stops.push(() => sandbox.stop());
    // Our receiver, like our worker, runs as production runs it: compiled (deploy/k8s's
    // `node dist/webhooks/main.js`), not under tsx.
    ensureBuilt(opts.log);
    const receiver = await startNodeProcess(
      'receiver',
      'dist/webhooks/main.js',
      { ...env, WEBHOOK_PORT: String(receiverPort), WEBHOOK_HOST: '127.0.0.1' },
      httpOk(`${receiverUrl}/readyz`),
      { compiled: true, nodeArgs: opts.receiverNodeArgs },
    );
    stops.push(() => receiver.stop());
    const baselineReceiver = await startNodeProcess(
      'baseline receiver',
      'bench/baseline/receiver.ts',
      { PAYMENTS_SECRET_KEY: BASELINE_SECRET_KEY, BASELINE_RECEIVER_PORT: String(baselineReceiverPort) },
      /baseline receiver listening/,
    );
    stops.push(() => baselineReceiver.stop());

    const startOurWorker = async (taskQueue: string, extraEnv: Record<string, string> = {}) => {
      const healthPort = await freePort();
      const w = await startNodeProcess(
        `worker ${taskQueue}`,
        'dist/workers/main.js',
        {
          ...env,
          ...opts.workerEnv,
          ...extraEnv,
          TEMPORAL_TASK_QUEUE: taskQueue,
          HEALTH_PORT: String(healthPort),
          HEALTH_HOST: '127.0.0.1',
        },
        httpOk(`http://127.0.0.1:${healthPort}/readyz`),
        {
          timeoutMs: 180_000,
          compiled: true,
          // As production starts it (PRODUCTION_WORKER_COMMAND): with the stack-trace preload.
          nodeArgs: [
            `--max-old-space-size=${WORKER_HEAP_MB}`,
            '--require',
            WORKFLOW_STACK_TRACES_PRELOAD,
            ...(opts.workerNodeArgs ?? []),
          ],
        },
      );
      stops.push(() => w.stop());
      return w;
    };
    opts.log('starting our worker and the baseline worker (own processes; each bundles its workflows)…');
    const [ours, baseline] = await Promise.all([
      startOurWorker(OURS_QUEUE),
      startNodeProcess(
        'baseline worker',
        'bench/baseline/worker.ts',
        {
          TEMPORAL_ADDRESS: devServer.address,
          TEMPORAL_TASK_QUEUE: BASELINE_QUEUE,
          PAYMENTS_BASE_URL: sandboxUrl,
          PAYMENTS_SECRET_KEY: BASELINE_SECRET_KEY,
        },
        /baseline worker started/,
        {
          timeoutMs: 180_000,
          nodeArgs: [`--max-old-space-size=${WORKER_HEAP_MB}`, ...(opts.baselineNodeArgs ?? [])],
        },
      ),
    ]);
    stops.push(() => baseline.stop());

    const starters = await connectStarters(config);
    stops.push(() => closeStarters(starters));
    const plainConnection = await Connection.connect({ address: devServer.address });
    stops.push(() => plainConnection.close());
    const plain = new Client({ connection: plainConnection, namespace: 'default' });
    return {
      devServer,
      sandboxUrl,
      receiverUrl,
      env,
      config,
      starters,
      plain,
      ours,
      baseline,
      sandbox,
      receiver,
      baselineReceiver,
      baselineReceiverUrl,
      postgresPid: pg.pid,
      startOurWorker,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The sandbox's admin API (development token). */
export async function sandboxAdmin(
  stack: Pick<BenchStack, 'sandboxUrl'>,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(`${stack.sandboxUrl}/__admin${path}`, {
    method,
    headers: { authorization: `Bearer ${DEFAULT_SANDBOX_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`sandbox admin ${method} ${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data?: unknown }).data;
}
