// The POS refund workflow's decisions on the time-skipping server: scripted F3/F4 activities and
// the real refund-ledger activity and workflow. Nothing is sent before the sale was checked and the
// amount reserved; the refund F3 is sent once, and again only after an F4 404.
// The flows are driven by a plain client, so time is NOT skipped (the delays are shortened
// instead): skipping would jump to the test server's default 10-year execution timeout of the
// long-lived ledger while a test awaits a result, and end it.
import { randomUUID } from 'node:crypto';
import { Client, WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPosRefundActivities } from '../../src/activities/pos-refund';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { resolveOutcomeUpdate } from '../../src/shared/outcome';
import {
  REFUND_LEDGER_CLOSED,
  posRefundLedgerWorkflowId,
  posRefundStateQuery,
  refundLedgerStateQuery,
  refundMerchantRef,
  type PosRefundResult,
  type PosSealedRefundInput,
} from '../../src/shared/pos-refund';
import type { posRefundWorkflow } from '../../src/workflows/pos-refund';
import { LogCapture } from '../support/stack';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { SECRET_UNAVAILABLE } from '../../src/shared/claim-check';
import { TerminalScript, type F4Answer } from './terminal-script';
import { assertNoRetryWithoutRequery, cardInput, sealedCardInput } from './helpers';
import { FailureTypes } from '../../src/shared/failures';
import { eventually } from '../support/polling';

/** The warnings of the worker, its workflows (their `log`, through the Runtime's logger) and activities. */
const logs = new LogCapture();
const logger = createLogger({ destination: logs, level: 'warn' });
installTemporalRuntime(logger, 'WARN');

const script = new TerminalScript();
const taskQueue = `pos-refund-ts-${randomUUID()}`;
const env = useTimeSkippingEnv({
  worker: { taskQueue, activities: () => ({ ...script.activities(), ...createPosRefundActivities({ logger }) }) },
});
let client: Client;
beforeAll(() => {
  client = new Client({ connection: env.connection, namespace: env.namespace });
});

