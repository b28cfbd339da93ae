// The split task-queue layout (WORKER_TASK_QUEUE_LAYOUT=split, docs/deployment.md "Task queues"; the
// default single queue: ./task-queue-single.test.ts): a vend's H3 runs on the money queue, whose
// rate the server holds (MONEY_ACTIVITIES_PER_SECOND). A burst of 500 vends waits on the money queue
// while no money worker polls it; then one starts, and the H3 arrivals at the sandbox are counted per
// second. The server's limiter is a token bucket (Temporal's matching service: a burst of one second of
// the rate); the money worker's own pace (src/workers/send-pacing.ts) keeps every window at the rate.
import { NativeConnection, type State } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createActivities } from '../../src/activities';
import { startVend } from '../../src/starters/vending';
import { activityTaskQueue } from '../../src/shared/task-queues';
import { createPaymentsWorker } from '../../src/workers/worker';
import { activityQueueTuning } from '../../src/workers/tuning';
import { quietLogger, testConfig, useServices } from '../support/stack';
import { shortRef } from '../pos/sandbox';
import { electricityVend } from '../support/flow-inputs';

const RATE = 50;
const VENDS = 500;
const PURCHASE = '/vending/utilities/electricity';
const WINDOW_MS = 1000;

// The stack's own worker polls the main and reads queues only: the money queue fills up.
const config = testConfig({
  WORKER_TASK_QUEUE_LAYOUT: 'split',
  WORKER_TASK_QUEUES: 'workflows,reads',
  MONEY_ACTIVITIES_PER_SECOND: String(RATE),
});
const env = useServices(config);

/** The most arrivals in any window of `ms` starting at an arrival, among `times` (sorted, ms). */
function busiestWindow(times: number[], ms: number, from = -Infinity): number {
  let best = 0;
  let end = 0;
  for (let start = 0; start < times.length; start++) {
    if (times[start] < from) continue;
    end = Math.max(end, start);
    while (end < times.length && times[end] < times[start] + ms) end++;
    best = Math.max(best, end - start);
  }
  return best;
}

/** The money queue's backlog as the server counts it (approximate, refreshed every few seconds). */
async function moneyBacklog(): Promise<number> {
  const res = await env.services.client.workflowService.describeTaskQueue({
    namespace: config.temporal.namespace,
    taskQueue: { name: activityTaskQueue(config.temporal.taskQueue, 'money') },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    reportStats: true,
  });
  return Number(res.stats?.approximateBacklogCount ?? 0);
}

/** The H3 requests the sandbox saw. */
async function purchases() {
  return (await env.admin.requests(undefined, PURCHASE)).filter((e) => e.path === PURCHASE);
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('the money queue under a burst', () => {
  it(`holds ${VENDS} vends' H3 to ${RATE}/s at the sandbox in every window, each vended once`, async () => {
    const refs = Array.from({ length: VENDS }, (_, i) => shortRef(`tq${i}`));
    const handles: Awaited<ReturnType<typeof startVend>>[] = [];
    for (let i = 0; i < refs.length; i += 50)
      handles.push(
        ...(await Promise.all(refs.slice(i, i + 50).map((r) => startVend(env.services.starters, electricityVend(r))))),
      );
    // Every vend has looked its meter up (a local activity) and scheduled H3 on the unpolled money queue.
    await waitFor('the money backlog', async () => (await moneyBacklog()) >= VENDS, 180_000);
    expect(await purchases()).toEqual([]);

    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const money = await createPaymentsWorker({
      ...config.temporal,
      encryption: config.encryption,
      connection,
      activities: createActivities({
        api: env.services.api,
        logger: quietLogger(),
        config,
        claimCheck: env.services.claimCheck,
      }),
      queues: ['money'],
      activityQueues: activityQueueTuning(config.taskQueues),
    });
    let state: State | undefined;
    const results = await money.runUntil(async () => {
      state = money.getState();
      return Promise.all(handles.map((h) => h.result()));
    });
    await connection.close();
    expect(state).toBe('RUNNING');

    expect(results.map((r) => r.status)).toEqual(refs.map(() => 'vended'));
    // The vend (PINNED) scheduled its H3 on the money queue, named after its own.
    const scheduled = (await handles[0].fetchHistory()).events!.flatMap((e) =>
      e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : [],
    );
    expect(scheduled.map((a) => [a.activityType?.name, a.taskQueue?.name])).toContainEqual([
      'vendPurchase',
      activityTaskQueue(config.temporal.taskQueue, 'money'),
    ]);
    // The purchase references the vends sent H3 under, one per vend.
    const ours = new Set(results.map((r) => r.reference ?? ''));
    expect(ours.size).toBe(VENDS);
    const arrivals = await purchases();
    expect(arrivals.every((e) => ours.has(e.reference ?? ''))).toBe(true);
    // Every vend sent once: one H3 per reference, and one vend in the sandbox's ledger each.
    expect(arrivals).toHaveLength(VENDS);
    expect(new Set(arrivals.map((e) => e.reference)).size).toBe(VENDS);
    const vended = (await env.admin.ledger({ kind: 'vend' })).filter((e) => ours.has(e.reference ?? ''));
    expect(vended).toHaveLength(VENDS);

    const times = arrivals.map((e) => Date.parse(e.at)).sort((a, b) => a - b);
    const perSecond = times.reduce<number[]>((acc, t) => {
      const second = Math.floor((t - times[0]) / 1000);
      acc[second] = (acc[second] ?? 0) + 1;
      return acc;
    }, []);
    const spanMs = times[times.length - 1] - times[0];
    console.log(
      `${VENDS} H3 over ${spanMs} ms at ${RATE}/s; per second: ${perSecond.join(' ')}; busiest window: 1 s ${busiestWindow(times, WINDOW_MS)}, 2 s ${busiestWindow(times, 2 * WINDOW_MS)}, 5 s ${busiestWindow(times, 5 * WINDOW_MS)}`,
    );
    // The rate holds at the service in every window, the first included: the server's bucket lets a
    // second of the rate through at once (and the first second drains what its partitions held: up
    // to 134 at 50/s were measured without the pacing), but the money worker starts its sends at
    // least 1/rate apart (src/workers/send-pacing.ts).
    for (const seconds of [1, 2, 5])
      expect(busiestWindow(times, seconds * WINDOW_MS)).toBeLessThanOrEqual(seconds * RATE);
    // And the whole burst took the time the rate allows.
    expect(spanMs).toBeGreaterThanOrEqual(((VENDS - 1) / RATE) * 1000 - 50);
  }, 300_000);
});
