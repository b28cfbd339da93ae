// chaos/stuck.ts and drive() (chaos/kinds/types.ts): a flow whose query or workflow task keeps failing
// is reported stuck with the reason at once; a stack that restarts, or one "ask again", is waited through.
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { drive, type DriverContext } from '../../chaos/kinds/types';
import {
  isStackFailure,
  ProgressProbe,
  QueryFailureStreak,
  StuckError,
  workflowTaskFailing,
  type StuckPolicy,
} from '../../chaos/stuck';
import { DeadlineError } from '../../chaos/util';
import { TemporalUnavailableError } from '../../src/starters/temporal-retry';
import { OUTSIDE_TASK_REFUSAL } from '../../src/shared/task-boundary';
import { randomUUID } from 'node:crypto';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { LogCapture, testConfig, withWorker, workflowBundle } from '../support/stack';

jest.setTimeout(150_000);
installTemporalRuntime(createLogger({ destination: new LogCapture() }));

const NONDETERMINISM = '[TMPRL1100] Nondeterminism error: Update machine does not handle this event';
/** A gRPC error as the client raises it. */
const grpc = (code: number, details: string) =>
  Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
const FAST: StuckPolicy = {
  maxQueryFailures: 5,
  minStreakMs: 50,
  maxWorkflowTaskAttempts: 5,
  probeEveryMs: 10,
  unexplainedStreakMs: 60_000,
};

/** A driver context with only what drive() reads: its deadline and a probe with a fast policy. */
function ctxWith(deadlineMs: number, handle?: WorkflowHandle): DriverContext {
  return { deadline: Date.now() + deadlineMs, progress: new ProgressProbe(() => handle, FAST) } as DriverContext;
}

/** A handle whose describe() shows a pending workflow task at each of `attempts` in turn (the last one then on), and whose history recorded one failure. */
function handleAt(...attempts: number[]): WorkflowHandle {
  const failed = temporal.api.history.v1.HistoryEvent.create({
    eventType: temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    workflowTaskFailedEventAttributes: {
      cause: temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
      failure: { message: `${NONDETERMINISM}\n  at core` },
    },
  });
  return {
    describe: async () => ({
      raw: { pendingWorkflowTask: { attempt: attempts.length > 1 ? attempts.shift() : attempts[0] } },
    }),
    fetchHistory: async () => ({ events: [failed] }),
  } as unknown as WorkflowHandle;
}

describe('QueryFailureStreak', () => {
  it('makes a flow stuck after 5 failures in a row spanning 10 s, with the last error', () => {
    let now = 0;
    const streak = new QueryFailureStreak(undefined, () => now);
    for (let i = 0; i < 4; i++, now += 3_000) expect(streak.failed(new Error(NONDETERMINISM))).toBeUndefined();
    expect(streak.failed(new Error(`${NONDETERMINISM}\nstack`))).toBe(
      `state query failed 5 times in a row over 12 s: ${NONDETERMINISM}`,
    );
  });

  it('needs the span as well as the count: five quick failures are not yet stuck', () => {
    let now = 0;
    const streak = new QueryFailureStreak(undefined, () => now);
    for (let i = 0; i < 5; i++, now += 1_000) expect(streak.failed(new Error(NONDETERMINISM))).toBeUndefined();
    now += 10_000;
    expect(streak.failed(new Error(NONDETERMINISM))).toMatch(/^state query failed 6 times in a row over 15 s/);
  });

  it("a query failing without naming the flow's failure (a slow worker, a child not started yet) is stuck only after 5 minutes", () => {
    let now = 0;
    const streak = new QueryFailureStreak(undefined, () => now);
    const unexplained = [
      new Error('Failed to query Workflow', { cause: grpc(13, 'query failed') }),
      grpc(5, 'workflow not found for ID: payment-X-C1'),
    ];
    for (let i = 0; i < 59; i++, now += 5_000) expect(streak.failed(unexplained[i % 2])).toBeUndefined();
    now += 5_000;
    expect(streak.failed(unexplained[0])).toBe(
      'state query failed 60 times in a row over 300 s: Failed to query Workflow',
    );
  });

  it('counts a wrapped error\'s cause: the client\'s "Failed to query Workflow" around a nondeterminism error', () => {
    let now = 0;
    const streak = new QueryFailureStreak(undefined, () => now);
    const wrapped = () => new Error('Failed to query Workflow', { cause: grpc(13, NONDETERMINISM) });
    for (let i = 0; i < 4; i++, now += 3_000) expect(streak.failed(wrapped())).toBeUndefined();
    expect(streak.failed(wrapped())).toMatch(/^state query failed 5 times in a row over 12 s/);
  });

  it('starts again after an answer', () => {
    let now = 0;
    const streak = new QueryFailureStreak(undefined, () => now);
    for (let i = 0; i < 4; i++, now += 5_000) streak.failed(new Error('query failed'));
    streak.succeeded();
    expect(streak.failed(new Error('query failed'))).toBeUndefined();
  });

  it('never counts the stack restarting or away', () => {
    let now = 0;
    const streak = new QueryFailureStreak(undefined, () => now);
    for (let i = 0; i < 20; i++, now += 5_000) expect(streak.failed(grpc(14, 'UNAVAILABLE'))).toBeUndefined();
  });
});

