// Each finding a reconciliation lists is told to the merchant: `reconciliation.mismatch`
// (docs/events.md), about the finding's reference (data.reference, a stream of its own: sequence 1),
// with the kind as data.status, the detail as reason and our amount when known, once per finding
// under a stable id, to the deployment's endpoint. A finding listed before (another window, or the
// run before a continue-as-new) is not told again; one beyond `maxFindings` is counted, not told;
// a clean run emits nothing; on a worker without NOTIFY_URL the run asks once. A run recorded before
// this change (test/replay/histories/reconciliation-mismatches) replays without the events: the
// deployment endpoint's patch guards them (docs/events.md, "Versioning").
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { createMerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import type { ActivityDeps } from '../../src/activities/deps';
import { newNotifySecret, type MerchantEvent } from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import type {
  ReconcileInput,
  ReconcileWindowInput,
  ReconciliationFinding,
  WindowSummary,
} from '../../src/shared/reconciliation';
import type { reconciliationWorkflow } from '../../src/workflows/reconciliation';
import { createWorkerGroup } from '../../src/workers/worker-group';
import { useEventReceiver } from '../notify/receiver';
import { HISTORIES_DIR, replayHistory } from '../support/replay';
import { quietLogger, workflowBundle } from '../support/stack';
import { useTimeSkippingEnv } from '../support/time-skipping';

const secret = newNotifySecret();
const env = useTimeSkippingEnv({ quietRuntime: true });
const listener = useEventReceiver(secret);
afterEach(() => expect(listener.refused).toEqual([]));

const summaryOf = (i: ReconcileWindowInput, findingList: ReconciliationFinding[]): WindowSummary => ({
  start: i.start,
  end: i.end,
  currency: i.currency,
  pages: 1,
  rows: 10,
  matched: 10 - findingList.length,
  noMoneyBoth: 0,
  open: 0,
  notComparable: 0,
  ourSuccessesChecked: 5,
  findings: findingList.length,
  marked: findingList.length,
  resolved: 0,
  byKind: {},
  notComparableReasons: {},
  findingList: findingList.slice(0, i.maxFindings),
  findingsOmitted: Math.max(0, findingList.length - i.maxFindings),
});

/**
 * Runs a reconciliation of `input` whose windows answer `findings(window)`, on a worker whose
 * NOTIFY_URL is `url`; the worker (which runs the deliveries) stops once an event of each of
 * `told` arrived and a few deliveries' time passed.
 */
async function run(
  input: ReconcileInput,
  url: string | undefined,
  findings: (i: ReconcileWindowInput) => ReconciliationFinding[],
  told: string[] = [],
): Promise<WorkflowHandle<typeof reconciliationWorkflow>> {
  const taskQueue = `recon-events-${randomUUID()}`;
  const deps = {
    logger: quietLogger(),
    config: { notify: { url, retryForMs: 3_600_000, secret }, temporal: { taskQueue } },
    temporal: env.client,
  } as unknown as ActivityDeps;
  const worker = await createWorkerGroup({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: {
      reconcileWindow: (i: ReconcileWindowInput) => Promise.resolve(summaryOf(i, findings(i))),
      ...createMerchantEventDeliveryActivities(deps),
    },
  });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof reconciliationWorkflow>('reconciliationWorkflow', {
      workflowId: `recon-${randomUUID()}`,
      taskQueue,
      args: [input],
    });
    await handle.result();
    for (const reference of told) await listener.delivered(reference, 1);
    await new Promise((r) => setTimeout(r, 500)); // nothing more arrives
    return handle;
  });
}

const finding = (
  kind: ReconciliationFinding['kind'],
  reference: string,
  more: Partial<ReconciliationFinding> = {},
) => ({
  kind,
  reference,
  detail: `${kind} for ${reference}`,
  window: 'w',
  ...more,
});

