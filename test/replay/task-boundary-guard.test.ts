// The task-boundary guard's rule on the activations a worker's core hands over
// (src/workflows/steps/task-boundary-guard.ts); test/replay/query-advance.test.ts runs it for real.
import { interceptors } from '../../src/workflows/steps/metrics-interceptor';
import { taskBoundaryGuard } from '../../src/workflows/steps/task-boundary-guard';
import { OUTSIDE_TASK_REFUSAL, isOutsideTaskRefusal } from '../../src/shared/task-boundary';
import { isTransientTemporalError } from '../../src/starters/temporal-retry';

type Guard = ReturnType<typeof taskBoundaryGuard>;
const at = (seconds: number, historyLength: number, jobs: string[], isReplaying = false) => ({
  activation: {
    timestamp: { seconds, nanos: 500 },
    historyLength,
    isReplaying,
    jobs: jobs.map((variant) => ({ variant })),
  },
  batchIndex: 0,
});
const hand = (guard: Guard, input: ReturnType<typeof at>) => guard.activate!(input as never, () => undefined as never);

describe('a workflow moves only inside a workflow task', () => {
  it('lets every task through: new history with a new task start, a local activity within a task, queries and evictions', () => {
    const guard = taskBoundaryGuard();
    hand(guard, at(100, 3, ['initializeWorkflow']));
    hand(guard, at(105, 9, ['resolveActivity'])); // the next task: started later, more history
    hand(guard, at(105, 9, ['resolveActivity'])); // a local activity's result in the same task
    hand(guard, at(105, 12, ['queryWorkflow'])); // queries never move the workflow
    hand(guard, at(105, 12, ['removeFromCache']));
    hand(guard, at(110, 15, ['doUpdate', 'resolveActivity']));
  });

  it('refuses an activation that applies new history without a new task (what a query carried)', () => {
    const guard = taskBoundaryGuard();
    hand(guard, at(100, 3, ['initializeWorkflow']));
    hand(guard, at(105, 9, ['fireTimer']));
    expect(() => hand(guard, at(105, 12, ['resolveActivity']))).toThrow(OUTSIDE_TASK_REFUSAL);
    // The worker then drops the workflow; a rebuilt one replays from the start, and is let through.
    const rebuilt = taskBoundaryGuard();
    hand(rebuilt, at(100, 3, ['initializeWorkflow'], true));
    hand(rebuilt, at(105, 9, ['fireTimer'], true));
    hand(rebuilt, at(112, 14, ['doUpdate', 'resolveActivity']));
  });

  it('leaves replay alone, and only judges an activation by its first batch', () => {
    const guard = taskBoundaryGuard();
    hand(guard, at(100, 3, ['initializeWorkflow'], true));
    hand(guard, at(100, 7, ['resolveActivity'], true));
    hand(guard, { ...at(100, 9, ['signalWorkflow']), batchIndex: 1 });
  });

  it('is the first internals interceptor of the module every bundle carries', () => {
    const guard = interceptors().internals?.[0] as Guard;
    hand(guard, at(100, 3, ['initializeWorkflow']));
    expect(() => hand(guard, at(100, 5, ['resolveActivity']))).toThrow(OUTSIDE_TASK_REFUSAL);
  });

  it('makes the starters ask again, however the SDK wraps the refusal', () => {
    const refusal = new Error(`Workflow activation completion failed: ${OUTSIDE_TASK_REFUSAL}`);
    expect(isOutsideTaskRefusal(new Error('query failed', { cause: refusal }))).toBe(true);
    expect(isTransientTemporalError(Object.assign(new Error('x'), { cause: refusal }))).toBe(true);
    expect(isTransientTemporalError(new Error('no OTP is expected in state creating'))).toBe(false);
  });
});
