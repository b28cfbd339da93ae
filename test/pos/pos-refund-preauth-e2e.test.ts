// POS refund and pre-authorisation end to end: dev server, the project's worker and activities,
// the API client over real HTTP and the sandbox (which checks every Refund and Completion
// against its own records). Each money movement shows once in the sandbox ledger; no F3 is
// resent without an F4 404 just before it. The runs also record the replay histories
// test/pos/histories/pos-refund-* and pos-preauth-* (re-record: RECORD_HISTORIES=1 npx jest <this file>).
import { createLogger } from '../../src/logging/logger';
import type { RunningServices } from '../../src/stack/services';
import type { PosTransactionInput } from '../../src/shared/pos-terminal';
import { completionMerchantRef, type PosPreAuthStatus } from '../../src/shared/pos-preauth';
import { refundMerchantRef } from '../../src/shared/pos-refund';
import type { WorkflowHandle } from '@temporalio/client';
import { POS_SEALED_FIELDS } from '../../src/shared/pos-terminal';
import {
  openPosTerminalSession,
  runPosTransaction,
  startPosTransaction,
  type PosTerminalSession,
} from '../../src/starters/pos-terminal';
import {
  posRefundHandle,
  posRefundLedger,
  runPosRefund,
  startPosRefund,
  type PosRefundStartInput,
} from '../../src/starters/pos-refund';
import {
  PosPreAuthRefusedError,
  completePosPreAuth,
  releasePosPreAuth,
  startPosPreAuth,
} from '../../src/starters/pos-preauth';
import type { StarterContext } from '../../src/starters/connect';
import { StarterInputError } from '../../src/starters/input-error';
import { LogCapture, startServices, testConfig } from '../support/stack';
import { assertNoRetryWithoutRequery, preAuthReaches } from './helpers';
import { posCallsFromLog, sandboxCard, shortRef } from './sandbox';
import { historyTexts } from '../support/history';
import { SandboxAdmin } from '../support/sandbox-admin';
import { POS_HISTORIES } from './fixtures/histories';
import { recordHistoryTo } from '../support/replay';
import { posRefundLedgerWorkflowId } from '../../src/shared/pos-refund';

const logger = createLogger({ destination: new LogCapture(), level: 'warn' });
const config = testConfig();
let services: RunningServices;
let admin: SandboxAdmin;
let ctx: StarterContext;
let session: PosTerminalSession;

beforeAll(async () => {
  services = await startServices(config, { logger });
  admin = new SandboxAdmin(services.sandboxUrl!);
  ctx = services.starters;
  session = await openPosTerminalSession(services.starters, { serial_no: 'SN-0002' });
}, 60_000);
afterAll(async () => {
  session?.close();
  await services?.stop();
});
afterEach(() => admin.clearFaults());

/** A card read of the sandbox card ending 0000 (approves), fresh chip data each time. */
const card = (ref: string, over: Partial<PosTransactionInput> = {}) =>
  sandboxCard('0000', ref, session.terminalId, session.pinKey(), over);
async function sale(amount = 250_000): Promise<string> {
  const ref = shortRef('sl');
  expect(await runPosTransaction(ctx, card(ref, { amount }), session)).toMatchObject({ status: 'approved' });
  return ref;
}
function refundOf(saleRef: string, requestId: string, amount: number): PosRefundStartInput {
  const { merchant_ref: _m, transaction_type: _t, ...read } = card('unused');
  void [_m, _t];
  return { ...read, amount, refund_request_id: requestId, original_merchant_ref: saleRef };
}
const entries = (reference: string) => admin.ledger({ reference });