const uid = (p: string) => `${p}${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const FAST = { requerySettleDelay: '10ms', retryBackoff: '10ms' } as const;

function refundInput(
  sale: string,
  requestId: string,
  amount: number,
  over: Partial<PosSealedRefundInput> = {},
): PosSealedRefundInput {
  const { merchant_ref: _m, transaction_type: _t, ...rest } = sealedCardInput('unused');
  void [_m, _t];
  return { ...rest, amount, refund_request_id: requestId, original_merchant_ref: sale, options: FAST, ...over };
}

const start = (input: PosSealedRefundInput) =>
  client.workflow.start<typeof posRefundWorkflow>('posRefundWorkflow', {
    workflowId: `pos-refund-${refundMerchantRef(input.refund_request_id)}`,
    taskQueue,
    args: [input],
  });
const refund = async (input: PosSealedRefundInput): Promise<PosRefundResult> => (await start(input)).result();
const ledger = (sale: string) =>
  client.workflow.getHandle(posRefundLedgerWorkflowId(sale)).query(refundLedgerStateQuery);

/** A sale of 150000 that F4 shows approved (once per refund that checks it). */
const approvedSale = (sale: string, checks = 1) =>
  script.on(
    sale,
    [],
    Array.from({ length: checks }, () => ({ code: '00', type: 'Purchase' })),
  );

/** A sale refunded 100 000 once (approved), and `second`: another refund request of it, whose F4 finds nothing. */
async function saleRefundedOnce(): Promise<{ sale: string; second: string }> {
  const sale = uid('S');
  const first = uid('rq');
  const second = uid('rq');
  approvedSale(sale, 2);
  script.on(refundMerchantRef(first), [{ code: '00' }], ['not_found']);
  script.on(refundMerchantRef(second), [], ['not_found']);
  expect(await refund(refundInput(sale, first, 100_000))).toMatchObject({ status: 'approved' });
  return { sale, second };
}

afterEach(() => expect(script.leftovers()).toEqual({}));

describe('POS refund: one next step per outcome', () => {
  it('approved: F4 checks the sale, F4 finds no earlier refund, the ledger reserves, F3 Refund once, tied to the sale', async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(own, [{ code: '00' }], ['not_found']);
    const result = await refund(refundInput(sale, req, 50_000));
    expect(result).toMatchObject({
      status: 'approved',
      merchantRef: own,
      originalMerchantRef: sale,
      amount: 50_000,
      attempt: 1,
      ledger: { saleAmount: 150_000, remainingBefore: 150_000, remainingAfter: 100_000 },
    });
    expect(own).toMatch(/^RF[0-9a-z]{13}$/);
    expect(script.opsOf(sale)).toEqual(['requery:found']);
    expect(script.opsOf(own)).toEqual(['requery:not_found', 'initiate']);
    expect(script.sent.find((r) => r.merchant_ref === own)).toMatchObject({
      transaction_type: 'Refund',
      original_merchant_ref: sale,
      amount: '50000',
      card: { bin: '539983', last4: '0008' },
    });
    expect(await ledger(sale)).toMatchObject({
      saleAmount: 150_000,
      refunded: 50_000,
      reserved: 0,
      remaining: 100_000,
    });
  });

  it('lost F3 answer: F4 requery finds the refund, it is not sent again', async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(own, [{ fail: FailureTypes.OutcomeUnknown }], ['not_found', { code: '00', type: 'Refund' }]);
    const result = await refund(refundInput(sale, req, 40_000));
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    expect(script.opsOf(own)).toEqual(['requery:not_found', 'initiate', 'requery:found']);
    expect(await ledger(sale)).toMatchObject({ refunded: 40_000, reserved: 0 });
  });

  it('F4 404 after a lost answer: resent once with the same merchant_ref and request, approved', async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(own, [{ fail: FailureTypes.OutcomeUnknown }, { code: '00' }], ['not_found', 'not_found']);
    const result = await refund(refundInput(sale, req, 40_000));
    expect(result).toMatchObject({ status: 'approved', attempt: 2 });
    expect(script.opsOf(own)).toEqual(['requery:not_found', 'initiate', 'requery:not_found', 'initiate']);
    const sent = script.sent.filter((r) => r.merchant_ref === own);
    expect(sent[1]).toEqual(sent[0]);
    // The pre-send check is not a requery of a send; from the first send on, every resend follows a 404.
    assertNoRetryWithoutRequery(script.calls.filter((c) => c.merchantRef === own).slice(1));
  });

  it('requery unanswerable: parked outcome_unknown (the amount stays reserved), never resent; resolveOutcome declined releases it', async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(
      own,
      [{ fail: FailureTypes.OutcomeUnknown }],
      ['not_found', ...Array.from({ length: 8 }, () => ({ fail: FailureTypes.Unauthorized }))],
    );
    const h = await start(refundInput(sale, req, 60_000, { options: { ...FAST, requeryBackoff: '1 hour' } }));
    const parked = await eventually(
      () => h.query(posRefundStateQuery),
      (s) => s.status === 'outcome_unknown',
      { timeoutMs: 30_000, description: 'the refund parked as outcome_unknown', returnLastOnTimeout: true },
    );
    expect(parked.status).toBe('outcome_unknown');
    expect((await h.describe()).searchAttributes.PaymentStatus).toEqual(['outcome_unknown']);
    expect(await ledger(sale)).toMatchObject({ refunded: 0, reserved: 60_000, remaining: 90_000 });
    await h.executeUpdate(resolveOutcomeUpdate, {
      args: [{ outcome: 'declined', reason: 'acquirer report: refund not processed', operator: 'ops-1' }],
    });
    const result = await h.result();
    expect(result).toMatchObject({ status: 'declined', resolution: { outcome: 'declined', operator: 'ops-1' } });
    expect(script.opsOf(own).filter((o) => o === 'initiate')).toHaveLength(1);
    expect(await ledger(sale)).toMatchObject({ refunded: 0, reserved: 0, remaining: 150_000 });
    script.f4.set(own, []); // the unused "unavailable" answers
  });

  it('declined (51): no money, the reservation is released', async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(own, [{ code: '51' }], ['not_found']);
    expect(await refund(refundInput(sale, req, 150_000))).toMatchObject({ status: 'declined', responseCode: '51' });
    expect(await ledger(sale)).toMatchObject({ refunded: 0, reserved: 0, remaining: 150_000 });
  });

  it('refused by the service (400): rejected, the reservation released', async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(own, [{ fail: FailureTypes.BadRequest }], ['not_found']);
    expect(await refund(refundInput(sale, req, 1_000))).toMatchObject({ status: 'rejected', attempt: 1 });
    expect(await ledger(sale)).toMatchObject({ reserved: 0, remaining: 150_000 });
  });

  it('the sealed card read expired before F3: card_data_unavailable, nothing sent, the reservation released', async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(own, [{ fail: SECRET_UNAVAILABLE }], ['not_found']);
    expect(await refund(refundInput(sale, req, 1_000))).toMatchObject({ status: 'card_data_unavailable', attempt: 0 });
    expect(script.opsOf(own)).toEqual(['requery:not_found']);
    expect(await ledger(sale)).toMatchObject({ reserved: 0, remaining: 150_000 });
  });
});

describe('POS refund: refused before anything is sent', () => {
  it('over what is left of the sale after an earlier refund: refused over_remaining, no F3', async () => {
    const { sale, second } = await saleRefundedOnce();
    const result = await refund(refundInput(sale, second, 60_000));
    expect(result).toMatchObject({ status: 'refused', refusal: 'over_remaining', attempt: 0 });
    expect(result.action).toMatch(/exceeds the amount left to refund.*50000 of 150000/);
    expect(script.opsOf(refundMerchantRef(second))).not.toContain('initiate');
    expect(await ledger(sale)).toMatchObject({ refunded: 100_000, remaining: 50_000 });
  });

  it('two refunds of one sale at once that together exceed it: the ledger grants one, refuses the other; one F3', async () => {
    const sale = uid('S');
    const a = uid('rq');
    const b = uid('rq');
    approvedSale(sale, 2);
    script.on(refundMerchantRef(a), [{ code: '00' }], ['not_found']);
    script.on(refundMerchantRef(b), [{ code: '00' }], ['not_found']);
    const results = await Promise.all([refund(refundInput(sale, a, 100_000)), refund(refundInput(sale, b, 100_000))]);
    // The refused one's F3 script is never used (cleared first, so a failure below does not leave it to the next test).
    const refused = results.find((r) => r.status === 'refused');
    if (refused) script.f3.set(refused.merchantRef, []);
    expect(results.map((r) => r.status).sort()).toEqual(['approved', 'refused']);
    expect(refused).toMatchObject({
      refusal: 'over_remaining',
      attempt: 0,
      action: expect.stringContaining('exceeds'),
    });
    expect(
      script.calls.filter(
        (c) =>
          c.op === 'initiate' && (c.merchantRef === refundMerchantRef(a) || c.merchantRef === refundMerchantRef(b)),
      ),
    ).toHaveLength(1);
    expect(await ledger(sale)).toMatchObject({ refunded: 100_000, remaining: 50_000 });
  });

  it("the sale's ledger has ended (terminated): never started again from zero; the refund is refused unverified, no F3", async () => {
    const { sale, second } = await saleRefundedOnce();
    await client.workflow.getHandle(posRefundLedgerWorkflowId(sale)).terminate('test: the ledger ended abnormally');
    const result = await refund(refundInput(sale, second, 10_000));
    expect(result).toMatchObject({ status: 'refused', refusal: 'unverified', attempt: 0 });
    expect(result.action).toMatch(/refund ledger of sale .* has ended/);
    expect(script.opsOf(refundMerchantRef(second))).toEqual(['requery:not_found']);
  });

  it('"already started" from signalWithStart while the ledger runs (a race the test server does not serialise): the ledger is described, found running and asked; a closed one refuses', async () => {
    // The time-skipping server answers two simultaneous first refunds' signalWithStart with
    // "already started" about one time in forty; this client does it every time, after the call
    // went through, so the activity meets it against a real running ledger.
    const racing = new Client({
      connection: env.connection,
      namespace: env.namespace,
      interceptors: {
        workflow: [
          {
            async signalWithStart(input, next) {
              await next(input);
              throw new WorkflowExecutionAlreadyStartedError(
                'Workflow execution already started',
                input.options.workflowId,
                input.workflowType,
              );
            },
          },
        ],
      },
    });
    const reserve = (sale: string, ref: string, amount: number) =>
      new MockActivityEnvironment({ taskQueue }, { client: racing }).run(
        createPosRefundActivities({ logger }).posRefundReserve,
        {
          ledgerWorkflowId: posRefundLedgerWorkflowId(sale),
          original_merchant_ref: sale,
          sale_amount: 150_000,
          currency: 'NGN' as const,
          merchant_ref: ref,
          amount,
        },
      );
    const sale = uid('S');
    expect(await reserve(sale, uid('RF'), 100_000)).toMatchObject({ remainingBefore: 150_000, remainingAfter: 50_000 });
    expect(await reserve(sale, uid('RF'), 40_000)).toMatchObject({ remainingBefore: 50_000, remainingAfter: 10_000 });
    expect(await ledger(sale)).toMatchObject({ remaining: 10_000 });
    await client.workflow.getHandle(posRefundLedgerWorkflowId(sale)).terminate('test: the ledger ended abnormally');
    const closed = await reserve(sale, uid('RF'), 1_000).catch((e: unknown) => e as ApplicationFailure);
    expect(closed).toMatchObject({ type: REFUND_LEDGER_CLOSED, nonRetryable: true });
  });

  it('more than the sale itself: refused before the ledger is asked', async () => {
    const sale = uid('S');
    const req = uid('rq');
    approvedSale(sale);
    const result = await refund(refundInput(sale, req, 150_001));
    expect(result).toMatchObject({ status: 'refused', refusal: 'over_remaining' });
    expect(result.action).toContain("the refund of 150001 is more than the sale's 150000");
    expect(script.opsOf(refundMerchantRef(req))).toEqual([]);
  });

  it.each<[string, F4Answer, (sale: string) => string, object]>([
    [
      'original_not_found',
      'not_found',
      (s) => `the service has no transaction with merchant_ref ${s} (requery (F4): 404)`,
      {},
    ],
    [
      'original_not_approved',
      { code: '51', type: 'Purchase' },
      (s) => `the sale ${s} was not approved (response code 51)`,
      { original: { responseCode: '51', transactionType: 'Purchase' } },
    ],
    [
      'original_not_approved',
      { code: '51', type: 'Purchase', record: { status: 'success' } },
      (s) => `the sale ${s} was not approved (response code 51)`,
      {},
    ],
    [
      'original_not_approved',
      { code: '00', type: 'Purchase', record: { status: 'failed' } },
      (s) => `the sale ${s} was not approved (response code 00)`,
      {},
    ],
    [
      'original_not_approved',
      { code: '', type: 'Purchase' },
      (s) => `the sale ${s} was not approved (response code none)`,
      {},
    ],
    [
      'original_not_refundable',
      { code: '00', type: 'Pre-Authorization' },
      (s) => `${s} is a Pre-Authorization, not a Purchase or Completion`,
      { original: { transactionType: 'Pre-Authorization' } },
    ],
    [
      'card_mismatch',
      { code: '00', type: 'Purchase', pan: '539983******1234' },
      () => 'is not the card of the sale (539983******1234)',
      { original: { maskedPan: '539983******1234' } },
    ],
    [
      'card_mismatch',
      { code: '00', type: 'Purchase', pan: '411111******0008' },
      () => 'is not the card of the sale (411111******0008)',
      {},
    ],
    [
      'currency_mismatch',
      { code: '00', type: 'Purchase', currency: 'USD' },
      () => 'the sale was in USD, the refund in NGN',
      {},
    ],
  ])('%s: refused after F4 of the sale, nothing else asked or sent (%#)', async (refusal, answer, why, recorded) => {
    const sale = uid('S');
    const req = uid('rq');
    script.on(sale, [], [answer]);
    const result = await refund(refundInput(sale, req, 1_000));
    expect(result).toMatchObject({ status: 'refused', refusal, attempt: 0, ...recorded });
    expect(result.action).toContain(why(sale));
    expect(script.opsOf(refundMerchantRef(req))).toEqual([]);
  });

  it('a sale record without a currency or a card: nothing to compare, the refund goes on', async () => {
    const sale = uid('S');
    const req = uid('rq');
    script.on(
      sale,
      [],
      [{ code: '00', type: 'Purchase', record: { currency: undefined, card_pan_masked: undefined } }],
    );
    script.on(refundMerchantRef(req), [{ code: '00' }], ['not_found']);
    expect(await refund(refundInput(sale, req, 1_000))).toMatchObject({ status: 'approved', attempt: 1 });
  });

  it('the sale cannot be checked (F4 unavailable): refused unverified, nothing sent', async () => {
    const sale = uid('S');
    const req = uid('rq');
    script.on(sale, [], [{ fail: FailureTypes.Unauthorized }]);
    const result = await refund(refundInput(sale, req, 1_000));
    expect(result).toMatchObject({ status: 'refused', refusal: 'unverified' });
    expect(result.action).toContain(
      `the original sale ${sale} could not be checked (requery (F4): scripted Unauthorized)`,
    );
  });

  it("the refund's own merchant_ref cannot be checked (F4 unavailable): refused unverified, nothing reserved or sent", async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(own, [], [{ fail: FailureTypes.ServiceError }]);
    const result = await refund(refundInput(sale, req, 1_000));
    expect(result).toMatchObject({ status: 'refused', refusal: 'unverified', attempt: 0 });
    expect(result.action).toContain(
      `the refund's own merchant_ref ${own} could not be checked (requery (F4): scripted ServiceError)`,
    );
    expect(script.opsOf(own)).toEqual(['requery:error']);
  });

  it('the same refund request already reached the service (its merchant_ref found before sending): that outcome, not sent again; its sale ledger not running, a warning', async () => {
    const sale = uid('S');
    const req = uid('rq');
    const own = refundMerchantRef(req);
    approvedSale(sale);
    script.on(own, [], [{ code: '00', type: 'Refund', amount: 20_000 }]);
    const result = await refund(refundInput(sale, req, 20_000));
    expect(result).toMatchObject({ status: 'approved', attempt: 0 });
    expect(result.action).toMatch(/reached the service earlier.*not sent again/);
    expect(script.opsOf(own)).toEqual(['requery:found']);
    // Its sale's ledger never started (nothing was reserved): the approval is counted nowhere, and the refund warns.
    const warning = await eventually(() =>
      logs.records.find((r) => r.msg === 'refund ledger not settled' && r.workflowId === `pos-refund-${own}`),
    );
    expect(warning).toMatchObject({
      level: 'warn',
      sdkComponent: 'workflow',
      ledgerId: posRefundLedgerWorkflowId(sale),
      outcome: 'approved',
      error: expect.stringMatching(/not found/),
      type: 'ServiceError',
    });
  });

  it('sent earlier to a sale whose ledger runs: an approved one is counted in the ledger, a declined one is not', async () => {
    const { sale, second } = await saleRefundedOnce(); // 100 000 of 150 000 refunded: the ledger runs
    script.f4.set(refundMerchantRef(second), []); // not used here
    const [approvedReq, declinedReq] = [uid('rq'), uid('rq')];
    approvedSale(sale); // the second check is saleRefundedOnce's
    script.on(refundMerchantRef(approvedReq), [], [{ code: '00', type: 'Refund', amount: 20_000 }]);
    script.on(refundMerchantRef(declinedReq), [], [{ code: '51', type: 'Refund', amount: 10_000 }]);
    const approved = await refund(refundInput(sale, approvedReq, 20_000));
    expect(approved).toMatchObject({ status: 'approved', responseCode: '00', transaction: { response_code: '00' } });
    expect(approved.steps).toContainEqual(
      expect.objectContaining({
        op: 'requery',
        outcome: 'found',
        detail: 'before the first send: this refund request was sent earlier',
      }),
    );
    const declined = await refund(refundInput(sale, declinedReq, 10_000));
    expect(declined).toMatchObject({ status: 'declined', responseCode: '51' });
    await eventually(
      () => ledger(sale),
      (l) => l.refunded === 120_000,
      { timeoutMs: 20_000, description: 'the approved one counted' },
    );
    expect(await ledger(sale)).toMatchObject({ refunded: 120_000, reserved: 0, remaining: 30_000 });
  });

  it('a card read in clear, a bad amount or request id: InvalidInput naming the fields, no activity', async () => {
    const before = script.calls.length;
    const raw = { ...refundInput('S-1', 'bad id!', 1.5), card_pan: cardInput('x').card_pan };
    const err = await client.workflow
      .execute('posRefundWorkflow', { workflowId: `pos-refund-bad-${randomUUID()}`, taskQueue, args: [raw] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('InvalidInput');
    for (const f of ['card_pan must not be in the workflow input', 'refund_request_id', 'amount'])
      expect(cause.message).toContain(f);
    expect(cause.message).not.toContain(cardInput('x').card_pan);
    expect(script.calls.length).toBe(before);
  });
});
