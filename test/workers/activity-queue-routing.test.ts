// Which task queue a flow's activity is scheduled on (src/workflows/steps/activity-queues.ts): the
// queue its policy names, under the flow's own queue: all of a PINNED flow's, only the money sends of
// an AUTO_UPGRADE flow (its reads stay where they ran). workflowInfo() stands in for the flow that
// schedules.
import { workflowInfo } from '@temporalio/workflow';
import { activityTaskQueueFor } from '../../src/workflows/steps/activity-queues';
import { LOCAL_STORE, POLL, READ, moneySend, onQueue } from '../../src/workflows/steps/activity-options';

jest.mock('@temporalio/workflow', () => ({ workflowInfo: jest.fn() }));
const calledFrom = (workflowType: string) =>
  jest.mocked(workflowInfo).mockReturnValue({ workflowType, taskQueue: 'payments' } as ReturnType<typeof workflowInfo>);

describe("an activity's task queue", () => {
  it('in a PINNED flow: money sends on <queue>-money, reads and polls on <queue>-reads, stores on the main queue', () => {
    calledFrom('vendElectricityWorkflow');
    expect(activityTaskQueueFor(moneySend(30_000))).toBe('payments-money');
    expect(activityTaskQueueFor({ ...READ, heartbeatTimeout: '30s' })).toBe('payments-reads'); // a spread keeps it
    expect(activityTaskQueueFor(POLL)).toBe('payments-reads');
    expect(activityTaskQueueFor(onQueue('reads', LOCAL_STORE))).toBe('payments-reads');
    expect(activityTaskQueueFor(LOCAL_STORE)).toBeUndefined();
  });

  it('in an AUTO_UPGRADE flow: money sends on <queue>-money (the rate holds for them too), reads on the main queue', () => {
    for (const type of ['mandateWorkflow', 'recurringChargeWorkflow', 'posPreAuthWorkflow']) {
      calledFrom(type);
      expect([type, activityTaskQueueFor(moneySend()), activityTaskQueueFor(READ)]).toEqual([
        type,
        'payments-money',
        undefined,
      ]);
    }
  });

  it('in a type the table does not know (a fixture workflow): the main queue', () => {
    calledFrom('someFixtureWorkflow');
    expect([activityTaskQueueFor(moneySend()), activityTaskQueueFor(READ)]).toEqual([undefined, undefined]);
  });

  it('a queue the options name themselves wins', () => {
    calledFrom('vendElectricityWorkflow');
    expect(activityTaskQueueFor({ ...moneySend(), taskQueue: 'elsewhere' })).toBe('elsewhere');
  });
});
