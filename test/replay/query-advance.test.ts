// The SDK's ordering fault behind the cluster's lost mandate (docs/sdk-update-ordering.md), made on the
// dev server with real processes, and the guard that keeps it from ever being recorded:
//  1. a workflow runs an activity; its worker dies (SIGKILL) while the activity runs;
//  2. a query sent then waits out the dead worker's sticky timeout and reaches a second worker through
//     the normal queue, with the whole history: the activity's result included, which no workflow task
//     has handled yet;
//  3. an Update sent right after rides on the workflow task that finally carries that result.
// Without the guard the second worker moves the workflow on for the query (a status upsert, a timer),
// and the Update is accepted after those commands; on replay the Update comes first: nondeterministic.
// With the guard (every bundle's interceptor module) the query is refused, the worker drops the
// workflow, and the task replays the result and the Update in the order replay will.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { OUTSIDE_TASK_REFUSAL } from '../../src/shared/task-boundary';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { devServerAddress, LogCapture } from '../support/stack';
import { eventually, sleep } from '../support/polling';
import { stateQuery, submit } from '../fixtures/update-ordering/workflows';

const FIXTURE = join(__dirname, '..', 'fixtures', 'update-ordering');
const WORKFLOWS = join(FIXTURE, 'workflows.ts');
const GUARD = join(FIXTURE, 'guard-interceptor.ts');
/** The dead worker's sticky timeout: how long the query waits before it goes to the normal queue. */
const STICKY_TIMEOUT_MS = 5_000;
/** When the activity answers, counted from the query: the result is in history before the query leaves the sticky queue, and the task it schedules times out well after the query is answered. */
const RESULT_AFTER_QUERY_MS = 3_000;

const EventType = temporal.api.enums.v1.EventType;
installTemporalRuntime(createLogger({ destination: new LogCapture(), level: 'warn' }), 'WARN');
type History = temporal.api.history.v1.IHistory;

async function firstWorkerProcess(address: string, taskQueue: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(FIXTURE, 'worker-process.ts'), address, taskQueue, String(STICKY_TIMEOUT_MS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the first worker exited with ${code}`)));
  });
  return child;
}

interface Run {
  queryAnswer: string | Error;
  updateAnswers: (string | Error)[];
  history: History;
}

/** Steps 1 to 3 above, then the Update again until it is accepted (as a starter would), and the workflow's end. */
async function makeHistory(guarded: boolean): Promise<Run> {
  const address = devServerAddress();
  const taskQueue = `query-advance-${guarded ? 'guarded' : 'bare'}-${Date.now()}`;
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const native = await NativeConnection.connect({ address });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let markStarted!: () => void;
  const started = new Promise<void>((r) => (markStarted = r));
  const activities = await Worker.create({
    connection: native,
    taskQueue,
    activities: {
      slowStep: async () => {
        markStarted();
        await released;
        return 'waiting';
      },
    },
  });
  const activitiesRun = activities.run();
  try {
    const first = await firstWorkerProcess(address, taskQueue);
    const handle = await client.workflow.start('updateAfterResult', { taskQueue, workflowId: taskQueue });
    await started;
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const second = await Worker.create({
      connection: native,
      taskQueue,
      workflowsPath: WORKFLOWS,
      ...(guarded ? { interceptors: { workflowModules: [GUARD] } } : {}),
    });
    const run = await second.runUntil(async () => {
      const query = handle.query(stateQuery).catch((err: Error) => err);
      await sleep(RESULT_AFTER_QUERY_MS);
      release();
      const queryAnswer = await query;
      const updateAnswers: (string | Error)[] = [];
      const sendUpdate = () => handle.executeUpdate(submit, { args: ['otp'] }).catch((err: Error) => err);
      updateAnswers.push(await sendUpdate());
      // A refused Update is sent again, as the starters and the chaos driver do after reading the state.
      await eventually(
        async () => {
          const last = updateAnswers[updateAnswers.length - 1];
          if (typeof last === 'string') return last;
          updateAnswers.push(await sendUpdate());
          return updateAnswers[updateAnswers.length - 1];
        },
        (a) => typeof a === 'string',
        { timeoutMs: 30_000, intervalMs: 500, description: 'the Update accepted' },
      );
      await handle.result();
      return { queryAnswer, updateAnswers };
    });
    return { ...run, history: await handle.fetchHistory() };
  } finally {
    activities.shutdown();
    await activitiesRun;
    await native.close();
    await connection.close();
  }
}

const replay = (history: History) => Worker.runReplayHistory({ workflowsPath: WORKFLOWS }, history);

/** The event types of the workflow task that accepted the Update, from its completion on. */
function acceptingTask(history: History): string[] {
  const events = history.events ?? [];
  const accepted = events.findIndex((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
  let completed = accepted;
  while (completed > 0 && events[completed].eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) completed--;
  return events.slice(completed, accepted + 1).map((e) => EventType[e.eventType!].replace('EVENT_TYPE_', ''));
}

describe('an Update delivered with an activity result a query has already applied', () => {
  jest.setTimeout(90_000);

  it('without the guard: the query moves the workflow on, and the history it records does not replay (the SDK fault)', async () => {
    const run = await makeHistory(false);
    expect(run.queryAnswer).toBe('waiting'); // the result no task had handled yet
    expect(run.updateAnswers).toEqual(['waiting']);
    // Live: the upsert the result led to, then the Update's acceptance, in one task.
    expect(acceptingTask(run.history)).toEqual([
      'WORKFLOW_TASK_COMPLETED',
      'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
      'WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
    ]);
    await expect(replay(run.history)).rejects.toThrow(/Nondeterminism error: Update machine does not handle/);
  });

  it('with the guard: the query is refused (ask again), nothing moves outside a task, and the history replays', async () => {
    const run = await makeHistory(true);
    expect(run.queryAnswer).toBeInstanceOf(Error);
    expect((run.queryAnswer as Error).message).toContain(OUTSIDE_TASK_REFUSAL);
    // The task then handles the Update before the result, as replay will: refused ("not waiting"),
    // then accepted when sent again.
    const refused = run.updateAnswers.filter((a) => a instanceof Error);
    for (const r of refused) {
      expect(r).toBeInstanceOf(WorkflowUpdateFailedError);
      expect(String((r as Error & { cause?: Error }).cause?.message)).toMatch(/not waiting: working/);
    }
    expect(run.updateAnswers[run.updateAnswers.length - 1]).toBe('waiting');
    await expect(replay(run.history)).resolves.toBeUndefined();
  });
});
