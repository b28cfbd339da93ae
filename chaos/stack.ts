// The chaos run's own stack, every piece in its own process: a file-backed Temporal dev server
// (SQLite in a temp dir, free ports, restartable on the same file) or, with `cluster`, the local
// multi-service cluster (src/stack/temporal-cluster.ts, docs/cluster.md), an embedded PostgreSQL for
// the claim-check store, and the project's sandbox, webhook receiver, codec server and worker
// started from their own entry points (src/*/main.ts) with environment configuration.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EMBEDDED_DEFAULTS } from '../src/config/config';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/claim-check/embedded';
import { DEFAULT_SANDBOX_ADMIN_TOKEN } from '../src/sandbox';
import { freePort } from '../src/http/free-port';
import { startDevServer, type DevServer } from '../src/stack/temporal-dev-server';
import { endChild, startTemporalCluster, type TemporalCluster } from '../src/stack/temporal-cluster';
import { sleep } from './util';
import { resolveBuildId } from '../src/workers/versioning';

const ROOT = resolve(__dirname, '..');

export interface StackOptions {
  /** Keep logs and data here; a fresh temp dir when absent. */
  dir?: string;
  /** Sandbox: the simulated terminal answers a POS remote request this long after creation (the harness usually decides earlier). */
  posRemoteCompleteAfterMs?: number;
  log?: (line: string) => void;
  /** More environment for every process (the merchant-event endpoint's NOTIFY_URL and NOTIFY_SECRET). */
  env?: Record<string, string>;
  /** Run on the local multi-service cluster (mTLS, PostgreSQL) instead of the dev server. */
  cluster?: boolean;
  /** Worker processes on the task queue (default 1). */
  workers?: number;
}

/** One of the project's services as a child process (node --import tsx <entry>). */
export class ServiceProcess {
  child?: ChildProcess;
  private out: WriteStream;
  starts = 0;
  constructor(
    readonly name: string,
    private readonly entry: string,
    private readonly env: NodeJS.ProcessEnv,
    logFile: string,
    private readonly readyLine: RegExp,
  ) {
    this.out = createWriteStream(logFile, { flags: 'a' });
  }

  /** Spawns the process and waits until it prints its ready line. */
  async start(timeoutMs = 120_000): Promise<void> {
    this.starts++;
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, this.entry)], {
      cwd: ROOT,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.out.write(`\n==== start #${this.starts} pid ${child.pid} at ${new Date().toISOString()} ====\n`);
    await new Promise<void>((done, fail) => {
      let buffer = '';
      let ready = false;
      const timer = setTimeout(() => fail(new Error(`${this.name} not ready within ${timeoutMs} ms`)), timeoutMs);
      const onData = (d: Buffer) => {
        this.out.write(d);
        if (ready) return;
        buffer = (buffer + d.toString('utf8')).slice(-8192);
        if (this.readyLine.test(buffer)) {
          ready = true;
          clearTimeout(timer);
          done();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code, signal) => {
        this.out.write(`\n==== exit code ${code} signal ${signal} ====\n`);
        if (!ready) {
          clearTimeout(timer);
          fail(new Error(`${this.name} exited (${code ?? signal}) before it was ready; see its log`));
        }
      });
    });
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL: no shutdown, no goodbye to the server; in-flight activities are simply lost. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child && this.running) await endChild(this.child, signal, 15_000);
  }

  async stop(): Promise<void> {
    await this.kill('SIGTERM');
    this.out.end();
  }
}

export interface ChaosStack {
  dir: string;
  dbFile: string;
  temporalAddress: string;
  sandboxUrl: string;
  webhookUrl: string;
  codecUrl: string;
  adminToken: string;
  taskQueue: string;
  /** The environment every service (and the harness's own starters) reads its config from. */
  env: Record<string, string>;
  /** The first of `workers`. */
  worker: ServiceProcess;
  workers: ServiceProcess[];
  /** With `cluster`: its processes, each killable and restartable on its ports. */
  cluster?: TemporalCluster;
  /** The sandbox, the webhook receiver and the codec server (the capacity bench reads their CPU). */
  services: { sandbox: ServiceProcess; receiver: ServiceProcess; codec: ServiceProcess };
  /** SIGTERM the dev server and start it again on the same SQLite file and port. */
  restartTemporal(): Promise<void>;
  stop(): Promise<void>;
}

