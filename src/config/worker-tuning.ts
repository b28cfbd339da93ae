// Worker tuning (docs/operations.md "Tune the worker"): the workflow cache bound, task slots, pollers,
// the sticky queue timeout, and the resource-based tuner as an option. Spread into config.ts's zod
// schema; parsed with the rest of the config, so a bad value or a combination the SDK refuses stops the
// process naming the variable. src/workers/tuning.ts turns the result into the SDK's WorkerOptions.
// This module does not import @temporalio/worker (config is loaded by processes that never run a worker).
import { z } from 'zod';
import { durationMs } from '../shared/duration';
import { WORKFLOW_STACK_TRACE_MODES } from '../shared/workflow-stack-traces';

/**
 * The defaults, one place. Each entry says which benchmark figure set it (bench/, docs/configuration.md "Worker tuning").
 * Until the figures are in, the values are the SDK's own defaults, except the cache bound (the SDK sizes
 * its cache from the heap at ~1.7 MB per flow, which let ~2,300 waiting card flows reach the heap limit).
 */
export const WORKER_TUNING_DEFAULTS = {
  /**
   * Ceiling of the workflow cache when WORKER_MAX_CACHED_WORKFLOWS is `auto`. Set from bench (waiting):
   * an idle worker holds about 480 MiB RSS and each cached waiting card flow about 0.78 MiB, so 500
   * cached flows keep the worker near 870 MiB, under the 1 GiB target with any number waiting; an
   * evicted flow's OTP was answered in a p50 of 0.5 s (its history replayed), docs/performance.md.
   */
  maxCachedWorkflows: 500,
  /** Memory one cached (waiting) workflow holds, in MB: sizes the `auto` cache. Set from bench (waiting): 777 KiB per card flow waiting for its OTP (1.35 MB before flows were loaded lazily). */
  cachedWorkflowMb: 0.8,
  /** Heap the worker needs with an empty cache, in MB (bundle, activities, clients): kept out of the `auto` cache. Set from bench (waiting): an idle worker's RSS is about 480 MiB under tsx, less from the prebuilt bundle. */
  heapBaselineMb: 400,
  /** Workflow task slots (fixed tuner). SDK default, kept: on 2 cores the bench's `overhead` runs are CPU-bound, not slot-bound. */
  maxConcurrentWorkflowTaskExecutions: 40,
  /**
   * Activity task slots (fixed tuner). Set from bench (pos-poll): a POS remote request is polled by one
   * heartbeating activity that holds its slot for the request's life (up to 7 minutes, mostly asleep).
   * With the SDK's 100 slots, 500 open requests left 400 polling activities unstarted until slots
   * freed; 1000 slots cost little memory (each waiting activity is a timer) and cover 500 open requests
   * with room for the payments around them.
   */
  maxConcurrentActivityTaskExecutions: 1000,
  /**
   * Local activity slots (fixed tuner), the SDK's default. Flows do use local activities: the vend's
   * lookup (LOCAL_READ) and the hand-over of merchant events (LOCAL_EMIT); each is short and a flow
   * runs one at a time, so 100 is far from full.
   */
  maxConcurrentLocalActivityExecutions: 100,
  /** Workflow task pollers (simple maximum). SDK default, kept: `auto` measured the same in the bench's `overhead` (vend 0.53 vs 0.52 of the baseline). */
  workflowPollers: 10,
  /** Activity task pollers (simple maximum). SDK default, kept (as the workflow pollers). */
  activityPollers: 10,
  /** How long a workflow task waits on this worker's sticky queue before any worker may take it. SDK default (10 s): the bench runs one worker, so it never decides. */
  stickyQueueTimeout: '10s',
  /** `fixed` slot counts, or the SDK's resource-based tuner. Set from bench (`overhead`): resource-based cut vend throughput to 0.36 of the baseline (fixed: 0.52) and raised worker CPU per vend 34 → 49 ms. */
  tuner: 'fixed',
  /** Resource-based tuner: target share of the machine's memory (the SDK's example value). */
  tunerTargetMemory: 0.8,
  /** Resource-based tuner: target share of the machine's CPU (the SDK's example value). */
  tunerTargetCpu: 0.9,
} as const;

/** Never fewer cached workflows than this in `auto` (the SDK's own floor). */
export const AUTO_CACHE_FLOOR = 10;

