// The task queues of one deployment (docs/deployment.md, "Task queues"). By default one: workflow
// tasks and every activity on the main queue (TEMPORAL_TASK_QUEUE), so the SDK dispatches activities
// eagerly. The split layout (WORKER_TASK_QUEUE_LAYOUT=split) adds two activity queues named after it,
// so a worker and every flow agree on them without a setting of their own:
//  - `<main>-money`: the sends that move money, rate-limited at the server (MONEY_ACTIVITIES_PER_SECOND);
//  - `<main>-reads`: reads and polls of the service (verify, requery, lookups, POS remote polling).
// Imported by workflow code (src/workflows/steps/activity-queues.ts): plain strings only.

/** `single`: everything on the main queue (default); `split`: the money and reads queues as well. */
export const TASK_QUEUE_LAYOUTS = ['single', 'split'] as const;
export type TaskQueueLayout = (typeof TASK_QUEUE_LAYOUTS)[number];

/** The activity task queues besides the main one. */
export const ACTIVITY_QUEUES = ['money', 'reads'] as const;
export type ActivityQueue = (typeof ACTIVITY_QUEUES)[number];

/** The activity queue `queue` of the deployment whose workflow tasks run on `mainTaskQueue`. */
export function activityTaskQueue(mainTaskQueue: string, queue: ActivityQueue): string {
  return `${mainTaskQueue}-${queue}`;
}

/** The queues a worker process may poll (WORKER_TASK_QUEUES): the main one (`workflows`) and the activity queues. */
export const WORKER_QUEUES = ['workflows', ...ACTIVITY_QUEUES] as const;
export type WorkerQueue = (typeof WORKER_QUEUES)[number];

/**
 * The main task queue of the deployment an activity runs in, from the activity's own task queue: an
 * activity that starts or signals a workflow (the POS terminal lock) must put it where workflow tasks
 * are polled, not on the money or reads queue it may itself run on.
 */
export function mainTaskQueueOf(taskQueue: string): string {
  for (const queue of ACTIVITY_QUEUES) {
    const suffix = `-${queue}`;
    if (taskQueue.endsWith(suffix)) return taskQueue.slice(0, -suffix.length);
  }
  return taskQueue;
}
