// A POS remote request's terminal lock (posTerminalLockWorkflow) is started by an activity that, under
// the split task-queue layout (docs/deployment.md, "Task queues"), runs on the reads queue. The lock is a
// workflow: it must start on the deployment's main queue, where workflow tasks are polled. Started on
// the activity's own queue it never ran, and every remote request waited at `locking` (found by the
// cluster chaos run, docs/cluster.md).
import { posRemoteStateQuery } from '../../src/shared/pos-remote';
import { posTerminalLockWorkflowId } from '../../src/shared/pos-terminal-lock';
import { activityTaskQueue } from '../../src/shared/task-queues';
import { startPosRemoteRequest } from '../../src/starters/pos-remote';
import { quietLogger, testConfig, useServices } from '../support/stack';
import { eventually } from '../support/polling';
import { shortRef } from './sandbox';

// The split layout, where that activity runs on the reads queue (the default single queue has none).
const config = testConfig({ WORKER_TASK_QUEUE_LAYOUT: 'split' });
// The payer never pays here: the request stays pending while the test looks at its lock.
const env = useServices(config, quietLogger(), { sandbox: { posRemoteCompleteAfterMs: 600_000 } });

it('starts the terminal lock on the main task queue, and the request gets past locking', async () => {
  const h = await startPosRemoteRequest(env.services.starters, {
    terminal_id: '2SBX0001',
    reference: shortRef('lq'),
    amount: 150000,
    options: { pollIntervalMs: 200 },
  });
  const state = await eventually(
    async () => {
      const s = await h.query(posRemoteStateQuery);
      return s.status === 'pending' && s.requestRef ? s : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  expect(state).toMatchObject({ status: 'pending' });
  const lock = await env.services.client.workflow
    .getHandle(posTerminalLockWorkflowId('2SBX0001', config.temporal.taskQueue))
    .describe();
  expect(lock.taskQueue).toBe(config.temporal.taskQueue);
  expect(lock.taskQueue).not.toBe(activityTaskQueue(config.temporal.taskQueue, 'reads'));
  await h.terminate('test over');
});
