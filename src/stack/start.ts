// `npm start`: the whole stack on embedded defaults, in one process tree.
//   Temporal dev server (file-backed, Web UI wired to the codec server, search attributes registered)
//   payments sandbox · webhook receiver · codec server · worker
// Ctrl-C stops everything, in order: the worker (in-flight activities finish), the other services,
// the claim-check PostgreSQL, then the dev server. The dev server and PostgreSQL run in process groups
// of their own, so the terminal's Ctrl-C reaches only this process and not them first.
// The SQLite file under TEMPORAL_DATA_DIR keeps running workflows.
import { resolve } from 'node:path';
import 'dotenv/config';
import { loadConfig, ConfigError } from '../config/config';
import { createLogger } from '../logging/logger';
import { startDevServer, type DevServer } from './temporal-dev-server';
import { runServices } from './services';
import { ensureReconciliationSchedule } from '../starters/reconciliation';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../claim-check/embedded';
import { startProcessObservability } from '../observability/process';
import { WORKER_SHUTDOWN_GRACE_MS } from '../shared/activity-timeouts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel, name: 'stack' });
  const [host, portText] = config.temporal.address.split(':');
  const codecUrl = `http://${config.codec.host}:${config.codec.port}`;

  let devServer: DevServer | undefined;
  if (!config.temporal.external) {
    devServer = await startDevServer({
      ip: host,
      port: Number(portText),
      uiPort: config.temporal.uiPort,
      namespace: config.temporal.namespace,
      dbFile: resolve(config.temporal.dataDir, 'temporal.sqlite'),
      // The bundled UI cannot send a custom header, so the token rides in the path (see README).
      codecEndpoint: `${codecUrl}/t/${encodeURIComponent(config.codec.token)}`,
      log: (line) => logger.debug({ component: 'temporal-cli' }, line.trim()),
      ownProcessGroup: true,
    });
  }

  // The claim-check store's PostgreSQL: a real one, embedded, at CLAIM_CHECK_DATABASE_URL's port.
  let claimCheckDb: EmbeddedPostgres | undefined;
  if (config.claimCheck.embedded) {
    const url = new URL(config.claimCheck.databaseUrl);
    claimCheckDb = await startEmbeddedPostgres({
      dataDir: resolve(config.temporal.dataDir, 'claim-check-pg'),
      port: Number(url.port || 5432),
      password: decodeURIComponent(url.password),
      database: url.pathname.replace(/^\//, '') || 'claimcheck',
      ownProcessGroup: true,
    });
  }

  // One process: one metrics address for the worker, receiver and codec server (METRICS_PORT, default 9464 here; off: METRICS_PORT=off).
  const observability = await startProcessObservability(config, logger, {
    serviceName: 'payflow-stack',
    runtime: true,
    metrics:
      config.observability.metrics ?? (config.observability.metricsOff ? undefined : { host: '127.0.0.1', port: 9464 }),
  });
  const services = await runServices({
    config,
    logger,
    workerHealth: true,
    workerOverrides: { shutdownGraceTime: WORKER_SHUTDOWN_GRACE_MS },
  });
  const schedule = config.reconciliation.schedule
    ? await ensureReconciliationSchedule(services.starters, { dailyAt: config.reconciliation.dailyAt }).catch(
        (err: unknown) => {
          logger.error({ err }, 'reconciliation schedule could not be created or updated');
          return undefined;
        },
      )
    : undefined;

  const lines = [
    `Temporal server   ${config.temporal.address} (namespace ${config.temporal.namespace})${devServer ? '' : ' [external]'}`,
    devServer?.uiUrl ? `Temporal Web UI   ${devServer.uiUrl}` : undefined,
    services.sandboxUrl ? `Payments sandbox  ${services.sandboxUrl}` : `Payments service  ${config.payments.baseUrl}`,
    `Webhook receiver  ${services.webhookUrl}/webhooks`,
    `Codec server      ${services.codecUrl}`,
    `Claim-check store ${new URL(config.claimCheck.databaseUrl).host}${claimCheckDb ? ' (embedded PostgreSQL)' : ''}, TTL ${config.claimCheck.ttlMs / 1000} s`,
    `Worker            task queue ${config.temporal.taskQueue}`,
    `Metrics           ${observability.metricsUrl ?? 'off (METRICS_PORT)'}  (Prometheus: worker, receiver, codec server)`,
    `Health            worker ${services.workerHealthUrl ? `${services.workerHealthUrl}/healthz /readyz` : 'off (HEALTH_PORT)'}`,
    `                  receiver ${services.webhookUrl}/healthz /readyz · codec ${services.codecUrl}/healthz /readyz`,
    observability.tracing
      ? `Tracing           OpenTelemetry, exporter ${config.observability.tracing.exporter}`
      : undefined,
    schedule
      ? `Reconciliation    Schedule ${schedule.scheduleId}, daily at ${config.reconciliation.dailyAt} UTC (previous day)`
      : undefined,
  ].filter(Boolean);
  console.log(['', 'Payments stack is up:', ...lines.map((l) => `  ${l}`), '', 'Press Ctrl-C to stop.', ''].join('\n'));

  let stopping = false;
  let devServerStopping = false;
  devServer?.process.once('exit', (code, signal) => {
    if (!devServerStopping) logger.warn({ code, signal }, 'the Temporal dev server exited before the stack stopped it');
  });
  const stop = async (signal: string) => {
    // A terminal's Ctrl-C can arrive twice (directly and relayed by npm/tsx): once is enough.
    if (stopping) return;
    stopping = true;
    console.log(
      `\n${signal}: stopping (in-flight activities get up to ${WORKER_SHUTDOWN_GRACE_MS / 1000} s to finish)…`,
    );
    await services.stop();
    console.log('worker and services stopped');
    await observability.stop();
    await claimCheckDb?.stop();
    devServerStopping = true;
    await devServer?.stop();
    if (devServer) console.log('Temporal dev server stopped');
    console.log('stopped.');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
