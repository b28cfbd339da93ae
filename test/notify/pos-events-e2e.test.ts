// The POS flows tell the merchant their outcome, end to end (dev server, the project's worker, the
// sandbox over real HTTP, a real endpoint verifying each event's signature): a remote request, a
// sale, a refund, a pre-authorisation and its completion each emit one event per outcome, with the
// right type, reference, integer amount and stable id; a parked sale tells the merchant first that
// it needs a person, then its outcome. A flow without a URL of its own tells the deployment's
// endpoint (the worker's NOTIFY_URL, the receiver here); the starters know no NOTIFY_URL.
import type { WorkflowHandle } from '@temporalio/client';
import { newNotifySecret } from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import { posRemoteStateQuery, posRemoteWorkflowId } from '../../src/shared/pos-remote';
import {
  posTransactionStateQuery,
  posTransactionWorkflowId,
  type PosTransactionInput,
} from '../../src/shared/pos-terminal';
import {
  PosCompletionCardReadSchema,
  completionMerchantRef,
  posPreAuthStateQuery,
  posPreAuthWorkflowId,
} from '../../src/shared/pos-preauth';
import { posRefundWorkflowId, refundMerchantRef } from '../../src/shared/pos-refund';
import { startPosRemoteRequest } from '../../src/starters/pos-remote';
import {
  openPosTerminalSession,
  runPosTransaction,
  startPosTransaction,
  type PosTerminalSession,
} from '../../src/starters/pos-terminal';
import { runPosRefund } from '../../src/starters/pos-refund';
import { completePosPreAuth, releasePosPreAuth, startPosPreAuth } from '../../src/starters/pos-preauth';
import type { StarterContext } from '../../src/starters/connect';
import { historyTexts } from '../support/history';
import { eventually } from '../support/polling';
import { testConfig, useServices } from '../support/stack';
import { sandboxCard, shortRef } from '../pos/sandbox';
import { useDeploymentEventReceiver } from './receiver';

const COMPLETE_AFTER_MS = 60_000;
const secret = newNotifySecret();
const config = testConfig({ NOTIFY_SECRET: secret });
const receiver = useDeploymentEventReceiver(secret, config);
const env = useServices(config, undefined, { sandbox: { posRemoteCompleteAfterMs: COMPLETE_AFTER_MS } });

let session: PosTerminalSession;
beforeAll(async () => {
  session = await openPosTerminalSession(env.services.starters, { serial_no: 'SN-0001' });
});
afterAll(() => session?.close());
afterEach(() => env.admin?.clearFaults());

/** A sandbox card read that approves (ending 0000). */
const card = (ref: string, over: Partial<PosTransactionInput> = {}) =>
  sandboxCard('0000', ref, session.terminalId, session.pinKey(), over);

/** The flow's decoded history names an emission (or not). */
async function emitted(handle: WorkflowHandle): Promise<boolean> {
  const { decoded } = await historyTexts(handle, config.encryption);
  return decoded.includes('emitMerchantEvent');
}

describe('a POS remote request tells the merchant its outcome', () => {
  it('approved on the terminal: one verified pos.remote.succeeded through a per-flow URL; its history holds the emission', async () => {
    const reference = shortRef('er');
    const h = await startPosRemoteRequest(env.services.starters, {
      reference,
      terminal_id: '2SBX0001',
      amount: 150_000,
      options: { pollIntervalMs: 200, heartbeatTimeout: '3s' },
      notify: { url: receiver.url },
    });
    await eventually(async () => (await h.query(posRemoteStateQuery)).status === 'pending', { timeoutMs: 20_000 });
    await env.admin.advanceClock(COMPLETE_AFTER_MS); // the payer taps the card
    expect((await h.result()).status).toBe('success');
    const [event] = await receiver.delivered(reference);
    expect(event).toEqual({
      type: 'pos.remote.succeeded',
      id: merchantEventId(posRemoteWorkflowId(reference), 'pos.remote.succeeded'),
      created_at: expect.any(String),
      data: {
        version: 1,
        flow: 'pos-remote',
        reference,
        status: 'success',
        amount: 150_000,
        currency: 'NGN',
        sequence: 1,
        occurred_at: event.created_at,
      },
    });
    expect(await emitted(h)).toBe(true);
    expect(receiver.refused).toEqual([]);
  });

  it("declined, without a URL of its own: pos.remote.failed to the worker's NOTIFY_URL", async () => {
    const reference = shortRef('en');
    const h = await startPosRemoteRequest(env.services.starters, {
      reference,
      terminal_id: '2SBX0002',
      amount: 5100,
      options: { pollIntervalMs: 200, heartbeatTimeout: '3s' },
    });
    await eventually(async () => (await h.query(posRemoteStateQuery)).status === 'pending', { timeoutMs: 20_000 });
    await env.admin.advanceClock(COMPLETE_AFTER_MS);
    expect((await h.result()).status).toBe('failed');
    expect((await receiver.delivered(reference)).map((e) => e.type)).toEqual(['pos.remote.failed']);
    expect(await emitted(h)).toBe(true);
  });
});

