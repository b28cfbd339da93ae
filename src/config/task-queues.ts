// The task-queue layout of the worker process (docs/deployment.md, "Task queues"; docs/configuration.md):
// one queue (default) or split (WORKER_TASK_QUEUE_LAYOUT), which queues a process polls, and the money
// and reads queues' slots, pollers and the money queue's rate at the server. Spread into config.ts's zod schema. The defaults and the figures behind them are
// in docs/performance.md ("Task-queue sizes") and docs/choices.md (the money rate).
import { z } from 'zod';
import { TASK_QUEUE_LAYOUTS, WORKER_QUEUES, type TaskQueueLayout, type WorkerQueue } from '../shared/task-queues';
import { count } from './worker-tuning';

export const TASK_QUEUE_DEFAULTS = {
  /**
   * Money sends per second, whole queue (all workers) at the server and each process's own pace
   * (src/workers/send-pacing.ts). The service's rate limits are not shown (spec, Limits): 100/s is
   * above what one 2-core worker sends at its measured ceiling (bench `overhead`, production config:
   * vend 41.9 flows/s with one purchase (H3) each, card 20.7 flows/s with three sends each, 62/s), so it never
   * slows a deployment of that size, and it caps a backlog drained after an outage, or many workers
   * scaled out, at 100 sends/s (docs/choices.md). Set it to the rate agreed with the service.
   */
  moneyActivitiesPerSecond: 100,
  /**
   * Money send slots: the rate times a send's slow latency (Little's law), 2 s: the bench's vend p99 for
   * a whole flow (`overhead`), above any single send's. Derived from the rate when not set, so a
   * lower rate holds fewer sends waiting for their turn; a slower service fills the slots and the queue
   * waits, which is the back-pressure a struggling service needs.
   */
  moneySlotSeconds: 2,
  /** Money pollers: the SDK default (bench `overhead`: `auto` measured the same as 10). */
  moneyPollers: 10,
  /**
   * Reads slots: the POS remote poll holds one for the request's life (up to 7 minutes, mostly asleep);
   * bench `pos-poll` needed 500 open requests polled on time, so 1000 covers them and the reads around them.
   */
  readsActivitySlots: 1000,
  /** Reads pollers: the SDK default, as the money pollers. */
  readsPollers: 10,
} as const;

export const taskQueuesEnvShape = {
  // One queue (eager activities) unless the deployment needs a send limit shared by all its workers.
  WORKER_TASK_QUEUE_LAYOUT: z
    .enum(TASK_QUEUE_LAYOUTS, { error: `must be one of ${TASK_QUEUE_LAYOUTS.join(', ')}` })
    .optional(),
  // Which queues this process polls: the layout's (the main one; all three when split); a split
  // deployment may spread them across processes, a single one may drain the old ones (docs/deployment.md).
  WORKER_TASK_QUEUES: z
    .string()
    .transform((v) => v.split(',').map((q) => q.trim()))
    .pipe(
      z
        .array(z.enum(WORKER_QUEUES, { error: `each must be one of ${WORKER_QUEUES.join(', ')}` }))
        .min(1, 'must name at least one queue'),
    )
    .optional(),
  MONEY_ACTIVITIES_PER_SECOND: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'must be a number of sends per second, e.g. 50 or 0.5')
    .transform(Number)
    .pipe(z.number().positive('must be above 0').max(100_000, 'must be at most 100000'))
    .optional(),
  WORKER_MONEY_ACTIVITIES: count(1, 10_000),
  WORKER_MONEY_POLLERS: count(1, 1_000),
  WORKER_READS_ACTIVITIES: count(1, 10_000),
  WORKER_READS_POLLERS: count(1, 1_000),
};

type TaskQueuesEnv = { [K in keyof typeof taskQueuesEnvShape]?: z.output<(typeof taskQueuesEnvShape)[K]> };

export interface ActivityQueueSettings {
  slots: number;
  pollers: number;
}

export interface TaskQueuesConfig {
  /** Where flows put their activities: the workflow bundle the worker loads carries it (src/workers/worker.ts). */
  layout: TaskQueueLayout;
  /** The queues this process polls. */
  polled: WorkerQueue[];
  money: ActivityQueueSettings & { perSecond: number };
  reads: ActivityQueueSettings;
}

/** The money slots when WORKER_MONEY_ACTIVITIES is not set: two seconds of the rate, at least 1. */
function moneySlotsFor(env: TaskQueuesEnv): number {
  const D = TASK_QUEUE_DEFAULTS;
  return Math.max(1, Math.ceil((env.MONEY_ACTIVITIES_PER_SECOND ?? D.moneyActivitiesPerSecond) * D.moneySlotSeconds));
}

/** The queues a process of `layout` polls unless WORKER_TASK_QUEUES says otherwise. */
export function defaultPolledQueues(layout: TaskQueueLayout): WorkerQueue[] {
  return layout === 'split' ? [...WORKER_QUEUES] : ['workflows'];
}

/**
 * Pollers above the slots would only wait, and a send rate on one queue would hold nothing (no money
 * queue, no limit at the server): reported on the variable to change.
 */
export function taskQueuesIssues(env: TaskQueuesEnv): { variable: string; message: string }[] {
  const D = TASK_QUEUE_DEFAULTS;
  const layout = env.WORKER_TASK_QUEUE_LAYOUT ?? 'single';
  const pollsMoney = (env.WORKER_TASK_QUEUES ?? defaultPolledQueues(layout)).includes('money');
  const rateWithoutQueue =
    env.MONEY_ACTIVITIES_PER_SECOND !== undefined && layout === 'single' && !pollsMoney
      ? [
          {
            variable: 'MONEY_ACTIVITIES_PER_SECOND',
            message:
              'holds sends only on the split layout (WORKER_TASK_QUEUE_LAYOUT=split): the single queue has no send limit',
          },
        ]
      : [];
  const pairs = [
    ['WORKER_MONEY_POLLERS', env.WORKER_MONEY_POLLERS, env.WORKER_MONEY_ACTIVITIES ?? moneySlotsFor(env)],
    ['WORKER_READS_POLLERS', env.WORKER_READS_POLLERS, env.WORKER_READS_ACTIVITIES ?? D.readsActivitySlots],
  ] as const;
  return [
    ...rateWithoutQueue,
    ...pairs.flatMap(([variable, pollers, slots]) =>
      pollers !== undefined && pollers > slots
        ? [{ variable, message: `must not exceed the queue's activity slots (${slots})` }]
        : [],
    ),
  ];
}

export function taskQueuesConfig(env: TaskQueuesEnv): TaskQueuesConfig {
  const D = TASK_QUEUE_DEFAULTS;
  const moneySlots = env.WORKER_MONEY_ACTIVITIES ?? moneySlotsFor(env);
  const readsSlots = env.WORKER_READS_ACTIVITIES ?? D.readsActivitySlots;
  const layout = env.WORKER_TASK_QUEUE_LAYOUT ?? 'single';
  return {
    layout,
    polled: [...new Set(env.WORKER_TASK_QUEUES ?? defaultPolledQueues(layout))],
    money: {
      perSecond: env.MONEY_ACTIVITIES_PER_SECOND ?? D.moneyActivitiesPerSecond,
      slots: moneySlots,
      pollers: env.WORKER_MONEY_POLLERS ?? Math.min(D.moneyPollers, moneySlots),
    },
    reads: { slots: readsSlots, pollers: env.WORKER_READS_POLLERS ?? Math.min(D.readsPollers, readsSlots) },
  };
}