export async function startChaosStack(opts: StackOptions = {}): Promise<ChaosStack> {
  const log = opts.log ?? (() => undefined);
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'payflow-chaos-'));
  const dbFile = join(dir, 'temporal.sqlite');
  const [temporalPort, sandboxPort, webhookPort, codecPort, pgPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const temporalLog = createWriteStream(join(dir, 'temporal.log'), { flags: 'a' });
  const startTemporal = () =>
    startDevServer({
      port: temporalPort,
      uiPort: null,
      dbFile,
      log: (l) => temporalLog.write(l),
      startupTimeoutMs: 120_000,
    });

  log(`stack dir ${dir}`);
  const [initialServer, pg] = await Promise.all([
    opts.cluster
      ? startTemporalCluster({ dir: join(dir, 'cluster'), log: (l) => log(`cluster: ${l}`) })
      : startTemporal(),
    startEmbeddedPostgres({
      dataDir: join(dir, 'claim-check-pg'),
      port: pgPort,
      password: 'chaos-only',
      ephemeral: true,
    }),
  ]);
  const cluster = 'processes' in initialServer ? initialServer : undefined;
  let server: DevServer | TemporalCluster = initialServer;
  const db: EmbeddedPostgres = pg;
  log(`temporal ${server.address}, postgres ${db.url.replace(/:[^:@/]*@/, ':***@')}`);

  const adminToken = process.env.SANDBOX_ADMIN_TOKEN || DEFAULT_SANDBOX_ADMIN_TOKEN;
  const taskQueue = 'payments-chaos';
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const webhookUrl = `http://127.0.0.1:${webhookPort}/webhooks`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    // The cluster through its envconfig profile (mTLS), as any process of ours would reach it.
    ...(cluster ? cluster.env : { TEMPORAL_ADDRESS: server.address }),
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_DATA_DIR: dir,
    PAYMENTS_BASE_URL: sandboxUrl,
    PAYMENTS_SECRET_KEY: EMBEDDED_DEFAULTS.secretKey,
    // Short: a slow answer (latency fault) becomes a timeout the flows must handle, and a killed
    // connection is noticed quickly.
    PAYMENTS_TIMEOUT_MS: '8000',
    // The sandbox's A6 lists every POS remote request from its creation (docs/choices.md): a lost E1
    // that A6 never showed ends not_sent, and the ledger check then proves it moved no money. Without
    // it the flow parks such a request as outcome_unknown for an operator, by design, however long
    // the harness waits (test/pos/pos-remote-workflow.test.ts covers that default).
    PAYMENTS_LISTS_POS_REMOTE_REQUESTS: 'true',
    // The webhook error log is swept every 30 s: a credit whose every notification failed is found well before the run ends.
    VA_ERROR_LOG_SWEEP_EVERY_S: '30',
    CLAIM_CHECK_DATABASE_URL: db.url,
    CLAIM_CHECK_EMBEDDED: 'false',
    SANDBOX_PORT: String(sandboxPort),
    SANDBOX_ADMIN_TOKEN: adminToken,
    SANDBOX_SECRET_KEYS: EMBEDDED_DEFAULTS.secretKey,
    SANDBOX_WEBHOOK_URL: webhookUrl,
    // Unacknowledged webhooks (receiver down while Temporal restarts, fail faults) come again soon.
    SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS: '2000,5000,10000,30000,60000,120000',
    SANDBOX_POS_REMOTE_COMPLETE_AFTER_MS: String(opts.posRemoteCompleteAfterMs ?? 20_000),
    SANDBOX_QUIET: 'true',
    WEBHOOK_PORT: String(webhookPort),
    CODEC_PORT: String(codecPort),
    LOG_LEVEL: 'info',
    // One build id for the whole run, fixed now: a worker restarted after a commit landed in this
    // checkout would otherwise poll as a new version, and flows pinned to the old one would find no worker.
    WORKER_BUILD_ID: resolveBuildId({ buildId: process.env.WORKER_BUILD_ID }),
    ...opts.env,
  };

  const service = (name: string, entry: string, ready: RegExp, extra: Record<string, string> = {}) =>
    new ServiceProcess(name, entry, { ...env, ...extra }, join(dir, `${name}.log`), ready);
  const sandbox = service('sandbox', 'src/sandbox/main.ts', /payments sandbox listening/);
  const receiver = service('webhooks', 'src/webhooks/main.ts', /webhook receiver listening/);
  const codec = service('codec', 'src/codec/main.ts', /codec server listening/);
  const workers = Array.from({ length: Math.max(1, opts.workers ?? 1) }, (_, i) =>
    service(i === 0 ? 'worker' : `worker-${i + 1}`, 'src/workers/main.ts', /worker started/),
  );
  const worker = workers[0];
  await Promise.all([sandbox.start(), receiver.start(), codec.start()]);
  for (const w of workers) await w.start();
  log(
    `sandbox ${sandboxUrl}, receiver ${webhookUrl}, codec http://127.0.0.1:${codecPort}, worker pids ${workers.map((w) => w.child?.pid).join(', ')}`,
  );

  return {
    dir,
    dbFile,
    temporalAddress: server.address,
    sandboxUrl,
    webhookUrl,
    codecUrl: `http://127.0.0.1:${codecPort}`,
    adminToken,
    taskQueue,
    env,
    worker,
    workers,
    cluster,
    services: { sandbox, receiver, codec },
    async restartTemporal() {
      await server.stop();
      await sleep(500);
      server = cluster ? await startTemporalCluster({ dir: cluster.dir }) : await startTemporal();
    },
    async stop() {
      await Promise.all(workers.map((w) => w.stop().catch(() => undefined)));
      await Promise.all([receiver.stop(), codec.stop(), sandbox.stop()].map((p) => p.catch(() => undefined)));
      await server.stop().catch(() => undefined);
      await db.stop().catch(() => undefined);
      temporalLog.end();
    },
  };
}