describe('POS refund against the sandbox', () => {
  it('a partial refund of a real sale: approved, one pos_refund in the ledger, the sale untouched; the rest of the sale is what is left', async () => {
    const saleRef = await sale();
    const requestId = `rq-${saleRef}`;
    const input = refundOf(saleRef, requestId, 100_000);
    const handle = await startPosRefund(ctx, input, session);
    const result = await handle.result();
    await expectNoCardData(handle, [input]);
    const own = refundMerchantRef(requestId);
    expect(result).toMatchObject({
      status: 'approved',
      merchantRef: own,
      responseCode: '00',
      attempt: 1,
      ledger: { saleAmount: 250_000, remainingAfter: 150_000 },
    });
    expect(result.transaction).toMatchObject({ merchant_ref: own, transaction_type: 'Refund', amount: 100_000 });
    expect(await entries(own)).toEqual([expect.objectContaining({ kind: 'pos_refund', amount: 100_000 })]);
    expect(await entries(saleRef)).toEqual([expect.objectContaining({ kind: 'pos_sale', amount: 250_000 })]);
    expect(await posRefundLedger(ctx, saleRef)).toMatchObject({ refunded: 100_000, reserved: 0, remaining: 150_000 });

    // The same refund request again: the same refund (same handle, same result), nothing new sent.
    const again = await startPosRefund(ctx, refundOf(saleRef, requestId, 100_000), session);
    expect(await again.result()).toMatchObject({ status: 'approved', merchantRef: own });
    expect(posCallsFromLog(await admin.requests(), own).filter((c) => c.op === 'initiate')).toHaveLength(1);
    // The same request id for another amount is refused by name.
    await expect(startPosRefund(ctx, refundOf(saleRef, requestId, 5_000), session)).rejects.toThrow(
      /refund_request_id was already used for the refund of 100000/,
    );

    // Over what is left: refused before anything is sent.
    const over = `rq-over-${saleRef}`;
    expect(await runPosRefund(ctx, refundOf(saleRef, over, 150_001), session)).toMatchObject({
      status: 'refused',
      refusal: 'over_remaining',
      attempt: 0,
    });
    expect(posCallsFromLog(await admin.requests(), refundMerchantRef(over)).filter((c) => c.op === 'initiate')).toEqual(
      [],
    );
    // The rest, exactly: approved; the sale is now fully refunded.
    expect(await runPosRefund(ctx, refundOf(saleRef, `rq-rest-${saleRef}`, 150_000), session)).toMatchObject({
      status: 'approved',
    });
    expect(await posRefundLedger(ctx, saleRef)).toMatchObject({ refunded: 250_000, remaining: 0 });
    await recordHistoryTo(POS_HISTORIES, handle, 'pos-refund-approved');
    await recordHistoryTo(
      POS_HISTORIES,
      ctx.client.workflow.getHandle(posRefundLedgerWorkflowId(saleRef)),
      'pos-refund-ledger',
    );
    expect(
      (await admin.ledger({ kind: 'pos_refund' })).filter((e) =>
        [own, refundMerchantRef(`rq-rest-${saleRef}`)].includes(e.reference),
      ),
    ).toHaveLength(2);
  });

  it('the refund answer dropped after the sandbox refunded: F4 finds it, one pos_refund, never resent', async () => {
    const saleRef = await sale();
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-after-processing', count: 1 });
    const requestId = `rq-drop-${saleRef}`;
    const result = await runPosRefund(ctx, refundOf(saleRef, requestId, 50_000), session);
    const own = refundMerchantRef(requestId);
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    expect(result.steps.map((s) => `${s.op}:${s.outcome}`)).toEqual(['initiate:unknown', 'requery:found']);
    expect(await entries(own)).toHaveLength(1);
    await recordHistoryTo(POS_HISTORIES, posRefundHandle(ctx, requestId), 'pos-refund-lost-answer-found');
  });

  it('the refund dropped before it reached the sandbox: F4 404, resent once with the same merchant_ref, one pos_refund', async () => {
    const saleRef = await sale();
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-before-processing', count: 1 });
    const requestId = `rq-lost-${saleRef}`;
    const own = refundMerchantRef(requestId);
    expect(await runPosRefund(ctx, refundOf(saleRef, requestId, 50_000), session)).toMatchObject({
      status: 'approved',
      attempt: 2,
    });
    expect(await entries(own)).toHaveLength(1);
    const calls = posCallsFromLog(await admin.requests(), own);
    expect(calls.map((c) => (c.op === 'requery' ? `requery:${c.answer}` : c.op))).toEqual([
      'requery:not_found',
      'initiate',
      'requery:not_found',
      'initiate',
    ]);
    assertNoRetryWithoutRequery(calls.slice(1));
  });

  it('a refund of a declined sale or of an unknown merchant_ref is refused; nothing reaches F3', async () => {
    const declined = shortRef('dc');
    expect(
      await runPosTransaction(ctx, sandboxCard('0051', declined, session.terminalId, session.pinKey()), session),
    ).toMatchObject({ status: 'declined' });
    const {
      merchant_ref: _m,
      transaction_type: _t,
      ...read51
    } = sandboxCard('0051', 'x', session.terminalId, session.pinKey());
    void [_m, _t];
    expect(
      await runPosRefund(
        ctx,
        { ...read51, amount: 1_000, refund_request_id: `rq-${declined}`, original_merchant_ref: declined },
        session,
      ),
    ).toMatchObject({ status: 'refused', refusal: 'original_not_approved' });
    expect(await runPosRefund(ctx, refundOf('NEVER-SOLD-1', `rq-never-${declined}`, 1_000), session)).toMatchObject({
      status: 'refused',
      refusal: 'original_not_found',
    });
    expect(
      (await admin.requests()).filter(
        (e) =>
          e.method === 'POST' &&
          e.path === '/transaction' &&
          (e.reference === refundMerchantRef(`rq-${declined}`) ||
            e.reference === refundMerchantRef(`rq-never-${declined}`)),
      ),
    ).toEqual([]);
  });

  it('the sale starter takes Purchase only; a refund input is checked by field before anything starts', async () => {
    await expect(startPosTransactionOfType('Refund')).rejects.toThrow(/transaction_type must be Purchase here/);
    await expect(startPosRefund(ctx, { ...refundOf('S-1', 'bad id!', 1.5) }, session)).rejects.toThrow(
      StarterInputError,
    );
  });
});

