// config.worker (WORKER_*, src/config/worker-tuning.ts) → the SDK's WorkerOptions. One home for the
// mapping: the worker process (src/workers/main.ts) and runServices (tests) pass the result to
// createPaymentsWorker as `tuning`; a caller's `overrides` win over it.
import { getHeapStatistics } from 'node:v8';
import type { WorkerOptions } from '@temporalio/worker';
import {
  AUTO_CACHE_FLOOR,
  WORKER_TUNING_DEFAULTS,
  type PollerSetting,
  type WorkerTuningConfig,
} from '../config/worker-tuning';
import { taskQueuesConfig, type TaskQueuesConfig } from '../config/task-queues';
import type { ActivityQueue } from '../shared/task-queues';
import { pacedActivities } from './send-pacing';

type PollerBehavior = NonNullable<WorkerOptions['workflowTaskPollerBehavior']>;

/** The V8 heap limit of this process in MB (what NODE_OPTIONS=--max-old-space-size sets). */
export const heapLimitMb = (): number => Math.floor(getHeapStatistics().heap_size_limit / 2 ** 20);

/** The `auto` cache: as many waiting flows as the heap holds above the baseline, at most the default ceiling. */
export function autoCachedWorkflows(heapMb: number): number {
  const fits = Math.floor((heapMb - WORKER_TUNING_DEFAULTS.heapBaselineMb) / WORKER_TUNING_DEFAULTS.cachedWorkflowMb);
  return Math.max(AUTO_CACHE_FLOOR, Math.min(WORKER_TUNING_DEFAULTS.maxCachedWorkflows, fits));
}

export interface ResolvedWorkerTuning {
  options: Partial<WorkerOptions>;
  /** What the worker logs at start (and `npm start` shows): the chosen figures, no secrets. */
  summary: {
    maxCachedWorkflows: number;
    cache: 'auto' | 'set';
    heapLimitMb: number;
    /** The cache's estimated heap at WORKER_TUNING_DEFAULTS.cachedWorkflowMb per flow. */
    cacheEstimateMb: number;
    tuner: string;
    workflowPollers: string;
    activityPollers: string;
    stickyQueueTimeoutMs: number;
  };
  /** Settings that will not fit the heap (logged as warnings). */
  warnings: string[];
}

const pollerBehavior = (p: PollerSetting): PollerBehavior =>
  p.mode === 'autoscaling' ? { type: 'autoscaling' } : { type: 'simple-maximum', maximum: p.maximum };
const describePoller = (p: PollerSetting) => (p.mode === 'autoscaling' ? 'autoscaling' : `max ${p.maximum}`);