describe('isStackFailure', () => {
  it('is true for the server away or slow, the harness read timeout and a first task not run yet', () => {
    expect(isStackFailure(grpc(14, 'UNAVAILABLE: connection refused'))).toBe(true);
    expect(isStackFailure(grpc(4, 'DEADLINE_EXCEEDED'))).toBe(true);
    expect(isStackFailure(new Error('wrapped', { cause: grpc(14, 'UNAVAILABLE') }))).toBe(true);
    expect(isStackFailure(new DeadlineError('read'))).toBe(true);
    expect(isStackFailure(new TemporalUnavailableError('card state (query)', 3, grpc(14, 'x')))).toBe(true);
    expect(isStackFailure(grpc(9, 'Workflow task not completed'))).toBe(true);
  });

  it("is false for the flow's own failures, and for a starter that gave up on refusals", () => {
    expect(isStackFailure(new Error(NONDETERMINISM))).toBe(false);
    expect(isStackFailure(grpc(3, 'Workflow activation completion failed: boom'))).toBe(false);
    expect(isStackFailure(new TemporalUnavailableError('q', 9, new Error(OUTSIDE_TASK_REFUSAL)))).toBe(false);
  });
});

describe('drive() on a failing query', () => {
  it('reports the flow stuck with the query error long before its deadline', async () => {
    let reads = 0;
    const started = Date.now();
    const driving = drive(
      ctxWith(60_000),
      async () => {
        reads++;
        throw new Error(NONDETERMINISM);
      },
      () => false,
      async () => undefined,
      5,
    );
    const err = await driving.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StuckError);
    expect((err as StuckError).reason).toMatch(/^state query failed \d+ times in a row over \d+ s: \[TMPRL1100\]/);
    expect(reads).toBeGreaterThanOrEqual(5);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('asks again after one refusal and drives the flow to its end', async () => {
    const answers: (string | Error)[] = [new Error(OUTSIDE_TASK_REFUSAL), 'awaiting_otp', 'success'];
    const acted: string[] = [];
    const last = await drive(
      ctxWith(10_000),
      async () => {
        const a = answers.shift() ?? 'success';
        if (a instanceof Error) throw a;
        return a;
      },
      (s) => s === 'success',
      async (s) => void acted.push(s),
      5,
    );
    expect(last).toBe('success');
    expect(acted).toEqual(['awaiting_otp']);
  });

  it('waits a restarting stack out to the deadline, never stuck', async () => {
    const last = await drive(
      ctxWith(300),
      async () => {
        throw grpc(14, 'UNAVAILABLE');
      },
      () => false,
      async () => undefined,
      5,
    );
    expect(last).toBeUndefined();
  });

  it('ends an act that would wait on a workflow whose task keeps failing', async () => {
    // Healthy when the act starts; its workflow task then fails over and over.
    let acts = 0;
    const driving = drive(
      ctxWith(60_000, handleAt(1, 9)),
      async () => 'approved',
      () => false,
      () => {
        acts++;
        return new Promise<void>(() => undefined); // an Update the workflow never takes
      },
      5,
    );
    await expect(driving).rejects.toThrow(/^stuck: workflow task failing \(attempt 9\)/);
    expect(acts).toBe(1);
  });
});

describe('workflowTaskFailing', () => {
  it('names the attempt and the last recorded failure past the allowed attempts', async () => {
    await expect(workflowTaskFailing(handleAt(9), FAST)).resolves.toBe(
      `workflow task failing (attempt 9), last recorded failure NON_DETERMINISTIC_ERROR: ${NONDETERMINISM}`,
    );
  });

  it('leaves a task timed out by a worker kill or two alone', async () => {
    await expect(workflowTaskFailing(handleAt(2), FAST)).resolves.toBeUndefined();
    await expect(workflowTaskFailing(handleAt(5), FAST)).resolves.toBeUndefined();
  });

  it('leaves alone a task past its attempts that only timed out (a killed or overloaded worker), even after an older failure', async () => {
    const { EventType } = temporal.api.enums.v1;
    const event = (eventType: number, attrs: object) =>
      temporal.api.history.v1.HistoryEvent.create({ eventType, ...attrs });
    const failed = event(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED, {
      workflowTaskFailedEventAttributes: { failure: { message: 'an old failure' } },
    });
    const timedOut = event(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, { workflowTaskTimedOutEventAttributes: {} });
    const at = (events: temporal.api.history.v1.IHistoryEvent[]) =>
      ({
        describe: async () => ({ raw: { pendingWorkflowTask: { attempt: 8 } } }),
        fetchHistory: async () => ({ events }),
      }) as unknown as WorkflowHandle;
    await expect(workflowTaskFailing(at([timedOut, timedOut]), FAST)).resolves.toBeUndefined();
    await expect(workflowTaskFailing(at([failed, timedOut]), FAST)).resolves.toBeUndefined();
    await expect(workflowTaskFailing(at([timedOut, failed]), FAST)).resolves.toMatch(
      /^workflow task failing \(attempt 8\), last recorded failure .*an old failure$/,
    );
  });
});

describe('workflowTaskFailing on a real workflow', () => {
  it('finds a workflow whose task fails on every attempt, once past the allowed attempts', async () => {
    const config = testConfig();
    const bundle = await workflowBundle(require.resolve('./fixtures/broken-task-flow'), []);
    await withWorker(config, { activities: {}, workflowBundle: bundle }, async (client) => {
      const handle = await client.workflow.start('brokenTaskFlow', {
        taskQueue: config.temporal.taskQueue,
        workflowId: `broken-${randomUUID()}`,
      });
      const started = Date.now();
      let reason: string | undefined;
      while (!reason && Date.now() - started < 110_000) {
        reason = await workflowTaskFailing(handle);
        if (!reason) await new Promise((r) => setTimeout(r, 1_000));
      }
      // About a minute here: the server retries a failed task with a growing delay.
      expect(reason).toMatch(
        /^workflow task failing \(attempt \d+\), last recorded failure WORKFLOW_WORKER_UNHANDLED_FAILURE: a bug in this workflow$/,
      );
    });
  });
});
