// The refund ledger of one sale on its own, on the time-skipping server: its reserveRefund
// validator (what it refuses, by name), a reservation asked again (an activity retry), released and
// approved settlements, an approval it never reserved, and the PaymentStatus it publishes. The
// refund flows that use it are in pos-refund-workflow.test.ts. Driven by a plain client: the ledger
// never completes, so nothing here awaits its result (time is not skipped). And a ledger begun by the
// code before the patch 'pos-refund-ledger-reasked-amount', taken over by the current code.
import { randomUUID } from 'node:crypto';
import { Client, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import {
  posRefundLedgerWorkflowId,
  refundLedgerStateQuery,
  reserveRefundUpdate,
  settleRefundSignal,
  type RefundLedgerState,
} from '../../src/shared/pos-refund';
import { PaymentStatus } from '../../src/shared/search-attributes';
import type { posRefundLedgerWorkflow } from '../../src/workflows/pos-refund-ledger';
import { createWorkerGroup } from '../../src/workers/worker-group';
import { eventually } from '../support/polling';
import { workflowBundle } from '../support/stack';
import { useTimeSkippingEnv } from '../support/time-skipping';

const taskQueue = `pos-refund-ledger-${randomUUID()}`;
const env = useTimeSkippingEnv({ quietRuntime: true, worker: { taskQueue, activities: () => ({}) } });
let client: Client;
beforeAll(() => {
  client = new Client({ connection: env.connection, namespace: env.namespace });
});

const SALE = 100_000;
const started: WorkflowHandle[] = [];
afterAll(async () => {
  await Promise.all(started.map((h) => h.terminate('test over').catch(() => undefined)));
});

/** A ledger for a new sale of 100 000 NGN. */
async function openLedger(): Promise<{ sale: string; h: WorkflowHandle }> {
  const sale = `S${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const h = await client.workflow.start<typeof posRefundLedgerWorkflow>('posRefundLedgerWorkflow', {
    workflowId: posRefundLedgerWorkflowId(sale),
    taskQueue,
    args: [{ original_merchant_ref: sale, sale_amount: SALE, currency: 'NGN' }],
  });
  started.push(h);
  return { sale, h };
}

const reserve = (h: WorkflowHandle, merchant_ref: unknown, amount: unknown) =>
  h.executeUpdate(reserveRefundUpdate, {
    args: [{ merchant_ref, amount } as { merchant_ref: string; amount: number }],
  });

/** The refusal's message, or 'granted'. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'granted',
    (err: unknown) => {
      expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
      return String((err as WorkflowUpdateFailedError).cause?.message);
    },
  );

const state = (h: WorkflowHandle) => h.query(refundLedgerStateQuery);
const stateUntil = (h: WorkflowHandle, ok: (s: RefundLedgerState) => boolean, description: string) =>
  eventually(() => state(h), ok, { timeoutMs: 20_000, intervalMs: 25, description });
const paymentStatus = (h: WorkflowHandle, wanted: string) =>
  eventually(
    async () => (await h.describe()).typedSearchAttributes.get(PaymentStatus),
    (s) => s === wanted,
    { timeoutMs: 20_000, description: `PaymentStatus ${wanted}` },
  );

describe('the refund ledger of one sale', () => {
  it('refuses a reservation without a merchant_ref, with an amount that is not a whole positive number, or over what is left; nothing is held for a refusal', async () => {
    const { sale, h } = await openLedger();
    const AMOUNT_RULE = 'amount must be an integer greater than 0 in the lowest currency unit';
    expect(await refusal(reserve(h, '', 10))).toBe('merchant_ref is required');
    expect(await refusal(reserve(h, 5, 10))).toBe('merchant_ref is required');
    expect(await refusal(reserve(h, 'R1', 0))).toBe(AMOUNT_RULE);
    expect(await refusal(reserve(h, 'R1', -5))).toBe(AMOUNT_RULE);
    expect(await refusal(reserve(h, 'R1', 1.5))).toBe(AMOUNT_RULE);
    expect(await refusal(reserve(h, 'R1', SALE + 1))).toBe(
      `refund of 100001 exceeds the amount left to refund of sale ${sale}: 100000 of 100000 (refunded 0, in flight 0)`,
    );
    expect(await state(h)).toMatchObject({ refunded: 0, reserved: 0, remaining: SALE, entries: [] });
  });

  it('a reservation asked again gets what it was granted; another amount under its merchant_ref is refused', async () => {
    const { h } = await openLedger();
    const granted = {
      merchantRef: 'R1',
      amount: 40_000,
      saleAmount: SALE,
      remainingBefore: SALE,
      remainingAfter: 60_000,
    };
    expect(await reserve(h, 'R1', 40_000)).toEqual(granted);
    expect(await reserve(h, 'R1', 40_000)).toEqual(granted); // an activity retry
    expect(await refusal(reserve(h, 'R1', 30_000))).toBe('refund R1 already holds 40000, not 30000');
    expect(await state(h)).toMatchObject({
      reserved: 40_000,
      remaining: 60_000,
      entries: [{ merchantRef: 'R1', amount: 40_000, status: 'reserved' }],
    });
    await paymentStatus(h, 'open');
  });

  it('released gives the amount back (the refund may reserve again); approved is final, a late release never un-refunds it', async () => {
    const { sale, h } = await openLedger();
    await reserve(h, 'R1', 40_000);
    await h.signal(settleRefundSignal, { merchant_ref: 'R1', amount: 40_000, outcome: 'released' });
    await stateUntil(h, (s) => s.entries[0]?.status === 'released', 'R1 released');
    expect(await state(h)).toMatchObject({ reserved: 0, remaining: SALE });

    // Released, the same refund may reserve again, for another amount too: it holds what it asks now.
    expect(await reserve(h, 'R1', 30_000)).toMatchObject({ amount: 30_000, remainingAfter: 70_000 });
    expect(await state(h)).toMatchObject({
      reserved: 30_000,
      remaining: 70_000,
      entries: [{ merchantRef: 'R1', amount: 30_000, status: 'reserved' }],
    });

    await h.signal(settleRefundSignal, { merchant_ref: 'R1', amount: 30_000, outcome: 'approved' });
    await stateUntil(h, (s) => s.refunded > 0, 'R1 approved');
    await h.signal(settleRefundSignal, { merchant_ref: 'R1', amount: 30_000, outcome: 'released' });
    await h.signal(settleRefundSignal, { merchant_ref: 'R9', amount: 1, outcome: 'released' }); // unknown: nothing to give back
    await stateUntil(h, (s) => s.entries.length === 1 && s.entries[0].status === 'approved', 'still approved');
    // Asked again after its approval (a late activity retry): the same grant, and it stays approved.
    expect(await reserve(h, 'R1', 30_000)).toMatchObject({ amount: 30_000 });
    expect((await state(h)).entries).toEqual([{ merchantRef: 'R1', amount: 30_000, status: 'approved' }]);
    expect(await refusal(reserve(h, 'R2', 70_001))).toBe(
      `refund of 70001 exceeds the amount left to refund of sale ${sale}: 70000 of 100000 (refunded 30000, in flight 0)`,
    );
  });

  it('an approval it never reserved (found by its own F4 after the ledger began anew) is counted; a release or an amount of 0 of one is not; fully refunded is published', async () => {
    const { h } = await openLedger();
    await h.signal(settleRefundSignal, { merchant_ref: 'R7', amount: 0, outcome: 'approved' });
    await h.signal(settleRefundSignal, { merchant_ref: 'R8', amount: 5_000, outcome: 'released' });
    await h.signal(settleRefundSignal, { merchant_ref: 'R9', amount: SALE, outcome: 'approved' });
    const s = await stateUntil(h, (st) => st.refunded > 0, 'R9 counted');
    expect(s).toMatchObject({
      refunded: SALE,
      reserved: 0,
      remaining: 0,
      entries: [{ merchantRef: 'R9', amount: SALE, status: 'approved' }],
    });
    await paymentStatus(h, 'fully_refunded');
  });
});

describe('a ledger begun before the patch pos-refund-ledger-reasked-amount (docs/operations.md)', () => {
  it('taken over by the current code, it replays what its history did: a released refund asked again for more keeps the amount it held then', async () => {
    const queue = `pos-refund-ledger-before-patch-${randomUUID()}`;
    const sale = `S${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const worker = async (workflowsPath?: string) =>
      createWorkerGroup({
        connection: env.nativeConnection,
        taskQueue: queue,
        workflowBundle: await workflowBundle(workflowsPath),
        activities: {},
        maxCachedWorkflows: 0, // no sticky queue: the next worker gets every task, with the whole history
      });
    const heldThen = {
      reserved: 40_000,
      remaining: 60_000,
      entries: [{ merchantRef: 'R1', amount: 40_000, status: 'reserved' }],
    };
    // The code before the patch: R1 reserves 40 000, is released, and is reserved again for 100 000.
    const before = await worker(require.resolve('../fixtures/pos-refund-ledger-before-patch'));
    const h = await before.runUntil(async () => {
      const h = await client.workflow.start<typeof posRefundLedgerWorkflow>('posRefundLedgerWorkflow', {
        workflowId: posRefundLedgerWorkflowId(sale),
        taskQueue: queue,
        args: [{ original_merchant_ref: sale, sale_amount: SALE, currency: 'NGN' }],
      });
      started.push(h);
      await reserve(h, 'R1', 40_000);
      await h.signal(settleRefundSignal, { merchant_ref: 'R1', amount: 40_000, outcome: 'released' });
      expect(await reserve(h, 'R1', 100_000)).toMatchObject({ amount: 100_000 });
      expect(await state(h)).toMatchObject(heldThen); // that code's rule: the first amount kept
      return h;
    });
    // The current code answers from that history replayed: without the patch's old branch it would hold 100 000.
    const current = await worker();
    await current.runUntil(async () => expect(await state(h)).toMatchObject(heldThen));
  });
});
