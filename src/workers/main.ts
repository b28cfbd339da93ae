// The worker as its own process (docker-compose, k8s, next to an external Temporal, and `npm start`,
// which spawns it with an IPC channel: src/stack/start.ts). Tuning from config.worker (WORKER_*).
import { bootstrap } from '../config/bootstrap';
import { loadWorkerConfig } from '../config/processes';
import { startProcessObservability, startWorkerHealth } from '../observability/process';
import { bundleWorkflowsAtStart, connectTemporalWorker } from './worker';
import { createConfiguredWorker } from './configured-worker';
import { describeTemporalConnection } from '../temporal/connection';
import { openClaimCheck, openPaymentsClient, openVirtualAccountCredits } from '../starters/connect';
import { connectTemporalClient, createTemporalClient } from '../temporal/client';
import { ensureErrorLogSweepSchedule } from './schedules';
import { ensureReconciliationSchedule } from '../starters/reconciliation';
import { prebuiltBundlePathFor, prebuiltWorkflowBundle } from './workflow-bundle';
import { WORKER_SHUTDOWN_GRACE_MS } from '../shared/activity-timeouts';
import { resolveWorkerTuning } from './tuning';
import { workflowStackTraceState } from './workflow-stack-traces';
import { deploymentVersion, makeVersionCurrent } from './versioning';
import { checkNamespace } from './search-attribute-setup';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';

/** What the worker tells `npm start` over the IPC channel once it runs (src/stack/start.ts). */
export interface WorkerStartedMessage {
  type: 'worker-started';
  pid: number;
  metricsUrl?: string;
  healthUrl?: string;
  reconciliationScheduleId?: string;
  errorLogSweepScheduleId?: string;
  tuning: ReturnType<typeof resolveWorkerTuning>['summary'];
  /** What the workflow threads run with (src/workers/workflow-stack-traces.ts). */
  workflowStackTraces: ReturnType<typeof workflowStackTraceState>['effective'];
  /** The Worker Deployment version it polls as (`payflow:1.0.0+3f2c1ab09e41`), and whether it made it current; absent when unversioned. */
  version?: { name: string; current: boolean };
}

/** Exit codes: a namespace the flows cannot run in is misconfiguration, as a refused setting is (2). */
const EXIT_MISCONFIGURED = 2;

/**
 * A namespace that is missing, or lacks a search attribute the flows write, would take the worker and
 * fail every workflow task that writes it: one line naming what is missing and the command that
 * registers it, and the worker does not start (/readyz never turns ready).
 */
async function refuseUnreadyNamespace(
  connection: Parameters<typeof checkNamespace>[0],
  temporal: { address: string; namespace: string },
  logger: Logger,
): Promise<void> {
  const { problem, unchecked } = await checkNamespace(connection, temporal);
  if (unchecked)
    logger.warn({ reason: unchecked }, 'the namespace and its search attributes could not be checked: starting anyway');
  if (!problem) return;
  console.error(problem);
  process.exit(EXIT_MISCONFIGURED);
}

/**
 * Until the worker runs, SIGINT/SIGTERM end the process at once (the Temporal Runtime's own handler
 * would only mark a shutdown that a worker not yet created never sees, and start-up would go on).
 * Returns what removes the handlers once the worker runs and stops gracefully on them itself.
 */
function exitOnSignalWhileStarting(logger: Logger): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'signal while starting: exiting');
    process.exit(0);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

type WorkerConfig = ReturnType<typeof loadWorkerConfig>;

