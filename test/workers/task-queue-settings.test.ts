// The task-queue layout's settings (src/config/task-queues.ts) and the names every side derives
// (src/shared/task-queues.ts): what a deployment sets, what is refused and why, and the WorkerOptions
// the money and reads workers get (src/workers/tuning.ts, src/workers/worker-group.ts).
import type { WorkerOptions } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { activityTaskQueue, mainTaskQueueOf } from '../../src/shared/task-queues';
import { activityQueueTuning } from '../../src/workers/tuning';
import { activityWorkerOptions } from '../../src/workers/worker-group';

const queuesOf = (env: Record<string, string>) => loadConfig(env).taskQueues;

describe('task-queue settings', () => {
  it('defaults: all three queues in one process, 100 money sends/s, 200 money and 1000 reads slots', () => {
    expect(queuesOf({})).toEqual({
      polled: ['workflows', 'money', 'reads'],
      money: { perSecond: 100, slots: 200, pollers: 10 },
      reads: { slots: 1000, pollers: 10 },
    });
  });

  it('a deployment splits the queues and sets the rate and sizes', () => {
    expect(
      queuesOf({
        WORKER_TASK_QUEUES: 'money, money',
        MONEY_ACTIVITIES_PER_SECOND: '2.5',
        WORKER_MONEY_ACTIVITIES: '4',
        WORKER_READS_ACTIVITIES: '5',
        WORKER_READS_POLLERS: '5',
      }),
    ).toEqual({
      polled: ['money'],
      money: { perSecond: 2.5, slots: 4, pollers: 4 }, // pollers never above the slots
      reads: { slots: 5, pollers: 5 },
    });
  });

  it('the money slots follow the rate when not set: two seconds of it, at least one', () => {
    expect(queuesOf({ MONEY_ACTIVITIES_PER_SECOND: '7' }).money).toEqual({ perSecond: 7, slots: 14, pollers: 10 });
    expect(queuesOf({ MONEY_ACTIVITIES_PER_SECOND: '0.2' }).money).toEqual({ perSecond: 0.2, slots: 1, pollers: 1 });
  });

  it.each([
    [{ WORKER_TASK_QUEUES: 'workflows,payments' }, /WORKER_TASK_QUEUES.*each must be one of workflows, money, reads/],
    [{ MONEY_ACTIVITIES_PER_SECOND: '0' }, /MONEY_ACTIVITIES_PER_SECOND: must be above 0/],
    [{ MONEY_ACTIVITIES_PER_SECOND: 'fast' }, /MONEY_ACTIVITIES_PER_SECOND: must be a number of sends per second/],
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
    const tuning = activityQueueTuning(loadConfig({ MONEY_ACTIVITIES_PER_SECOND: '7' }).taskQueues);
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
