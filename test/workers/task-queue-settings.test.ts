// The task-queue layout's settings (src/config/task-queues.ts) and the names every side derives
// (src/shared/task-queues.ts): what a deployment sets, what is refused and why, and the WorkerOptions
// the money and reads workers get (src/workers/tuning.ts, src/workers/worker-group.ts).
import type { WorkerOptions } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { activityTaskQueue, mainTaskQueueOf } from '../../src/shared/task-queues';
import { activityQueueTuning } from '../../src/workers/tuning';
import { activityWorkerOptions } from '../../src/workers/worker-group';
import { basename } from 'node:path';
import {
  ACTIVITY_QUEUES_INTERCEPTOR_PATH,
  bundleInterceptorModules,
  METRICS_INTERCEPTOR_PATH,
} from '../../src/workers/worker';
import { PREBUILT_BUNDLE_KINDS, prebuiltBundlePathFor, workflowBundleFile } from '../../src/workers/workflow-bundle';

const queuesOf = (env: Record<string, string>) => loadConfig(env).taskQueues;

describe('task-queue settings', () => {
  it('defaults: one queue, the main one, polled; the split sizes stand by (100 money sends/s, 200 and 1000 slots)', () => {
    expect(queuesOf({})).toEqual({
      layout: 'single',
      polled: ['workflows'],
      money: { perSecond: 100, slots: 200, pollers: 10 },
      reads: { slots: 1000, pollers: 10 },
    });
  });

  it('the split layout: all three queues in one process', () => {
    expect(queuesOf({ WORKER_TASK_QUEUE_LAYOUT: 'split' })).toMatchObject({
      layout: 'split',
      polled: ['workflows', 'money', 'reads'],
    });
  });

  it('a single-queue process may still poll the old activity queues, to drain them after a switch from split', () => {
    expect(queuesOf({ WORKER_TASK_QUEUE_LAYOUT: 'single', WORKER_TASK_QUEUES: 'workflows,money,reads' })).toMatchObject(
      { layout: 'single', polled: ['workflows', 'money', 'reads'] },
    );
    // Draining at the agreed rate: the rate is accepted where the money queue is polled.
    expect(queuesOf({ WORKER_TASK_QUEUES: 'workflows,money', MONEY_ACTIVITIES_PER_SECOND: '5' }).money.perSecond).toBe(
      5,
    );
  });

  it('a deployment splits the queues and sets the rate and sizes', () => {
    expect(
      queuesOf({
        WORKER_TASK_QUEUE_LAYOUT: 'split',
        WORKER_TASK_QUEUES: 'money, money',
        MONEY_ACTIVITIES_PER_SECOND: '2.5',
        WORKER_MONEY_ACTIVITIES: '4',
        WORKER_READS_ACTIVITIES: '5',
        WORKER_READS_POLLERS: '5',
      }),
    ).toEqual({
      layout: 'split',
      polled: ['money'],
      money: { perSecond: 2.5, slots: 4, pollers: 4 }, // pollers never above the slots
      reads: { slots: 5, pollers: 5 },
    });
  });

  it('the money slots follow the rate when not set: two seconds of it, at least one', () => {
    const split = { WORKER_TASK_QUEUE_LAYOUT: 'split' };
    expect(queuesOf({ ...split, MONEY_ACTIVITIES_PER_SECOND: '7' }).money).toEqual({
      perSecond: 7,
      slots: 14,
      pollers: 10,
    });
    expect(queuesOf({ ...split, MONEY_ACTIVITIES_PER_SECOND: '0.2' }).money).toEqual({
      perSecond: 0.2,
      slots: 1,
      pollers: 1,
    });
  });

  it.each([
    [{ WORKER_TASK_QUEUE_LAYOUT: 'Split' }, /WORKER_TASK_QUEUE_LAYOUT: must be one of single, split/],
    [{ WORKER_TASK_QUEUE_LAYOUT: 'money' }, /WORKER_TASK_QUEUE_LAYOUT: must be one of single, split/],
    // A rate the single queue cannot hold: refused rather than silently ignored.
    [
      { MONEY_ACTIVITIES_PER_SECOND: '50' },
      /MONEY_ACTIVITIES_PER_SECOND: holds sends only on the split layout \(WORKER_TASK_QUEUE_LAYOUT=split\)/,
    ],
    [{ WORKER_TASK_QUEUES: 'workflows,payments' }, /WORKER_TASK_QUEUES.*each must be one of workflows, money, reads/],
    [
      { WORKER_TASK_QUEUE_LAYOUT: 'split', MONEY_ACTIVITIES_PER_SECOND: '0' },
      /MONEY_ACTIVITIES_PER_SECOND: must be above 0/,
    ],
    [
      { WORKER_TASK_QUEUE_LAYOUT: 'split', MONEY_ACTIVITIES_PER_SECOND: 'fast' },
      /MONEY_ACTIVITIES_PER_SECOND: must be a number of sends per second/,
    ],
    [{ WORKER_MONEY_ACTIVITIES: '0' }, /WORKER_MONEY_ACTIVITIES: must be at least 1/],
    [{ WORKER_MONEY_ACTIVITIES: '8', WORKER_MONEY_POLLERS: '9' }, /WORKER_MONEY_POLLERS: must not exceed .* \(8\)/],
    [{ WORKER_READS_POLLERS: '1001' }, /WORKER_READS_POLLERS: must be at most 1000/],
  ])('refuses %j, naming the variable and the rule', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('the queue names', () => {
  it('are the main queue with a suffix, and the main queue is found again from either', () => {
    expect(activityTaskQueue('payments', 'money')).toBe('payments-money');
    expect(activityTaskQueue('payments', 'reads')).toBe('payments-reads');
    for (const queue of ['payments', 'payments-money', 'payments-reads'])
      expect(mainTaskQueueOf(queue)).toBe('payments');
  });
});

describe('the activity workers', () => {
  const main = {
    taskQueue: 'payments',
    namespace: 'ns',
    activities: { a: async () => 1 },
    workflowBundle: { code: '' },
    nexusServices: [],
    maxCachedWorkflows: 500,
    maxConcurrentActivityTaskExecutions: 1000,
    shutdownGraceTime: '75s',
    interceptors: { workflowModules: ['m'], activity: [] },
  } as unknown as WorkerOptions;

  it('the money worker: the main worker options without workflows, on <queue>-money, at the rate, paced', () => {
    const tuning = activityQueueTuning(
      loadConfig({ WORKER_TASK_QUEUE_LAYOUT: 'split', MONEY_ACTIVITIES_PER_SECOND: '7' }).taskQueues,
    );
    const money = activityWorkerOptions(main, 'money', tuning.money);
    expect(money).toMatchObject({
      taskQueue: 'payments-money',
      namespace: 'ns',
      activities: main.activities,
      shutdownGraceTime: '75s',
      maxTaskQueueActivitiesPerSecond: 7,
      maxConcurrentActivityTaskExecutions: 14,
      activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 10 },
    });
    // The main worker's activity interceptors (none here), then the money queue's pacing.
    expect(money.interceptors?.activity).toEqual(tuning.money.interceptors?.activity);
    expect(money.interceptors?.activity).toHaveLength(1);
    for (const key of ['workflowBundle', 'nexusServices', 'maxCachedWorkflows'] as const)
      expect(money).not.toHaveProperty(key);
  });

  it('the reads worker: its own slots, no rate', () => {
    const reads = activityWorkerOptions(main, 'reads', activityQueueTuning(loadConfig({}).taskQueues).reads);
    expect(reads).toMatchObject({ taskQueue: 'payments-reads', maxConcurrentActivityTaskExecutions: 1000 });
    expect(reads).not.toHaveProperty('maxTaskQueueActivitiesPerSecond');
    expect(reads.interceptors).toEqual({});
  });
});

describe('the layout reaches flows through the bundle', () => {
  it('a split bundle carries the activity-queue interceptor module (first), a single one does not', () => {
    expect(bundleInterceptorModules({ layout: 'single', traced: false })).toEqual([METRICS_INTERCEPTOR_PATH]);
    expect(bundleInterceptorModules({ layout: 'split', traced: false })).toEqual([
      ACTIVITY_QUEUES_INTERCEPTOR_PATH,
      METRICS_INTERCEPTOR_PATH,
    ]);
    expect(bundleInterceptorModules({ layout: 'split', traced: true })).toHaveLength(3);
  });

  it('`npm run build` writes a bundle per layout and tracing; the worker loads its layout’s', () => {
    expect(PREBUILT_BUNDLE_KINDS.map(workflowBundleFile)).toEqual([
      'workflow-bundle.js',
      'workflow-bundle-traced.js',
      'workflow-bundle-split.js',
      'workflow-bundle-split-traced.js',
    ]);
    // No tracing installed in this test: the plain bundle of each layout.
    expect(basename(prebuiltBundlePathFor('single'))).toBe('workflow-bundle.js');
    expect(basename(prebuiltBundlePathFor('split'))).toBe('workflow-bundle-split.js');
  });
});
