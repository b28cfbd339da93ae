// The split layout's workflow interceptor module (WORKER_TASK_QUEUE_LAYOUT=split, docs/deployment.md
// "Task queues"): puts each activity on the task queue its policy names (./activity-options.ts,
// ACTIVITY_QUEUE). Workflow code cannot read the worker's setting, so the setting chooses the bundle:
// a split worker's bundle carries this module (src/workers/worker.ts, workflowInterceptorModules), a
// single-queue worker's does not, and every activity stays on the flow's own queue, where the SDK
// dispatches it eagerly. The proxies of a flow are made at module load, before any workflow runs, and
// a queue's name derives from the calling flow's own task queue, so the name is chosen here, when the
// activity is scheduled. A PINNED flow's activities all move (./versioning.ts). An AUTO_UPGRADE flow's
// money sends move too, so the rate holds for every send (mandate debits, a plan's charges, the
// pre-authorisation): an activity's task queue is not part of what replay compares (the activity's id
// and type are), so open executions replay under either layout, which every recorded history shows
// (test/replay/coverage.test.ts). Its reads stay on the main queue, where they ran, since nothing
// requires them to move.
import {
  workflowInfo,
  type ActivityInput,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { activityTaskQueue } from '../../shared/task-queues';
import { ACTIVITY_QUEUE, type QueuedActivityOptions } from './activity-options';
import { WORKFLOW_VERSIONING } from './versioning';

/** The task queue an activity with `options` runs on when the calling flow schedules it; undefined: the flow's own. */
export function activityTaskQueueFor(options: QueuedActivityOptions): string | undefined {
  const queue = options[ACTIVITY_QUEUE];
  if (options.taskQueue !== undefined || queue === undefined) return options.taskQueue;
  const { workflowType, taskQueue } = workflowInfo();
  const row = WORKFLOW_VERSIONING[workflowType as keyof typeof WORKFLOW_VERSIONING];
  if (row === undefined) return undefined; // not one of ours (a test's fixture workflow)
  return row.behavior === 'PINNED' || queue === 'money' ? activityTaskQueue(taskQueue, queue) : undefined;
}

export const activityQueueInterceptor: WorkflowOutboundCallsInterceptor = {
  scheduleActivity(input: ActivityInput, next) {
    const taskQueue = activityTaskQueueFor(input.options);
    return next(taskQueue === undefined ? input : { ...input, options: { ...input.options, taskQueue } });
  },
};

/** The module's interceptors (the SDK reads `interceptors` from each workflow interceptor module). */
export const interceptors: WorkflowInterceptorsFactory = () => ({ outbound: [activityQueueInterceptor] });
