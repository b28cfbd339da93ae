// What a test's run makes, a replay reads back: a flow run by a worker with scripted activities must
// leave a history that replays. The SDK (1.24.0) fails a local activity whose type the worker does not
// register without recording its marker, though the call used an activity id; every later activity's
// id is then one off and the history does not replay. Production workers register the event hand-over
// (emitMerchantEvent) always; the tests' scripted workers get it from withEventHandOver
// (test/support/time-skipping.ts). Found replaying the mandate tests' histories after the mandate split.
import { randomUUID } from 'node:crypto';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createWorkerGroup } from '../../src/workers/worker-group';
import { runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';
import { workflowBundle } from '../support/stack';

const FIXTURE = require.resolve('../fixtures/merchant-event-emission-workflows');
const env = useTimeSkippingEnv({ quietRuntime: true });
const steps = { fixtureStep: () => Promise.resolve('stepped') };

/** Runs emitThenStepWorkflow on `taskQueue` and returns its history. */
async function runFlow(taskQueue: string): Promise<temporal.api.history.v1.IHistory> {
  const handle = await env.client.workflow.start('emitThenStepWorkflow', {
    workflowId: `emit-then-step-${randomUUID()}`,
    taskQueue,
    args: ['https://merchant.example/events'],
  });
  expect(await handle.result()).toBe('stepped');
  return handle.fetchHistory();
}

const replay = async (history: temporal.api.history.v1.IHistory) =>
  Worker.runReplayHistory({ workflowBundle: await workflowBundle(FIXTURE) }, history);

describe('histories made by scripted workers', () => {
  it('a worker without the event hand-over makes a history that does not replay (the SDK records no marker for an unregistered local activity)', async () => {
    const taskQueue = `no-hand-over-${randomUUID()}`;
    const worker = await createWorkerGroup({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(FIXTURE),
      activities: steps,
    });
    const history = await worker.runUntil(runFlow(taskQueue));
    const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes);
    expect(markers).toEqual([]);
    await expect(replay(history)).rejects.toThrow(DeterminismViolationError);
  });

  it("the tests' scripted workers register it (withEventHandOver): the history has the hand-over's marker and replays", async () => {
    const history = await runWithWorker(env, steps, 'hand-over', runFlow, FIXTURE);
    const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes);
    expect(markers).toHaveLength(1);
    await expect(replay(history)).resolves.toBeUndefined();
  });
});