/** The Schedules the worker keeps: created here only (not by `npm start`'s own process). */
async function ensureSchedules(
  client: Client,
  config: WorkerConfig,
  logger: Logger,
): Promise<{ errorLogSweepScheduleId?: string; reconciliationScheduleId?: string }> {
  const ids: { errorLogSweepScheduleId?: string; reconciliationScheduleId?: string } = {};
  const everySeconds = config.virtualAccounts.errorLogSweepEverySeconds;
  if (everySeconds > 0) {
    const scheduleId = await ensureErrorLogSweepSchedule(client, {
      taskQueue: config.temporal.taskQueue,
      everySeconds,
    });
    logger.info({ scheduleId, everySeconds }, 'webhook error log sweep scheduled');
    ids.errorLogSweepScheduleId = scheduleId;
  }
  if (config.reconciliation.schedule) {
    // The flows matter more than the Schedule: a failure here is logged, the worker still runs.
    const { dailyAt } = config.reconciliation;
    await ensureReconciliationSchedule({ client, taskQueue: config.temporal.taskQueue }, { dailyAt }).then(
      (s) => {
        ids.reconciliationScheduleId = s.scheduleId;
        logger.info({ scheduleId: s.scheduleId, created: s.created, dailyAt }, 'reconciliation schedule in place');
      },
      (err: unknown) =>
        logger.error(
          { err },
          'reconciliation schedule could not be created or updated (is the ReconciliationStatus search attribute registered?)',
        ),
    );
  }
  return ids;
}

/**
 * Development: this version becomes current once the server has seen its pollers (no deploy step).
 * Production: `temporal worker deployment set-current-version` (or a ramp) does it (docs/operations.md).
 */
async function makeCurrentWhenAsked(
  client: Client,
  version: ReturnType<typeof deploymentVersion>,
  makeCurrent: boolean,
  logger: Logger,
): Promise<boolean> {
  if (!version || !makeCurrent) return false;
  return makeVersionCurrent(client, version).then(
    () => {
      logger.info({ version }, 'worker version made current');
      return true;
    },
    (err: unknown) => {
      logger.error({ err, version }, 'worker version could not be made current: new flows wait for it');
      return false;
    },
  );
}

/** The worker's tuning, its warnings logged (and the stack-trace setting's, when it could not apply). */
function tuningWithWarnings(config: WorkerConfig, logger: Logger): ReturnType<typeof resolveWorkerTuning> {
  const tuning = resolveWorkerTuning(config.worker);
  for (const warning of tuning.warnings) logger.warn({ tuning: tuning.summary }, warning);
  if (workflowStackTraceState().effective === 'on (unknown SDK)')
    logger.warn(
      'WORKER_WORKFLOW_STACK_TRACES=off was not applied: this @temporalio/worker no longer has the promise-hook installer the preload replaces (src/workers/workflow-stack-traces.ts); workflows capture a stack per promise',
    );
  return tuning;
}

/** The payments service's client and the stores the activities use (the claim-check store swept each minute). */
async function openStores(config: WorkerConfig, logger: Logger) {
  const api = openPaymentsClient(config);
  const claimCheck = await openClaimCheck(config);
  claimCheck.startSweeper(60_000, (err) => logger.warn({ err }, 'claim-check sweep failed'));
  return { api, claimCheck, vaCredits: await openVirtualAccountCredits(config) };
}

/** A worker version as the banner and logs name it: `<deployment>:<build id>`. */
const versionName = (v: NonNullable<ReturnType<typeof deploymentVersion>>): string =>
  `${v.deploymentName}:${v.buildId}`;

/** `npm start` (which spawned this process) is gone: the running worker stops gracefully, as on SIGTERM. */
function stopWhenParentGone(worker: { getState(): string; shutdown(): void }, logger: Logger): void {
  if (worker.getState() !== 'RUNNING') return;
  logger.warn('the npm start process that spawned this worker is gone: stopping');
  worker.shutdown();
}

/** The one line that says what this worker runs: its queues, connection, bundle, tuning and version. */
function logStarted(
  config: WorkerConfig,
  started: {
    prebuilt: boolean;
    tuning: ReturnType<typeof resolveWorkerTuning>;
    version: ReturnType<typeof deploymentVersion>;
  },
  logger: Logger,
): void {
  logger.info(
    {
      taskQueue: config.temporal.taskQueue,
      taskQueues: config.taskQueues,
      temporal: describeTemporalConnection(config.temporal),
      workflowBundle: started.prebuilt ? 'prebuilt' : 'bundled at start',
      tuning: started.tuning.summary,
      workflowStackTraces: workflowStackTraceState().effective,
      version: started.version ? versionName(started.version) : 'unversioned',
    },
    'worker started',
  );
}

