// The worker as its own process (docker-compose, k8s, next to an external Temporal, and `npm start`,
// which spawns it with an IPC channel: src/stack/start.ts). Tuning from config.worker (WORKER_*).
import { bootstrap } from '../config/bootstrap';
import { loadWorkerConfig } from '../config/processes';
import { startProcessObservability, startWorkerHealth } from '../observability/process';
import { createActivities } from '../activities';
import { bundleWorkflowsAtStart, connectTemporalWorker, createPaymentsWorker } from './worker';
import { describeTemporalConnection } from '../temporal/connection';
import { openClaimCheck, openPaymentsClient, openVirtualAccountCredits } from '../starters/connect';
import { connectTemporalClient, createTemporalClient } from '../temporal/client';
import { ensureErrorLogSweepSchedule } from './schedules';
import { ensureReconciliationSchedule } from '../starters/reconciliation';
import { prebuiltBundlePathFor, prebuiltWorkflowBundle } from './workflow-bundle';
import { WORKER_SHUTDOWN_GRACE_MS } from '../shared/activity-timeouts';
import { activityQueueTuning, resolveWorkerTuning } from './tuning';
import { workflowStackTraceState } from './workflow-stack-traces';
import { deploymentVersion, makeVersionCurrent } from './versioning';
import { checkNamespace } from './search-attribute-setup';
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

async function main(): Promise<void> {
  const { config, logger } = bootstrap('worker', () => loadWorkerConfig());
  const stopExitingOnSignal = exitOnSignalWhileStarting(logger);
  // Spawned by `npm start`: the channel must not keep this process alive after the worker stopped, and
  // `npm start` gone, however it ended (even SIGKILL), this process stops too: at once while starting,
  // gracefully (as on SIGTERM) once the worker runs.
  process.channel?.unref();
  let onParentGone = (): void => process.exit(0);
  if (process.connected) process.once('disconnect', () => onParentGone());
  const tuning = resolveWorkerTuning(config.worker);
  for (const warning of tuning.warnings) logger.warn({ tuning: tuning.summary }, warning);
  if (workflowStackTraceState().effective === 'on (unknown SDK)')
    logger.warn(
      'WORKER_WORKFLOW_STACK_TRACES=off was not applied: this @temporalio/worker no longer has the promise-hook installer the preload replaces (src/workers/workflow-stack-traces.ts); workflows capture a stack per promise',
    );
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
  const api = openPaymentsClient(config);
  const claimCheck = await openClaimCheck(config);
  claimCheck.startSweeper(60_000, (err) => logger.warn({ err }, 'claim-check sweep failed'));
  const vaCredits = await openVirtualAccountCredits(config);
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
  const worker = await createPaymentsWorker({
    ...config.temporal,
    encryption: config.encryption,
    connection,
    activities: createActivities({
      api,
      logger: logger.child({ component: 'activities' }),
      config,
      claimCheck,
      vaCredits,
      temporal: client,
    }),
    workflowBundle: prebuilt ?? (await bundleWorkflowsAtStart(logger, layout)),
    layout,
    deployment: version,
    tuning: tuning.options,
    // The main queue and, split, the money and reads queues, each its own worker and slots (docs/deployment.md, "Task queues").
    queues: config.taskQueues.polled,
    activityQueues: activityQueueTuning(config.taskQueues),
    // SIGTERM (deploy, scale-in): in-flight money calls finish before the worker stops (docs/deployment.md).
    overrides: { shutdownGraceTime: WORKER_SHUTDOWN_GRACE_MS },
    // The worker process holds no RETURN_LINK_KEY: a Nexus caller's return URL to /payments/return is refused (docs/nexus.md).
    nexus: {},
  });
  // The Schedules the worker keeps: created here only (not by `npm start`'s own process).
  let errorLogSweepScheduleId: string | undefined;
  let reconciliationScheduleId: string | undefined;
  if (config.virtualAccounts.errorLogSweepEverySeconds > 0) {
    const scheduleId = await ensureErrorLogSweepSchedule(client, {
      taskQueue: config.temporal.taskQueue,
      everySeconds: config.virtualAccounts.errorLogSweepEverySeconds,
    });
    logger.info(
      { scheduleId, everySeconds: config.virtualAccounts.errorLogSweepEverySeconds },
      'webhook error log sweep scheduled',
    );
    errorLogSweepScheduleId = scheduleId;
  }
  if (config.reconciliation.schedule) {
    // The flows matter more than the Schedule: a failure here is logged, the worker still runs.
    await ensureReconciliationSchedule(
      { client, taskQueue: config.temporal.taskQueue },
      { dailyAt: config.reconciliation.dailyAt },
    ).then(
      (s) => {
        reconciliationScheduleId = s.scheduleId;
        logger.info(
          { scheduleId: s.scheduleId, created: s.created, dailyAt: config.reconciliation.dailyAt },
          'reconciliation schedule in place',
        );
      },
      (err: unknown) =>
        logger.error(
          { err },
          'reconciliation schedule could not be created or updated (is the ReconciliationStatus search attribute registered?)',
        ),
    );
  }
  health.watch(worker.workers, connection);
  logger.info(
    {
      taskQueue: config.temporal.taskQueue,
      taskQueues: config.taskQueues,
      temporal: describeTemporalConnection(config.temporal),
      workflowBundle: prebuilt ? 'prebuilt' : 'bundled at start',
      tuning: tuning.summary,
      workflowStackTraces: workflowStackTraceState().effective,
      version: version ? `${version.deploymentName}:${version.buildId}` : 'unversioned',
    },
    'worker started',
  );
  // Worker.run() stops gracefully on SIGINT/SIGTERM by itself.
  const running = worker.run();
  stopExitingOnSignal();
  // Development: this version becomes current once the server has seen its pollers (no deploy step).
  // Production: `temporal worker deployment set-current-version` (or a ramp) does it (docs/operations.md).
  const madeCurrent =
    version && config.deployment.makeCurrent
      ? await makeVersionCurrent(client, version).then(
          () => {
            logger.info({ version }, 'worker version made current');
            return true;
          },
          (err: unknown) => {
            logger.error({ err, version }, 'worker version could not be made current: new flows wait for it');
            return false;
          },
        )
      : false;
  if (process.send && process.connected) {
    const started: WorkerStartedMessage = {
      type: 'worker-started',
      pid: process.pid,
      metricsUrl: observability.metricsUrl,
      healthUrl: health.url,
      reconciliationScheduleId,
      errorLogSweepScheduleId,
      tuning: tuning.summary,
      workflowStackTraces: workflowStackTraceState().effective,
      ...(version ? { version: { name: `${version.deploymentName}:${version.buildId}`, current: madeCurrent } } : {}),
    };
    process.send(started);
    onParentGone = () => {
      if (worker.getState() !== 'RUNNING') return;
      logger.warn('the npm start process that spawned this worker is gone: stopping');
      worker.shutdown();
    };
  }
  await running;
  await connection.close();
  await clientConnection.close();
  await api.close();
  await claimCheck.close();
  await vaCredits.close();
  await health.close();
  await observability.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
