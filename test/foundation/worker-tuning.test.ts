// config.worker → WorkerOptions (src/workers/tuning.ts): the mapping, the `auto` cache sized from the
// heap, the merge under a caller's overrides, and the SDK taking the result as it is (no refusal, no
// warning that it changed a value), then a real worker on the dev server with each tuner.
import { randomUUID } from 'node:crypto';
import type { WorkerOptions } from '@temporalio/worker';
import { compileWorkerOptions, toNativeWorkerOptions } from '@temporalio/worker/lib/worker-options';
import { loadConfig, WORKER_TUNING_DEFAULTS } from '../../src/config/config';
import { AUTO_CACHE_FLOOR } from '../../src/config/worker-tuning';
import { autoCachedWorkflows, resolveWorkerTuning, withTuning, workerTuningOptions } from '../../src/workers/tuning';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createFoundationActivities } from '../fixtures/foundation-activities';
import type { cardEchoWorkflow } from '../fixtures/foundation-workflows';
import { LogCapture, testConfig, withWorker, workflowBundle } from '../support/stack';

const tuningOf = (env: Record<string, string>) => loadConfig(env).worker;
const D = WORKER_TUNING_DEFAULTS;

describe('the auto cache', () => {
  it('holds what the heap holds above the baseline, at most the default ceiling, at least the floor', () => {
    const fits = (heapMb: number) => Math.floor((heapMb - D.heapBaselineMb) / D.cachedWorkflowMb);
    expect(autoCachedWorkflows(4144)).toBe(Math.min(D.maxCachedWorkflows, fits(4144)));
    expect(autoCachedWorkflows(768)).toBe(fits(768));
    expect(autoCachedWorkflows(768)).toBeLessThan(D.maxCachedWorkflows);
    expect(autoCachedWorkflows(100)).toBe(AUTO_CACHE_FLOOR);
  });
});

describe('workerTuningOptions', () => {
  it('maps the defaults to fixed slots, simple-maximum pollers, the sticky timeout and a bounded cache', () => {
    expect(workerTuningOptions(tuningOf({}), 4144)).toEqual({
      maxCachedWorkflows: autoCachedWorkflows(4144),
      stickyQueueScheduleToStartTimeout: 10_000,
      maxConcurrentWorkflowTaskExecutions: D.maxConcurrentWorkflowTaskExecutions,
      maxConcurrentActivityTaskExecutions: D.maxConcurrentActivityTaskExecutions,
      maxConcurrentLocalActivityExecutions: D.maxConcurrentLocalActivityExecutions,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: D.workflowPollers },
      activityTaskPollerBehavior: { type: 'simple-maximum', maximum: D.activityPollers },
    });
  });

  it('maps set values, autoscaling pollers and a disabled cache', () => {
    expect(
      workerTuningOptions(
        tuningOf({
          WORKER_MAX_CACHED_WORKFLOWS: '0',
          WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '80',
          WORKER_MAX_CONCURRENT_ACTIVITIES: '30',
          WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '5',
          WORKER_WORKFLOW_POLLERS: 'auto',
          WORKER_ACTIVITY_POLLERS: '3',
          WORKER_STICKY_QUEUE_TIMEOUT: '1 minute',
        }),
        4144,
      ),
    ).toEqual({
      maxCachedWorkflows: 0,
      stickyQueueScheduleToStartTimeout: 60_000,
      maxConcurrentWorkflowTaskExecutions: 80,
      maxConcurrentActivityTaskExecutions: 30,
      maxConcurrentLocalActivityExecutions: 5,
      workflowTaskPollerBehavior: { type: 'autoscaling' },
      activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 3 },
    });
  });

  it('maps the resource-based tuner without slot counts, its workflow slots within the cache', () => {
    const options = workerTuningOptions(
      tuningOf({
        WORKER_TUNER: 'resource-based',
        WORKER_TUNER_TARGET_MEMORY: '0.6',
        WORKER_MAX_CACHED_WORKFLOWS: '300',
      }),
      4144,
    );
    expect(options).toEqual({
      maxCachedWorkflows: 300,
      stickyQueueScheduleToStartTimeout: 10_000,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: D.workflowPollers },
      activityTaskPollerBehavior: { type: 'simple-maximum', maximum: D.activityPollers },
      tuner: {
        tunerOptions: { targetMemoryUsage: 0.6, targetCpuUsage: D.tunerTargetCpu },
        workflowTaskSlotOptions: { maximumSlots: 300 },
      },
    });
  });

  it('lowers the workflow slots and pollers to an auto cache that a small heap makes smaller', () => {
    const heap = D.heapBaselineMb + 10.5 * D.cachedWorkflowMb; // room for 10 cached workflows, not 11
    const options = workerTuningOptions(
      tuningOf({ WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '40', WORKER_WORKFLOW_POLLERS: '20' }),
      heap,
    );
    expect(options).toMatchObject({
      maxCachedWorkflows: 10,
      maxConcurrentWorkflowTaskExecutions: 10,
      workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 10 },
    });
  });

  it('warns when a set cache will not fit the heap, with the figures', () => {
    const { warnings, summary } = resolveWorkerTuning(tuningOf({ WORKER_MAX_CACHED_WORKFLOWS: '2000' }), 768);
    expect(summary).toMatchObject({ maxCachedWorkflows: 2000, cache: 'set', heapLimitMb: 768 });
    expect(warnings).toEqual([expect.stringContaining('WORKER_MAX_CACHED_WORKFLOWS=2000')]);
    expect(warnings[0]).toContain('768 MB');
    expect(resolveWorkerTuning(tuningOf({}), 768).warnings).toEqual([]);
  });
});