async function main(): Promise<void> {
  const { config, logger } = bootstrap('worker', () => loadWorkerConfig());
  const stopExitingOnSignal = exitOnSignalWhileStarting(logger);
  // Spawned by `npm start`: the channel must not keep this process alive after the worker stopped, and
  // `npm start` gone, however it ended (even SIGKILL), this process stops too: at once while starting,
  // gracefully (as on SIGTERM) once the worker runs.
  process.channel?.unref();
  const parent = { gone: (): void => process.exit(0) };
  if (process.connected) process.once('disconnect', () => parent.gone());
  const tuning = tuningWithWarnings(config, logger);
  // Metrics (METRICS_PORT), tracing (OTEL_*) and /healthz, /readyz (HEALTH_PORT): before any connection.
  const observability = await startProcessObservability(config, logger, {
    serviceName: 'payflow-worker',
    runtime: true,
  });
  const health = await startWorkerHealth(config, logger);
  // Compiled, the worker loads its layout's dist/workflow-bundle*.js (it fails here if missing); under
  // tsx it bundles at start (docs/deployment.md). The bundle is what tells flows the layout.
  const layout = config.taskQueues.layout;
  const prebuilt = prebuiltWorkflowBundle(prebuiltBundlePathFor(layout));
  const { api, claimCheck, vaCredits } = await openStores(config, logger);
  const connection = await connectTemporalWorker(config.temporal);
  // A client for activities that ask other workflows (scheduled mandate debits) or read our own flows (reconciliation), and for the Schedules.
  const clientConnection = await connectTemporalClient(config.temporal);
  await refuseUnreadyNamespace(clientConnection, config.temporal, logger);
  const client = await createTemporalClient({
    ...config.temporal,
    encryption: config.encryption,
    connection: clientConnection,
  });
  const version = deploymentVersion(config.deployment);
  const worker = await createConfiguredWorker(
    config,
    { connection, client, api, logger, claimCheck, vaCredits },
    {
      workflowBundle: prebuilt ?? (await bundleWorkflowsAtStart(logger, layout)),
      deployment: version,
      tuning: tuning.options,
      // SIGTERM (deploy, scale-in): in-flight money calls finish before the worker stops (docs/deployment.md).
      overrides: { shutdownGraceTime: WORKER_SHUTDOWN_GRACE_MS },
      // The worker process holds no RETURN_LINK_KEY: a Nexus caller's return URL to /payments/return is refused (docs/nexus.md).
      nexus: {},
    },
  );
  const schedules = await ensureSchedules(client, config, logger);
  health.watch(worker.workers, connection);
  logStarted(config, { prebuilt: prebuilt !== undefined, tuning, version }, logger);
  // Worker.run() stops gracefully on SIGINT/SIGTERM by itself.
  const running = worker.run();
  stopExitingOnSignal();
  const madeCurrent = await makeCurrentWhenAsked(client, version, config.deployment.makeCurrent, logger);
  if (process.send && process.connected) {
    process.send({
      type: 'worker-started',
      pid: process.pid,
      metricsUrl: observability.metricsUrl,
      healthUrl: health.url,
      ...schedules,
      tuning: tuning.summary,
      workflowStackTraces: workflowStackTraceState().effective,
      ...(version ? { version: { name: versionName(version), current: madeCurrent } } : {}),
    } satisfies WorkerStartedMessage);
    parent.gone = () => stopWhenParentGone(worker, logger);
  }
  await running;
  for (const close of [connection, clientConnection, api, claimCheck, vaCredits, health]) await close.close();
  await observability.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