/** config.worker → WorkerOptions, with the figures behind them; `heapMb` defaults to this process's heap limit. */
export function resolveWorkerTuning(tuning: WorkerTuningConfig, heapMb: number = heapLimitMb()): ResolvedWorkerTuning {
  const cache = tuning.maxCachedWorkflows === 'auto' ? autoCachedWorkflows(heapMb) : tuning.maxCachedWorkflows;
  const warnings: string[] = [];
  const cacheEstimateMb = Math.round(cache * WORKER_TUNING_DEFAULTS.cachedWorkflowMb);
  if (tuning.maxCachedWorkflows !== 'auto' && cacheEstimateMb + WORKER_TUNING_DEFAULTS.heapBaselineMb > heapMb) {
    warnings.push(
      `WORKER_MAX_CACHED_WORKFLOWS=${cache} needs about ${cacheEstimateMb} MB of heap (${WORKER_TUNING_DEFAULTS.cachedWorkflowMb} MB per waiting flow) above a ${WORKER_TUNING_DEFAULTS.heapBaselineMb} MB baseline, and the heap limit is ${heapMb} MB: lower it, use auto, or raise --max-old-space-size`,
    );
  }
  const options: Partial<WorkerOptions> = {
    maxCachedWorkflows: cache,
    stickyQueueScheduleToStartTimeout: tuning.stickyQueueTimeoutMs,
    workflowTaskPollerBehavior: pollerBehavior(tuning.workflowPollers),
    activityTaskPollerBehavior: pollerBehavior(tuning.activityPollers),
  };
  let tuner: string;
  if (tuning.tuner.kind === 'resource-based') {
    const { targetMemoryUsage, targetCpuUsage } = tuning.tuner;
    options.tuner = {
      tunerOptions: { targetMemoryUsage, targetCpuUsage },
      // A workflow task runs in a cached workflow: never more workflow slots than the cache holds.
      ...(cache > 0 ? { workflowTaskSlotOptions: { maximumSlots: Math.max(2, Math.min(1000, cache)) } } : {}),
    };
    tuner = `resource-based (memory ${targetMemoryUsage}, cpu ${targetCpuUsage})`;
  } else {
    const t = tuning.tuner;
    // An `auto` cache smaller than the slots lowers the slots (a set cache was checked by config).
    const workflowSlots =
      cache > 0
        ? Math.max(2, Math.min(t.maxConcurrentWorkflowTaskExecutions, cache))
        : t.maxConcurrentWorkflowTaskExecutions;
    options.maxConcurrentWorkflowTaskExecutions = workflowSlots;
    options.maxConcurrentActivityTaskExecutions = t.maxConcurrentActivityTaskExecutions;
    options.maxConcurrentLocalActivityExecutions = t.maxConcurrentLocalActivityExecutions;
    if (tuning.workflowPollers.mode === 'maximum' && tuning.workflowPollers.maximum > workflowSlots) {
      options.workflowTaskPollerBehavior = { type: 'simple-maximum', maximum: workflowSlots };
    }
    tuner = `fixed (workflow tasks ${workflowSlots}, activities ${t.maxConcurrentActivityTaskExecutions}, local activities ${t.maxConcurrentLocalActivityExecutions})`;
  }
  return {
    options,
    summary: {
      maxCachedWorkflows: cache,
      cache: tuning.maxCachedWorkflows === 'auto' ? 'auto' : 'set',
      heapLimitMb: heapMb,
      cacheEstimateMb,
      tuner,
      workflowPollers: describePoller(
        options.workflowTaskPollerBehavior?.type === 'simple-maximum'
          ? { mode: 'maximum', maximum: options.workflowTaskPollerBehavior.maximum ?? 0 }
          : tuning.workflowPollers,
      ),
      activityPollers: describePoller(tuning.activityPollers),
      stickyQueueTimeoutMs: tuning.stickyQueueTimeoutMs,
    },
    warnings,
  };
}

/** The WorkerOptions of config.worker (see resolveWorkerTuning for the figures). */
export function workerTuningOptions(tuning: WorkerTuningConfig, heapMb?: number): Partial<WorkerOptions> {
  return resolveWorkerTuning(tuning, heapMb).options;
}

const SLOT_FIELDS = [
  'maxConcurrentWorkflowTaskExecutions',
  'maxConcurrentActivityTaskExecutions',
  'maxConcurrentLocalActivityExecutions',
] as const;

/**
 * `tuning` under `overrides` (overrides win), keeping the result acceptable to the SDK: a tuner in the
 * overrides drops the tuning's slot counts, slot counts in the overrides drop the tuning's tuner.
 */
export function withTuning(
  tuning: Partial<WorkerOptions> | undefined,
  overrides: Partial<WorkerOptions> | undefined,
): Partial<WorkerOptions> {
  const base: Partial<WorkerOptions> = { ...tuning };
  if (overrides?.tuner !== undefined) for (const f of SLOT_FIELDS) delete base[f];
  if (SLOT_FIELDS.some((f) => overrides?.[f] !== undefined)) delete base.tuner;
  return { ...base, ...overrides };
}

type ActivityQueueTuning = Record<ActivityQueue, Partial<WorkerOptions>>;

/** config.taskQueues → the money and reads workers' slots, pollers and (money) rate at the server. */
export function activityQueueTuning(queues: TaskQueuesConfig): ActivityQueueTuning {
  const fixed = (q: { slots: number; pollers: number }): Partial<WorkerOptions> => ({
    maxConcurrentActivityTaskExecutions: q.slots,
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: q.pollers },
  });
  return {
    // The rate at the server, set by every money poller (all workers of a deployment share it, the last
    // poll wins), and in this process: its sends start at least 1/rate apart (./send-pacing.ts).
    money: {
      ...fixed(queues.money),
      maxTaskQueueActivitiesPerSecond: queues.money.perSecond,
      interceptors: { activity: [pacedActivities(queues.money.perSecond)] },
    },
    reads: fixed(queues.reads),
  };
}

/** The activity queues' tuning at the defaults (embedded workers that pass none). */
export const ACTIVITY_QUEUE_DEFAULT_TUNING: ActivityQueueTuning = activityQueueTuning(taskQueuesConfig({}));