describe('withTuning: overrides win', () => {
  const fixed = workerTuningOptions(tuningOf({}), 4144);
  const resourceBased = workerTuningOptions(tuningOf({ WORKER_TUNER: 'resource-based' }), 4144);

  it('takes an override over the tuning, field by field', () => {
    expect(withTuning(fixed, { maxCachedWorkflows: 7, shutdownGraceTime: '75s' })).toEqual({
      ...fixed,
      maxCachedWorkflows: 7,
      shutdownGraceTime: '75s',
    });
    expect(withTuning(undefined, { maxCachedWorkflows: 7 })).toEqual({ maxCachedWorkflows: 7 });
    expect(withTuning(fixed, undefined)).toEqual(fixed);
  });

  it('keeps the result acceptable to the SDK: a tuner override drops the slots, a slot override drops the tuner', () => {
    const tuner = resourceBased.tuner!;
    const overTuner = withTuning(fixed, { tuner });
    expect(overTuner.tuner).toBe(tuner);
    expect(overTuner).not.toHaveProperty('maxConcurrentWorkflowTaskExecutions');
    expect(overTuner).not.toHaveProperty('maxConcurrentActivityTaskExecutions');
    expect(overTuner).not.toHaveProperty('maxConcurrentLocalActivityExecutions');
    const overSlots = withTuning(resourceBased, { maxConcurrentActivityTaskExecutions: 3 });
    expect(overSlots).not.toHaveProperty('tuner');
    expect(overSlots.maxConcurrentActivityTaskExecutions).toBe(3);
  });
});

describe('the SDK takes the mapped options as they are', () => {
  it.each<[string, Record<string, string>]>([
    ['defaults', {}],
    [
      'set values, autoscaling workflow pollers',
      {
        WORKER_MAX_CACHED_WORKFLOWS: '200',
        WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '100',
        WORKER_MAX_CONCURRENT_ACTIVITIES: '50',
        WORKER_WORKFLOW_POLLERS: 'auto',
        WORKER_STICKY_QUEUE_TIMEOUT: '5s',
      },
    ],
    ['resource-based tuner', { WORKER_TUNER: 'resource-based', WORKER_ACTIVITY_POLLERS: 'auto' }],
  ])('%s', (_name, env) => {
    const warnings: string[] = [];
    const logger = {
      log: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: (message: string) => void warnings.push(message),
      error: (message: string) => void warnings.push(message),
    };
    const options = workerTuningOptions(tuningOf(env), 4144);
    const compiled = compileWorkerOptions(
      { taskQueue: 'tuning', activities: {}, workflowsPath: __filename, ...options } as WorkerOptions,
      logger,
      undefined as never,
    );
    expect(warnings).toEqual([]);
    expect(compiled.maxCachedWorkflows).toBe(options.maxCachedWorkflows);
    expect(compiled.stickyQueueScheduleToStartTimeoutMs).toBe(options.stickyQueueScheduleToStartTimeout);
    const native = toNativeWorkerOptions({ ...compiled, buildId: 'tuning' });
    expect(native.maxCachedWorkflows).toBe(options.maxCachedWorkflows);
    expect(native.workflowTaskPollerBehavior.type).toBe(options.workflowTaskPollerBehavior!.type);
  });
});

describe('a worker on the dev server, tuned from config', () => {
  const capture = new LogCapture();
  installTemporalRuntime(createLogger({ destination: capture, level: 'warn' }));

  it.each<[string, Record<string, string>]>([
    [
      'fixed slots, small cache, autoscaling pollers',
      {
        WORKER_MAX_CACHED_WORKFLOWS: '4',
        WORKER_WORKFLOW_POLLERS: 'auto',
        WORKER_ACTIVITY_POLLERS: 'auto',
        WORKER_STICKY_QUEUE_TIMEOUT: '3s',
      },
    ],
    ['resource-based tuner', { WORKER_TUNER: 'resource-based', WORKER_TUNER_TARGET_MEMORY: '0.9' }],
  ])('runs a workflow and its activity: %s', async (_name, env) => {
    const config = testConfig(env);
    const foundation = {
      activities: createFoundationActivities(),
      workflowBundle: await workflowBundle(require.resolve('../fixtures/foundation-workflows')),
    };
    const result = await withWorker(config, { ...foundation, tuning: workerTuningOptions(config.worker) }, (client) =>
      client.workflow.execute<typeof cardEchoWorkflow>('cardEchoWorkflow', {
        workflowId: `tuning-${randomUUID()}`,
        taskQueue: config.temporal.taskQueue,
        args: [{ cardNumber: '4000000000000002', amount: 100 }],
      }),
    );
    expect(result).toBe('card 4000000000000002 charged 100');
    // No SDK warning that it changed or refused a value.
    expect(capture.records.filter((r) => /maxCached|maxConcurrent|tuner/i.test(String(r.msg)))).toEqual([]);
  });
});