/** A whole number from `min` to `max` (optional); also the task-queue settings' (./task-queues.ts). */
export const count = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional();
const countOrAuto = (min: number, max: number, autoMeaning: string) =>
  z
    .string()
    .refine(
      (v) => v === 'auto' || (/^\d+$/.test(v) && Number(v) >= min && Number(v) <= max),
      `must be a whole number from ${min} to ${max}, or "auto" (${autoMeaning})`,
    )
    .optional();
const share = z
  .string()
  .refine((v) => /^(0(\.\d+)?|1(\.0+)?)$/.test(v) && Number(v) > 0, 'must be a share above 0 and at most 1, e.g. 0.8')
  .optional();
const stickyTimeout = z
  .string()
  .refine((v) => {
    try {
      const ms = durationMs(/^\d+$/.test(v) ? Number(v) : v);
      return ms >= 1_000 && ms <= 300_000;
    } catch {
      return false;
    }
  }, 'must be a duration from 1s to 5 minutes, such as "10s" (or milliseconds)')
  .optional();

export const workerTuningEnvShape = {
  // `auto`: as many as the heap holds (heap limit − baseline) / MB per cached flow, at most the default ceiling; 0 disables the cache.
  WORKER_MAX_CACHED_WORKFLOWS: z
    .string()
    .refine(
      (v) => v === 'auto' || (/^\d+$/.test(v) && Number(v) !== 1 && Number(v) <= 100_000),
      'must be "auto", 0 (no cache) or a whole number from 2 to 100000',
    )
    .optional(),
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: count(2, 10_000),
  WORKER_MAX_CONCURRENT_ACTIVITIES: count(1, 10_000),
  WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: count(1, 10_000),
  WORKER_WORKFLOW_POLLERS: countOrAuto(2, 1_000, 'pollers scale with the server'),
  WORKER_ACTIVITY_POLLERS: countOrAuto(1, 1_000, 'pollers scale with the server'),
  WORKER_STICKY_QUEUE_TIMEOUT: stickyTimeout,
  WORKER_TUNER: z.enum(['fixed', 'resource-based'], { error: 'must be fixed or resource-based' }).optional(),
  WORKER_TUNER_TARGET_MEMORY: share,
  WORKER_TUNER_TARGET_CPU: share,
  // Read by the worker's preload (src/workers/workflow-stack-traces.ts); validated here so a typo stops the process.
  WORKER_WORKFLOW_STACK_TRACES: z.enum(WORKFLOW_STACK_TRACE_MODES, { error: 'must be on or off' }).optional(),
};

type WorkerTuningEnv = { [K in keyof typeof workerTuningEnvShape]?: z.output<(typeof workerTuningEnvShape)[K]> };

/** Pollers: a fixed maximum, or autoscaling (the SDK's: 1 minimum, 5 initially, 100 at most). */
export type PollerSetting = { mode: 'maximum'; maximum: number } | { mode: 'autoscaling' };

export interface WorkerTuningConfig {
  /** `auto`: sized from the heap at start (src/workers/tuning.ts); 0: no cache. */
  maxCachedWorkflows: number | 'auto';
  tuner:
    | {
        kind: 'fixed';
        maxConcurrentWorkflowTaskExecutions: number;
        maxConcurrentActivityTaskExecutions: number;
        maxConcurrentLocalActivityExecutions: number;
      }
    | { kind: 'resource-based'; targetMemoryUsage: number; targetCpuUsage: number };
  workflowPollers: PollerSetting;
  activityPollers: PollerSetting;
  /** Milliseconds. */
  stickyQueueTimeoutMs: number;
}

const D = WORKER_TUNING_DEFAULTS;
const poller = (v: string | undefined, fallback: number): PollerSetting =>
  v === 'auto' ? { mode: 'autoscaling' } : { mode: 'maximum', maximum: v === undefined ? fallback : Number(v) };

/** Workflow task slots: as set, else the default, lowered to a smaller cache that is set (never above it). */
function defaultWorkflowSlots(env: WorkerTuningEnv): number {
  if (env.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS !== undefined) return env.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS;
  const cache = env.WORKER_MAX_CACHED_WORKFLOWS;
  if (cache !== undefined && cache !== 'auto' && Number(cache) > 0) {
    return Math.min(D.maxConcurrentWorkflowTaskExecutions, Number(cache));
  }
  return D.maxConcurrentWorkflowTaskExecutions;
}