describe('a POS sale tells the merchant its outcome', () => {
  it("approved, through the worker's NOTIFY_URL: one pos.sale.succeeded with the sale's amount; no card data in it", async () => {
    const ref = shortRef('es');
    const result = await runPosTransaction(env.services.starters, card(ref), session);
    expect(result.status).toBe('approved');
    const [event] = await receiver.delivered(ref);
    expect(event.type).toBe('pos.sale.succeeded');
    expect(event.id).toBe(merchantEventId(posTransactionWorkflowId(ref), 'pos.sale.succeeded'));
    expect(event.data).toMatchObject({
      flow: 'pos-sale',
      reference: ref,
      status: 'approved',
      amount: 250_000,
      currency: 'NGN',
      sequence: 1,
    });
    expect(Number.isInteger(event.data.amount)).toBe(true);
    const text = JSON.stringify(event);
    for (const cardData of ['5399830000000000', '539983', 'ADA OBI']) expect(text).not.toContain(cardData);
  });

  it('declined (51): pos.sale.failed with the action as its reason', async () => {
    const ref = shortRef('ed');
    const read = sandboxCard('0051', ref, session.terminalId, session.pinKey());
    expect((await runPosTransaction(env.services.starters, read, session)).status).toBe('declined');
    const [event] = await receiver.delivered(ref);
    expect(event.type).toBe('pos.sale.failed');
    expect(event.data).toMatchObject({ status: 'declined', amount: 250_000 });
    expect(event.data.reason).toBeTruthy();
  });

  it('parked (F4 cannot answer after a lost answer): pos.sale.needs_attention (1), then pos.sale.succeeded (2) once F4 answers', async () => {
    await env.admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-after-processing', count: 1 });
    await env.admin.fault({ method: 'GET', path: '/transaction/by-ref/', kind: 'error5xx', status: 503 });
    const ref = shortRef('ep');
    const h = await startPosTransaction(
      env.services.starters,
      card(ref, {
        options: {
          requerySettleDelay: '100ms',
          requeryTimeout: '3s',
          requeryBackoff: '500ms',
          requeryMaxBackoff: '1s',
        },
      }),
      session,
    );
    const [parked] = await receiver.delivered(ref);
    expect(parked).toMatchObject({
      type: 'pos.sale.needs_attention',
      id: merchantEventId(posTransactionWorkflowId(ref), 'pos.sale.needs_attention'),
      data: { status: 'outcome_unknown', sequence: 1, amount: 250_000 },
    });
    expect((await h.query(posTransactionStateQuery)).status).toBe('outcome_unknown');
    await env.admin.clearFaults();
    expect((await h.result()).status).toBe('approved');
    const events = await receiver.delivered(ref, 2);
    expect(events.map((e) => [e.type, e.data.sequence])).toEqual([
      ['pos.sale.needs_attention', 1],
      ['pos.sale.succeeded', 2],
    ]);
  });
});

describe('a POS refund tells the merchant its outcome', () => {
  it("approved: one pos.refund.succeeded under the refund's merchant_ref with its amount; the sale told its own", async () => {
    const saleRef = shortRef('eo');
    expect((await runPosTransaction(env.services.starters, card(saleRef), session)).status).toBe('approved');
    expect((await receiver.delivered(saleRef)).map((e) => e.type)).toEqual(['pos.sale.succeeded']);

    const requestId = shortRef('rq');
    const { merchant_ref: _m, transaction_type: _t, ...read } = card('unused');
    void [_m, _t];
    const result = await runPosRefund(
      env.services.starters,
      { ...read, amount: 100_000, refund_request_id: requestId, original_merchant_ref: saleRef },
      session,
    );
    expect(result.status).toBe('approved');
    const ref = refundMerchantRef(requestId);
    const [event] = await receiver.delivered(ref);
    expect(event.type).toBe('pos.refund.succeeded');
    expect(event.id).toBe(merchantEventId(posRefundWorkflowId(ref), 'pos.refund.succeeded'));
    expect(event.data).toMatchObject({
      flow: 'pos-refund',
      reference: ref,
      status: 'approved',
      amount: 100_000,
      sequence: 1,
    });
  });
});

describe('a POS pre-authorisation tells the merchant the hold, then its completion', () => {
  const preAuth = async (ctx: StarterContext, ref: string) => {
    const { transaction_type: _t, ...read } = card(ref, { amount: 300_000 });
    void _t;
    const h = await startPosPreAuth(ctx, { ...read, options: { requerySettleDelay: '200ms' } }, session);
    await eventually(async () => (await h.query(posPreAuthStateQuery)).status === 'held', { timeoutMs: 20_000 });
    return h;
  };

  it('held: pos.preauth.succeeded (1); completed for less: pos.completion.succeeded (2) with the captured amount and the completion as its part', async () => {
    const ref = shortRef('ea');
    const h = await preAuth(env.services.starters, ref);
    const [heldEvent] = await receiver.delivered(ref);
    expect(heldEvent).toMatchObject({
      type: 'pos.preauth.succeeded',
      id: merchantEventId(posPreAuthWorkflowId(ref), 'pos.preauth.succeeded'),
      data: { flow: 'pos-preauth', status: 'held', amount: 300_000, sequence: 1 },
    });
    // The same card presented again: the completion's card read (its schema's fields only).
    const read = PosCompletionCardReadSchema.strip().parse(card('unused', { amount: 275_000 }));
    await completePosPreAuth(env.services.starters, ref, read);
    expect((await h.result()).status).toBe('completed');
    const events = await receiver.delivered(ref, 2);
    const cp = completionMerchantRef(ref);
    expect(events[1]).toMatchObject({
      type: 'pos.completion.succeeded',
      id: merchantEventId(posPreAuthWorkflowId(ref), 'pos.completion.succeeded', cp),
      data: { status: 'completed', amount: 275_000, part: cp, sequence: 2 },
    });
  });

  it("released, without a URL of its own: held, then released, to the worker's NOTIFY_URL", async () => {
    const ref = shortRef('eb');
    const h = await preAuth(env.services.starters, ref);
    await releasePosPreAuth(env.services.starters, ref, 'order cancelled');
    expect((await h.result()).status).toBe('released');
    expect((await receiver.delivered(ref, 2)).map((e) => e.type)).toEqual([
      'pos.preauth.succeeded',
      'pos.preauth.released',
    ]);
  });
});
