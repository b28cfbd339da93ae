// SDK issue, to report upstream (Temporal TypeScript SDK 1.24.0, its Core in
// node_modules/@temporalio/core-bridge/sdk-core): a local activity's schedule-to-close is lost when it
// ends while the activity backs off between attempts, so an unlimited retry never ends.
//
// Workflow (./local-activity-workflows.ts):
//   proxyLocalActivities({ scheduleToCloseTimeout: '2500ms',
//     retry: { initialInterval: '1s', backoffCoefficient: 1, maximumInterval: '1s' } }).flaky()
// with `flaky` always throwing. Expected: the call fails with a schedule-to-close timeout after
// 2.5 s (3 attempts). Happens: attempts go on every second, the workflow never gets an answer.
//
// Why (crates/sdk-core/src/worker/activities/local_activities.rs): the schedule-to-close is one timer,
// armed when the activity is first scheduled (TimeoutBag::new). When it fires, Core completes the
// attempt that is running as timed out. A backoff no longer than localRetryThreshold (default 1
// minute) is slept inside the worker with no attempt running, so a timer firing then finds no
// outstanding task (`complete` answers Untracked, silently for a timeout) and is dropped; it is not
// armed again, and the retry policy alone (maximumAttempts, unlimited by default) decides. A backoff
// longer than localRetryThreshold becomes a workflow timer and a new schedule carrying
// originalScheduleTime, whose timeout is re-armed with what is left: those are bounded.
//
// Our answer: LOCAL_EMIT caps its attempts (src/workflows/steps/activity-options.ts,
// test/notify/emission-bound.test.ts). When an SDK upgrade makes the second test below fail, the
// timeout works again and the cap is only a second bound.
import { randomUUID } from 'node:crypto';
import { eventually } from '../support/polling';
import { hangUntilWorkerShutdown, runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';

const WORKFLOWS = require.resolve('./local-activity-workflows');
const env = useTimeSkippingEnv({ quietRuntime: true });

async function run(flaky: () => Promise<void>, fn: (workflowId: string, taskQueue: string) => Promise<void>) {
  const workflowId = `la-schedule-to-close-${randomUUID()}`;
  await runWithWorker(env, { flaky }, 'sdk-repro', (taskQueue) => fn(workflowId, taskQueue), WORKFLOWS);
}

describe("a local activity's schedule-to-close (SDK 1.24.0)", () => {
  it('ending while an attempt runs: the local activity fails with it', async () => {
    let attempts = 0;
    await run(
      async () => {
        attempts += 1;
        await hangUntilWorkerShutdown(30_000);
      },
      async (workflowId, taskQueue) => {
        const startedAt = Date.now();
        const result = await env.client.workflow.execute('localActivityUntilScheduleToClose', {
          workflowId,
          taskQueue,
        });
        expect(result).toBe('timed out: SCHEDULE_TO_CLOSE');
        expect(Date.now() - startedAt).toBeLessThan(15_000);
      },
    );
    expect(attempts).toBe(1);
  }, 60_000);

  it('ending during a backoff between attempts: lost, the attempts go on past it and the workflow waits', async () => {
    let attempts = 0;
    let answered = false;
    await run(
      () => {
        attempts += 1;
        return Promise.reject(new Error('always fails'));
      },
      async (workflowId, taskQueue) => {
        const handle = await env.client.workflow.start('localActivityUntilScheduleToClose', { workflowId, taskQueue });
        const answer = () => (answered = true);
        void handle.result().then(answer, answer);
        // Attempts at 0, 1, 2 s; the timeout at 2.5 s falls in the backoff before the 4th. Twice that
        // many attempts: the timeout is long gone.
        await eventually(
          () => attempts,
          (n) => n >= 6,
          { timeoutMs: 20_000, description: '6 attempts' },
        );
        const { status } = await handle.describe();
        const answeredBeforeTerminate = answered;
        await handle.terminate('reproduced');
        expect(status.name).toBe('RUNNING');
        expect(answeredBeforeTerminate).toBe(false);
      },
    );
    expect(attempts).toBeGreaterThanOrEqual(6);
  }, 60_000);
});