const startPosTransactionOfType = (type: string) =>
  startPosTransaction(ctx, card(shortRef('ty'), { transaction_type: type }), session);

/** No card read (PAN, track2, chip data, PIN block) in a flow's history, stored or decoded through the codec. */
async function expectNoCardData(
  h: WorkflowHandle,
  reads: Pick<PosTransactionInput, 'card_pan' | 'track2' | 'chipdata' | 'pin_block'>[],
): Promise<void> {
  const { raw, decoded } = await historyTexts(h, config.encryption);
  expect(decoded).toMatch(/"handle":"cc_/); // the decoding did work, and the card is a handle
  for (const r of reads)
    for (const secret of [r.card_pan, r.track2, r.chipdata, r.pin_block!])
      for (const text of [raw, decoded]) expect(text).not.toContain(secret);
  for (const field of POS_SEALED_FIELDS) expect(decoded).not.toContain(`"${field}"`);
}

describe('POS pre-authorisation against the sandbox', () => {
  async function held(ref: string, options: Record<string, unknown> = {}) {
    const { transaction_type: _t, ...read } = card(ref, { amount: 300_000 });
    void _t;
    const h = await startPosPreAuth(
      ctx,
      { ...read, options: { requerySettleDelay: '200ms', retryBackoff: '300ms', ...options } },
      session,
    );
    const waitFor = (status: PosPreAuthStatus) => preAuthReaches(h, status);
    await waitFor('held');
    return { h, waitFor };
  }
  const completion = (amount: number) => {
    const {
      merchant_ref: _m,
      transaction_type: _t,
      terminal_id: _x,
      currency: _c,
      account_type: _a,
      options: _o,
      ...read
    } = card('unused', { amount });
    void [_m, _t, _x, _c, _a, _o];
    return read;
  };

  it('pre-authorise, then complete for less: the hold moves no money; the completion is one pos_sale of its amount; a second completion is refused', async () => {
    const ref = shortRef('pa');
    const { h } = await held(ref);
    expect(await entries(ref)).toEqual([]); // a hold, not a sale
    const read = completion(275_000);
    const accepted = await completePosPreAuth(ctx, ref, read);
    const cp = completionMerchantRef(ref);
    expect(accepted).toMatchObject({ completionMerchantRef: cp, amount: 275_000 });
    const result = await h.result();
    expect(result).toMatchObject({
      status: 'completed',
      amount: 300_000,
      completion: {
        merchantRef: cp,
        amount: 275_000,
        status: 'approved',
        transaction: { transaction_type: 'Completion', amount: 275_000 },
      },
    });
    expect(await entries(cp)).toEqual([expect.objectContaining({ kind: 'pos_sale', amount: 275_000 })]);
    expect(await entries(ref)).toEqual([]);
    await expect(completePosPreAuth(ctx, ref, completion(1_000))).rejects.toThrow(PosPreAuthRefusedError);
    await expectNoCardData(h, [read]);
    await recordHistoryTo(POS_HISTORIES, h, 'pos-preauth-completed');
    expect(posCallsFromLog(await admin.requests(), cp).filter((c) => c.op === 'initiate')).toHaveLength(1);
  });

  it('a completion over the held amount is refused by the flow, the hold stays; a completion whose request was lost is resent once after F4 404; one pos_sale', async () => {
    const ref = shortRef('pb');
    const { h } = await held(ref);
    await expect(completePosPreAuth(ctx, ref, completion(300_001))).rejects.toThrow(/more than the 300000 held/);
    await admin.fault({ method: 'POST', path: '/transaction', kind: 'drop-before-processing', count: 1 });
    await completePosPreAuth(ctx, ref, completion(300_000));
    const cp = completionMerchantRef(ref);
    expect(await h.result()).toMatchObject({ status: 'completed', completion: { attempt: 2 } });
    expect(await entries(cp)).toHaveLength(1);
    await recordHistoryTo(POS_HISTORIES, h, 'pos-preauth-completion-resent');
    assertNoRetryWithoutRequery(posCallsFromLog(await admin.requests(), cp));
  });

  it('release: released, nothing more sent; lapse: a short window ends → lapsed, a completion after it is refused', async () => {
    const a = shortRef('pr');
    const first = await held(a);
    await releasePosPreAuth(ctx, a, 'customer left');
    expect(await first.h.result()).toMatchObject({ status: 'released', releaseReason: 'customer left' });
    await recordHistoryTo(POS_HISTORIES, first.h, 'pos-preauth-released');

    const b = shortRef('pl');
    const second = await held(b, { holdWindow: '2s' });
    expect(await second.h.result()).toMatchObject({ status: 'lapsed' });
    await recordHistoryTo(POS_HISTORIES, second.h, 'pos-preauth-lapsed');
    await expect(completePosPreAuth(ctx, b, completion(1_000))).rejects.toThrow(PosPreAuthRefusedError);
    for (const ref of [a, b]) {
      expect(posCallsFromLog(await admin.requests(), completionMerchantRef(ref))).toEqual([]);
      expect(await entries(completionMerchantRef(ref))).toEqual([]);
    }
  });

  it("the issuer's hold expired before the flow's window (sandbox clock + 7 days): the service refuses the completion → completion_rejected, no money", async () => {
    const ref = shortRef('px');
    const { h } = await held(ref, { holdWindow: '30 days' });
    await admin.advanceClock(7 * 24 * 3600 * 1000);
    await completePosPreAuth(ctx, ref, completion(10_000));
    const result = await h.result();
    expect(result).toMatchObject({ status: 'completion_rejected', completion: { status: 'rejected' } });
    expect(result.action).toMatch(/Pre-Authorization has expired/);
    expect(await entries(completionMerchantRef(ref))).toEqual([]);
  });
});
