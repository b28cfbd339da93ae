// The workers of one process, one per task queue it polls (docs/deployment.md, "Task queues"): the main
// queue's (workflows, Nexus, local activities and the activities of long-lived flows) and the activity
// queues' (money sends, rate-limited at the server; reads and polls), each with slots of its own. They
// run and stop together: one that stops or fails stops the others, so a process never half-runs.
import { Worker, type State, type WorkerOptions } from '@temporalio/worker';
import { activityTaskQueue, WORKER_QUEUES, type ActivityQueue, type WorkerQueue } from '../shared/task-queues';

/** Options an activity-only worker has no use for (workflows, Nexus, the workflow cache and slots). */
const WORKFLOW_ONLY: (keyof WorkerOptions)[] = [
  'workflowBundle',
  'workflowsPath',
  'bundlerOptions',
  'nexusServices',
  'sinks',
  'maxCachedWorkflows',
  'maxConcurrentWorkflowTaskExecutions',
  'maxConcurrentLocalActivityExecutions',
  'workflowTaskPollerBehavior',
  'stickyQueueScheduleToStartTimeout',
  'tuner',
  'maxConcurrentActivityTaskExecutions',
  'activityTaskPollerBehavior',
];

/**
 * The options of the worker for activity queue `queue`, from the main queue's worker options `main`:
 * the same connection, namespace, activities, data converter, activity interceptors and deployment
 * version (so a pinned flow's activities stay on its version); no workflows; `tuning` (slots, pollers,
 * the queue's rate, its own activity interceptors) on top.
 */
export function activityWorkerOptions(
  main: WorkerOptions,
  queue: ActivityQueue,
  tuning: Partial<WorkerOptions> = {},
): WorkerOptions {
  const options: Partial<WorkerOptions> = { ...main };
  for (const key of WORKFLOW_ONLY) delete options[key];
  // The queue's own activity interceptors (the money queue's pacing) run inside the main ones (tracing).
  const activity = [...(main.interceptors?.activity ?? []), ...(tuning.interceptors?.activity ?? [])];
  return {
    ...options,
    taskQueue: activityTaskQueue(main.taskQueue, queue),
    ...tuning,
    interceptors: activity.length ? { activity } : {},
  };
}

export class WorkerGroup {
  constructor(private readonly byQueue: ReadonlyMap<WorkerQueue, Worker>) {
    if (byQueue.size === 0) throw new Error('a worker group polls at least one task queue');
  }

  /** The worker of `queue`, if this group polls it. */
  worker(queue: WorkerQueue): Worker | undefined {
    return this.byQueue.get(queue);
  }

  /** The queues this group polls. */
  get queues(): WorkerQueue[] {
    return [...this.byQueue.keys()];
  }

  /** Every worker of the group (health watches them all). */
  get workers(): Worker[] {
    return [...this.byQueue.values()];
  }

  /** The worker whose state stands for the group's: the main queue's, else the first activity queue's. */
  get primary(): Worker {
    return this.byQueue.get('workflows') ?? [...this.byQueue.values()][0];
  }

  /** Runs every worker until all stopped; one that stops (shutdown or failure) stops the others. */
  async run(): Promise<void> {
    const runs = [...this.byQueue.values()].map((w) => w.run().finally(() => this.shutdown()));
    const failed = (await Promise.allSettled(runs)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Runs the group until `fn` settles (or a worker fails), then stops it; `fn`'s result. */
  async runUntil<R>(fn: Promise<R> | (() => Promise<R>)): Promise<R> {
    const running = this.run();
    const stopped = running.then(() => {
      throw new Error('the workers stopped before the work they ran for ended');
    });
    stopped.catch(() => undefined); // only the race reads it

    try {
      return await Promise.race([typeof fn === 'function' ? fn() : fn, stopped]);
    } finally {
      this.shutdown();
      await running;
    }
  }

  /** Starts a graceful shutdown of every running worker. */
  shutdown(): void {
    for (const w of this.byQueue.values()) if (w.getState() === 'RUNNING') w.shutdown();
  }

  /** FAILED if any failed; otherwise the main worker's state (the others follow it). */
  getState(): State {
    const states = [...this.byQueue.values()].map((w) => w.getState());
    return states.includes('FAILED') ? 'FAILED' : this.primary.getState();
  }
}

/**
 * The group for main-queue worker options `main`: a worker per queue in `queues` (all three by
 * default), the activity queues' from activityWorkerOptions with `activityTuning[queue]`.
 */
export async function createWorkerGroup(
  main: WorkerOptions,
  queues: readonly WorkerQueue[] = WORKER_QUEUES,
  activityTuning: Partial<Record<ActivityQueue, Partial<WorkerOptions>>> = {},
): Promise<WorkerGroup> {
  const workers = new Map<WorkerQueue, Worker>();
  try {
    for (const queue of queues) {
      // An activity queue's worker runs only activities: none registered (a workflow-only worker), none made.
      if (queue !== 'workflows' && Object.keys(main.activities ?? {}).length === 0) continue;
      const options = queue === 'workflows' ? main : activityWorkerOptions(main, queue, activityTuning[queue]);
      workers.set(queue, await Worker.create(options));
    }
  } catch (err) {
    // Release the ones already made (a worker is registered from its creation), so a retry can make them again.
    await Promise.allSettled([...workers.values()].map((w) => Promise.all([w.run(), w.shutdown()])));
    throw err;
  }
  return new WorkerGroup(workers);
}
