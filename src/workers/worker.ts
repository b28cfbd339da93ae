// Builds the payments worker: workflows bundled from src/workflows, activities from the
// createActivities factory, the encrypted data converter, and pino as the logger.
// Every bundle carries the metrics interceptor (src/workflows/steps/metrics-interceptor.ts); the split
// layout's, the activity-queue interceptor (src/workflows/steps/activity-queues.ts); when tracing is
// installed (src/observability/tracing.ts), the OpenTelemetry workflow and activity interceptors too.
import { bundleWorkflowCode, NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { Logger as PinoLogger } from 'pino';
// eslint-disable-next-line no-restricted-imports -- the package root also loads its workflow entry, which patches the workflow runtime, into the worker's main thread
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import { createDataConverter, FAILURE_CONVERTER_PATH, type EncryptionSettings } from '../codec/data-converter';
import { temporalConnectionOptions, type TemporalConnectionSettings } from '../temporal/connection';
import { activeTracing, OTEL_WORKFLOW_INTERCEPTORS_PATH } from '../observability/trace-context';
import { withTuning } from './tuning';
import { workerDeploymentOptions } from './versioning';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { paymentsNexusHandler, type PaymentsNexusOptions } from '../nexus/payments-handler';
import type { ActivityQueue, TaskQueueLayout, WorkerQueue } from '../shared/task-queues';
import { createWorkerGroup, type WorkerGroup } from './worker-group';
import { ACTIVITY_QUEUE_DEFAULT_TUNING } from './tuning';
import { defaultPolledQueues } from '../config/task-queues';

/** A worker NativeConnection with the TLS and API key of `settings` (config.temporal). */
export function connectTemporalWorker(settings: TemporalConnectionSettings): Promise<NativeConnection> {
  return NativeConnection.connect(temporalConnectionOptions(settings));
}

export interface PaymentsWorkerOptions extends TemporalConnectionSettings {
  namespace: string;
  taskQueue: string;
  encryption: EncryptionSettings;
  activities: object;
  connection?: NativeConnection;
  /** Pre-built bundle (tests build it once, with workflowInterceptorModules()); otherwise src/workflows is bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  workflowsPath?: string;
  /** Cache, slots, pollers, tuner: workerTuningOptions(config.worker) (src/workers/tuning.ts). */
  tuning?: Partial<WorkerOptions>;
  /** The Worker Deployment version it polls as (deploymentVersion(config.deployment)); unversioned when absent. */
  deployment?: WorkerDeploymentVersion;
  /** Extra options, e.g. shutdownGraceTime or concurrency limits; they win over `tuning`. */
  overrides?: Partial<WorkerOptions>;
  /** The `payments` Nexus service's event target and return-link key (docs/nexus.md); the service is always registered. */
  nexus?: PaymentsNexusOptions;
  /** Where flows put their activities (WORKER_TASK_QUEUE_LAYOUT): what a bundle built at start carries; single by default. */
  layout?: TaskQueueLayout;
  /** The queues this process polls (config.taskQueues.polled); when absent, the layout's (the main one; all three when split). */
  queues?: readonly WorkerQueue[];
  /** Slots, pollers and rate of the activity queues (activityQueueTuning(config.taskQueues)); the defaults otherwise. */
  activityQueues?: Partial<Record<ActivityQueue, Partial<WorkerOptions>>>;
}

export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Modules the workflow sandbox evaluates once per worker and shares (frozen) with every workflow,
 * instead of once per workflow: the schema cache (src/shared/lazy.ts), which also holds the one zod
 * every workflow's schemas are built with; long and nexus-rpc, pure helpers of the SDK's own modules.
 * zod itself cannot be listed: webpack drops a bare preload of a package marked "sideEffects": false,
 * and a frozen zod fails (it writes to its own module objects on first use). One list, used by the
 * worker, the prebuilt bundles, replay and the tests.
 */
export const PRELOADED_WORKFLOW_MODULES = ['long', 'nexus-rpc', require.resolve('../shared/lazy')];

const QUIET = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

/**
 * The workflows bundled as the worker, the prebuilt bundles and replay all run them: the project's
 * failure converter and preloaded modules, with `interceptorModules`; webpack's lines to `logger` (none by default).
 */
export function bundleWorkflows(
  interceptorModules: string[],
  logger: Parameters<typeof bundleWorkflowCode>[0]['logger'] = QUIET,
  workflowsPath: string = WORKFLOWS_PATH,
) {
  return bundleWorkflowCode({
    workflowsPath,
    failureConverterPath: FAILURE_CONVERTER_PATH,
    workflowInterceptorModules: interceptorModules,
    preloadModules: PRELOADED_WORKFLOW_MODULES,
    logger,
  });
}

/** The workflow interceptor module every bundle carries: business metrics counted in one home. */
export const METRICS_INTERCEPTOR_PATH = require.resolve('../workflows/steps/metrics-interceptor');

/** The split layout's workflow interceptor module: each activity on the queue its policy names. */
export const ACTIVITY_QUEUES_INTERCEPTOR_PATH = require.resolve('../workflows/steps/activity-queues');

/** What a bundle is built for: the task-queue layout, and whether it carries OpenTelemetry's interceptor. */
export interface BundleKind {
  layout: TaskQueueLayout;
  traced: boolean;
}

/**
 * The workflow interceptor modules of a bundle of `kind`: the activity queues on the split layout
 * (first, so the others see the activity's queue), the metrics always, OpenTelemetry when traced.
 * One list for the worker that bundles at start, the prebuilt bundles and the tests.
 */
export function bundleInterceptorModules(kind: BundleKind): string[] {
  return [
    ...(kind.layout === 'split' ? [ACTIVITY_QUEUES_INTERCEPTOR_PATH] : []),
    METRICS_INTERCEPTOR_PATH,
    ...(kind.traced ? [OTEL_WORKFLOW_INTERCEPTORS_PATH] : []),
  ];
}

/** The workflow interceptor modules a bundle needs now: `layout`'s, OpenTelemetry when tracing is installed. */
export function workflowInterceptorModules(layout: TaskQueueLayout = 'single'): string[] {
  return bundleInterceptorModules({ layout, traced: activeTracing() !== undefined });
}

/**
 * What the traced prebuilt bundles (dist/workflow-bundle-traced.js, -split-traced.js) carry besides
 * the layout's module: the metrics and OpenTelemetry. The worker loads one only when tracing is on;
 * a plain one (metrics only) otherwise, because every workflow evaluates its interceptor modules, and
 * OpenTelemetry's cost a vend about a fifth more worker CPU (docs/performance.md). A worker that runs
 * a traced bundle with tracing off registers a no-op span sink, so the workflow spans are dropped.
 */
export const PREBUILT_BUNDLE_INTERCEPTOR_MODULES = bundleInterceptorModules({ layout: 'single', traced: true });
/** What the plain prebuilt bundle (dist/workflow-bundle.js) carries: the metrics interceptor. */
export const PLAIN_BUNDLE_INTERCEPTOR_MODULES = bundleInterceptorModules({ layout: 'single', traced: false });

/** Takes the OpenTelemetry workflow interceptor's spans when tracing is off (a bundle may carry it anyway). */
const DROP_WORKFLOW_SPANS = { exporter: { export: { fn: () => undefined } } };

/**
 * Workflow interceptor modules (only when the worker bundles: a pre-built bundle has them already), and the
 * installed tracing's activity interceptors and span sink: a span per workflow, activity and update, in the caller's trace.
 */
function interceptorOptions(
  bundling: boolean,
  layout: TaskQueueLayout | undefined,
): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const workflowModules = bundling ? { workflowModules: workflowInterceptorModules(layout) } : {};
  const tracing = activeTracing();
  if (!tracing) return { interceptors: workflowModules, sinks: DROP_WORKFLOW_SPANS };
  return {
    interceptors: {
      ...workflowModules,
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: tracing.tracer }),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

/**
 * The payments workers of one process (src/workers/worker-group.ts): the main queue's and, on the split
 * layout, on the activity queues named after it, the money and reads workers, each with its own slots.
 */
export async function createPaymentsWorker(opts: PaymentsWorkerOptions): Promise<WorkerGroup> {
  const connection = opts.connection ?? (await connectTemporalWorker(opts));
  const traced = interceptorOptions(!opts.workflowBundle, opts.layout);
  const main: WorkerOptions = {
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: opts.activities,
    // Served only where a Nexus endpoint targets this task queue (docs/nexus.md).
    nexusServices: [paymentsNexusHandler(opts.nexus)],
    dataConverter: createDataConverter(opts.encryption),
    ...(opts.workflowBundle
      ? { workflowBundle: opts.workflowBundle }
      : {
          workflowsPath: opts.workflowsPath ?? WORKFLOWS_PATH,
          bundlerOptions: { preloadModules: PRELOADED_WORKFLOW_MODULES },
        }),
    // Embedded uses (tests) keep a short grace; the worker process and `npm start` pass
    // WORKER_SHUTDOWN_GRACE_MS (75 s, src/shared/activity-timeouts.ts) through `overrides`.
    shutdownGraceTime: '10s',
    ...workerDeploymentOptions(opts.deployment),
    ...withTuning(opts.tuning, opts.overrides),
    interceptors: { ...traced.interceptors, ...opts.overrides?.interceptors },
    sinks: { ...traced.sinks, ...opts.overrides?.sinks },
  };
  return createWorkerGroup(
    main,
    opts.queues ?? defaultPolledQueues(opts.layout ?? 'single'),
    opts.activityQueues ?? ACTIVITY_QUEUE_DEFAULT_TUNING,
  );
}

/**
 * The workflow bundle built at start (under tsx: `npm start`, `npm run worker`), as the prebuilt one is
 * (src/workers/workflow-bundle.ts) but with the interceptors the process needs now. One log line says it
 * was built; webpack's build statistics, which the SDK's bundler logs at info, go to debug.
 */
export async function bundleWorkflowsAtStart(
  logger: PinoLogger,
  layout: TaskQueueLayout = 'single',
): Promise<{ code: string }> {
  const startedAt = Date.now();
  const bundler = logger.child({ component: 'workflow-bundler' });
  const { code } = await bundleWorkflows(workflowInterceptorModules(layout), {
    log: (level, message, meta) => bundler.debug({ ...meta, sdkLevel: level }, message),
    trace: (message, meta) => bundler.trace(meta ?? {}, message),
    debug: (message, meta) => bundler.debug(meta ?? {}, message),
    info: (message, meta) => bundler.debug(meta ?? {}, message),
    warn: (message, meta) => bundler.warn(meta ?? {}, message),
    error: (message, meta) => bundler.error(meta ?? {}, message),
  });
  logger.info(
    { sizeMb: Math.round(Buffer.byteLength(code) / 100_000) / 10, ms: Date.now() - startedAt, layout },
    'workflow bundle built at start',
  );
  return { code };
}
