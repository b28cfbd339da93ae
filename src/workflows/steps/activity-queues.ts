// Puts each activity on the task queue its policy names (./activity-options.ts, ACTIVITY_QUEUE): part of
// the interceptor module every bundle carries (./metrics-interceptor.ts). The proxies of a flow are
// made at module load, before any workflow runs, and a queue's name derives from the calling flow's
// own task queue, so the name is chosen here, when the activity is scheduled. Only a PINNED flow's
// activities move (./versioning.ts): an AUTO_UPGRADE flow keeps them on the main queue, since moving
// them changes its commands, which takes a patch (docs/flow-development.md).
import { workflowInfo, type ActivityInput, type WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import { activityTaskQueue } from '../../shared/task-queues';
import { ACTIVITY_QUEUE, type QueuedActivityOptions } from './activity-options';
import { WORKFLOW_VERSIONING } from './versioning';

/** The task queue an activity with `options` runs on when the calling flow schedules it; undefined: the flow's own. */
export function activityTaskQueueFor(options: QueuedActivityOptions): string | undefined {
  const queue = options[ACTIVITY_QUEUE];
  if (options.taskQueue !== undefined || queue === undefined) return options.taskQueue;
  const { workflowType, taskQueue } = workflowInfo();
  const row = WORKFLOW_VERSIONING[workflowType as keyof typeof WORKFLOW_VERSIONING];
  return row?.behavior === 'PINNED' ? activityTaskQueue(taskQueue, queue) : undefined;
}

export const activityQueueInterceptor: WorkflowOutboundCallsInterceptor = {
  scheduleActivity(input: ActivityInput, next) {
    const taskQueue = activityTaskQueueFor(input.options);
    return next(taskQueue === undefined ? input : { ...input, options: { ...input.options, taskQueue } });
  },
};