const handOvers = async (h: WorkflowHandle) =>
  ((await h.fetchHistory()).events ?? []).filter(
    (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  ).length;

describe('reconciliation.mismatch: each finding listed is told once, about its reference', () => {
  it('two windows across a continue-as-new: each new finding once (sequence 1, stable id); one listed before, or beyond maxFindings, is not told', async () => {
    const tag = randomUUID().slice(0, 8);
    const [a, b, c, d] = ['A', 'B', 'C', 'D'].map((x) => `ORD-${x}-${tag}`);
    const h = await run(
      { from: '2026-01-01', to: '2026-02-28', currencies: ['NGN'], windowsPerRun: 1, maxFindings: 3 },
      listener.url,
      (i) =>
        i.start.startsWith('2026-01')
          ? [
              finding('mismatch_amount', a, { ourAmount: 250_000, ourCurrency: 'NGN', flow: 'card' }),
              finding('mismatch_money_without_success', b),
            ]
          : // A again (listed in the run before the continue-as-new), C new, D beyond maxFindings.
            [
              finding('mismatch_amount', a, { ourAmount: 250_000, ourCurrency: 'NGN' }),
              finding('late_payment', c),
              finding('mismatch_amount', d),
            ],
      [a, b, c],
    );
    expect(await h.result()).toMatchObject({ status: 'mismatches', findingsOmitted: 1 });
    const desc = await h.describe();
    expect(desc.runId).not.toBe(desc.raw.workflowExecutionInfo?.firstRunId); // continued as new after one window

    const told = (ref: string): MerchantEvent[] => listener.eventsOf(ref);
    expect(told(a)).toHaveLength(1);
    expect(told(a)[0]).toEqual({
      type: 'reconciliation.mismatch',
      id: merchantEventId(h.workflowId, 'reconciliation.mismatch', a),
      created_at: told(a)[0].data.occurred_at,
      data: {
        version: 1,
        flow: 'reconciliation',
        reference: a,
        status: 'mismatch_amount',
        reason: `mismatch_amount for ${a}`,
        amount: 250_000,
        currency: 'NGN',
        sequence: 1,
        occurred_at: told(a)[0].data.occurred_at,
      },
    });
    expect(told(b).map((e) => [e.data.status, e.data.amount, e.data.sequence])).toEqual([
      ['mismatch_money_without_success', undefined, 1],
    ]);
    expect(told(c).map((e) => [e.data.status, e.data.sequence, e.id])).toEqual([
      ['late_payment', 1, merchantEventId(h.workflowId, 'reconciliation.mismatch', c)],
    ]);
    expect(told(d)).toEqual([]); // beyond maxFindings: counted and marked, not told
  });

  it('a clean run emits nothing and asks nothing', async () => {
    const h = await run({ from: '2026-03-01', to: '2026-03-31', currencies: ['NGN'] }, listener.url, () => []);
    expect(await h.result()).toMatchObject({ status: 'clean' });
    expect(await handOvers(h)).toBe(0);
  });

  it('on a worker without NOTIFY_URL: the run asks once ("not configured") and sends nothing', async () => {
    const refs = [1, 2, 3].map((n) => `ORD-${n}-${randomUUID().slice(0, 8)}`);
    const h = await run({ from: '2026-04-01', to: '2026-04-30', currencies: ['NGN'] }, undefined, () =>
      refs.map((r) => finding('mismatch_success_without_money', r)),
    );
    expect(await h.result()).toMatchObject({ status: 'mismatches' });
    expect(await handOvers(h)).toBe(1);
    for (const r of refs) expect(listener.eventsOf(r)).toEqual([]);
  });

  it('a run with findings recorded before this change replays without the events', async () => {
    const name = 'reconciliation-mismatches';
    const text = readFileSync(join(HISTORIES_DIR, `${name}.json`), 'utf8');
    expect(text).not.toContain('"markerName"');
    await expect(replayHistory(name)).resolves.toBeUndefined();
  });
});