/** Combinations the SDK refuses or silently changes, each reported on the variable to change. */
export function workerTuningIssues(env: WorkerTuningEnv): { variable: string; message: string }[] {
  const issues: { variable: string; message: string }[] = [];
  const resourceBased = env.WORKER_TUNER === 'resource-based';
  const slotVariables = [
    'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
    'WORKER_MAX_CONCURRENT_ACTIVITIES',
    'WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES',
  ] as const;
  if (resourceBased) {
    for (const variable of slotVariables) {
      if (env[variable] !== undefined) {
        issues.push({
          variable,
          message:
            'must not be set with WORKER_TUNER=resource-based (the tuner decides the slots; the SDK refuses both)',
        });
      }
    }
  } else {
    for (const variable of ['WORKER_TUNER_TARGET_MEMORY', 'WORKER_TUNER_TARGET_CPU'] as const) {
      if (env[variable] !== undefined) {
        issues.push({ variable, message: 'applies only with WORKER_TUNER=resource-based' });
      }
    }
    const workflowSlots = defaultWorkflowSlots(env);
    const activitySlots = env.WORKER_MAX_CONCURRENT_ACTIVITIES ?? D.maxConcurrentActivityTaskExecutions;
    const cache = env.WORKER_MAX_CACHED_WORKFLOWS;
    const explicitSlots = env.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS;
    if (
      explicitSlots !== undefined &&
      cache !== undefined &&
      cache !== 'auto' &&
      Number(cache) > 0 &&
      explicitSlots > Number(cache)
    ) {
      issues.push({
        variable: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
        message: `must not exceed WORKER_MAX_CACHED_WORKFLOWS (${cache}): a workflow task runs in a cached workflow (the SDK would lower it)`,
      });
    }
    const pollers = [
      ['WORKER_WORKFLOW_POLLERS', 'workflow', workflowSlots, 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS'],
      ['WORKER_ACTIVITY_POLLERS', 'activity', activitySlots, 'WORKER_MAX_CONCURRENT_ACTIVITIES'],
    ] as const;
    for (const [variable, kind, slots, slotVariable] of pollers) {
      const value = env[variable];
      if (value !== undefined && value !== 'auto' && Number(value) > slots)
        issues.push({ variable, message: `must not exceed the ${kind} task slots (${slots}, ${slotVariable})` });
    }
  }
  return issues;
}

export function workerTuningConfig(env: WorkerTuningEnv): WorkerTuningConfig {
  const cache = env.WORKER_MAX_CACHED_WORKFLOWS ?? 'auto';
  const sticky = env.WORKER_STICKY_QUEUE_TIMEOUT ?? D.stickyQueueTimeout;
  const resourceBased = env.WORKER_TUNER === 'resource-based';
  const workflowSlots = defaultWorkflowSlots(env);
  const activitySlots = env.WORKER_MAX_CONCURRENT_ACTIVITIES ?? D.maxConcurrentActivityTaskExecutions;
  return {
    maxCachedWorkflows: cache === 'auto' ? 'auto' : Number(cache),
    tuner: resourceBased
      ? {
          kind: 'resource-based',
          targetMemoryUsage: Number(env.WORKER_TUNER_TARGET_MEMORY ?? D.tunerTargetMemory),
          targetCpuUsage: Number(env.WORKER_TUNER_TARGET_CPU ?? D.tunerTargetCpu),
        }
      : {
          kind: 'fixed',
          maxConcurrentWorkflowTaskExecutions: workflowSlots,
          maxConcurrentActivityTaskExecutions: activitySlots,
          maxConcurrentLocalActivityExecutions:
            env.WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES ?? D.maxConcurrentLocalActivityExecutions,
        },
    // Unset, the pollers never outnumber the slots (as the SDK's own default: min(10, slots)).
    workflowPollers: poller(
      env.WORKER_WORKFLOW_POLLERS,
      resourceBased ? D.workflowPollers : Math.max(2, Math.min(D.workflowPollers, workflowSlots)),
    ),
    activityPollers: poller(
      env.WORKER_ACTIVITY_POLLERS,
      resourceBased ? D.activityPollers : Math.min(D.activityPollers, activitySlots),
    ),
    stickyQueueTimeoutMs: durationMs(/^\d+$/.test(sticky) ? Number(sticky) : sticky),
  };
}
