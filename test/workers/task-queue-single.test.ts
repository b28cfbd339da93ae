// The default layout (docs/deployment.md, "Task queues"): one task queue, so the SDK asks the server to
// hand each activity back with the workflow task that scheduled it (eager execution), and no money send
// goes through matching. The SDK reports no metric of its own for it (SDK 1.24.0: none of its worker
// metrics counts eager activities), and the history of an eager activity looks like any other; what the
// server does show is its matching: the activity tasks added to a queue (DescribeTaskQueue's
// tasksAddRate). Vends run on the single queue: their H3s are scheduled there, and matching's activity
// side of the queue stays empty while its workflow side counts the vends' workflow tasks.
import { temporal } from '@temporalio/proto';
import { startVend } from '../../src/starters/vending';
import { testConfig, useServices } from '../support/stack';
import { shortRef } from '../pos/sandbox';
import { electricityVend } from '../support/flow-inputs';

const VENDS = 20;
const config = testConfig();
const env = useServices(config);
const { TaskQueueType } = temporal.api.enums.v1;

/** What matching says of the main queue's `type` side: tasks added per second, backlog. */
async function matchingStats(type: temporal.api.enums.v1.TaskQueueType) {
  const res = await env.services.client.workflowService.describeTaskQueue({
    namespace: config.temporal.namespace,
    taskQueue: { name: config.temporal.taskQueue },
    taskQueueType: type,
    reportStats: true,
  });
  return { addRate: res.stats?.tasksAddRate ?? 0, backlog: Number(res.stats?.approximateBacklogCount ?? 0) };
}

describe('the single task queue (default layout)', () => {
  it(`dispatches ${VENDS} vends' H3 eagerly: scheduled on the main queue, never added to its matching`, async () => {
    expect(config.taskQueues).toMatchObject({ layout: 'single', polled: ['workflows'] });
    const handles = await Promise.all(
      Array.from({ length: VENDS }, (_, i) => startVend(env.services.starters, electricityVend(shortRef(`sq${i}`)))),
    );
    const results = await Promise.all(handles.map((h) => h.result()));
    expect(results.map((r) => r.status)).toEqual(handles.map(() => 'vended'));

    // Every H3 was scheduled on the flow's own queue (no split-layout interceptor in this bundle).
    for (const handle of handles) {
      const scheduled = (await handle.fetchHistory()).events!.flatMap((e) =>
        e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : [],
      );
      expect(scheduled.map((a) => [a.activityType?.name, a.taskQueue?.name])).toContainEqual([
        'vendPurchase',
        config.temporal.taskQueue,
      ]);
    }

    // Matching saw the workflow tasks (the stats are live), and no activity task: each H3 went back
    // to the worker with the workflow task's completion.
    const workflows = await matchingStats(TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW);
    const activities = await matchingStats(TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY);
    console.log(
      `single queue after ${VENDS} vends: workflow side ${JSON.stringify(workflows)}, activity side ${JSON.stringify(activities)}`,
    );
    expect(workflows.addRate).toBeGreaterThan(0);
    expect(activities).toEqual({ addRate: 0, backlog: 0 });
  }, 180_000);
});
