// The `payments` Nexus service on the suite's dev server: a second namespace `merchant` runs its own
// worker with a caller workflow (test/nexus/fixtures/merchant-workflows.ts) that calls the operations
// through a Nexus endpoint targeting our payments worker's task queue, against the sandbox over HTTP.
// It gets each flow's final outcome; a cancelled operation is the flow's own cancel request; bad input
// is refused by name; a card goes through sealed, so no card number is in either namespace's history.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createDataConverter } from '../../src/codec/data-converter';
import { MANDATE_OTP, SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';
import { verifyReturnLink } from '../../src/config/return-links';
import { PROJECT_ROOT, temporalBinaries } from '../../src/stack/temporal-binaries';
import { NEXUS_CALLER_MEMO } from '../../src/nexus/caller';
import { sealCardPaymentForNexus } from '../../src/nexus/payments-handler';
import { sealMandateForNexus, sealMandateOtpForNexus, sealPosCompletionForNexus } from '../../src/nexus/sealing';
import { mandateWorkflowId } from '../../src/shared/mandate';
import {
  completionMerchantRef,
  PosCompletionCardReadSchema,
  posPreAuthStateQuery,
  posPreAuthWorkflowId,
  type PosCompletionCardRead,
} from '../../src/shared/pos-preauth';
import { refundMerchantRef } from '../../src/shared/pos-refund';
import type { PosTransactionInput } from '../../src/shared/pos-terminal';
import { submitBankCode } from '../../src/starters/bank-payment';
import { getDirectPaymentState } from '../../src/starters/payment-common';
import { openPosTerminalSession, sealPosCardRead, type PosTerminalSession } from '../../src/starters/pos-terminal';
import { firstPaymentCheckoutUrl, getRecurringState } from '../../src/starters/recurring';
import { PAYMENTS_NEXUS_SERVICE } from '../../src/nexus/payments-service';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { PaymentFlow } from '../../src/shared/search-attributes';
import { posRemoteStateQuery, posRemoteWorkflowId, type PosRemoteResult } from '../../src/shared/pos-remote';
import { getCardPaymentState, submitOtp } from '../../src/starters/card-payment';
import { getCheckoutState } from '../../src/starters/checkout';
import { resolveParkedFlow } from '../../src/starters/ops';
import { getMandateState, startMandate } from '../../src/starters/mandate';
import { cardPayment, electricityVend, newMandateRequest } from '../support/flow-inputs';
import { historyTexts } from '../support/history';
import { eventually } from '../support/polling';
import { payCheckoutByCard } from '../support/sandbox-admin';
import { devServerAddress, testConfig, useServices, workflowBundle } from '../support/stack';
import { sandboxCard, shortRef } from '../pos/sandbox';
import {
  cancelPaymentSignal,
  type CallerAnswer,
  type merchantCancelsWorkflow,
  type merchantPaysWorkflow,
  type OpName,
} from './fixtures/merchant-workflows';

const MERCHANT_NAMESPACE = 'merchant';
/** A second caller namespace with its own endpoint: it must not reach the first one's flows. */
const OTHER_NAMESPACE = 'merchant-b';
const COMPLETE_AFTER_MS = 60_000;
const config = testConfig();
const env = useServices(config, undefined, { sandbox: { posRemoteCompleteAfterMs: COMPLETE_AFTER_MS } });

const fast = { pollIntervalMs: 200, heartbeatTimeout: '3s' } as const;

/** A caller namespace: its endpoint (one per caller namespace, docs/nexus.md), its client and worker. */
interface Caller {
  namespace: string;
  endpoint: string;
  endpointId?: string;
  taskQueue: string;
  client: Client;
  worker?: Worker;
  running?: Promise<void>;
  connection?: NativeConnection;
}

let connection: Connection;
const callers: Caller[] = [];
let merchant: Client;
let merchantTaskQueue: string;
let endpoint: string;
let other: Caller;

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string) =>
  eventually(read, ok, { timeoutMs: 30_000, intervalMs: 100, description: what, ignoreErrors: true });

async function openCaller(namespace: string, bundle: Awaited<ReturnType<typeof workflowBundle>>): Promise<Caller> {
  await connection.workflowService
    .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') })
    .catch((err: { code?: number }) => {
      if (err.code !== 6) throw err; // ALREADY_EXISTS: another file's run registered it
    });
  const endpointName = `payments-${namespace}-${randomUUID()}`;
  const created = await connection.operatorService.createNexusEndpoint({
    spec: {
      name: endpointName,
      target: { worker: { namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue } },
    },
  });
  const caller: Caller = {
    namespace,
    endpoint: endpointName,
    endpointId: created.endpoint?.id ?? undefined,
    taskQueue: `${namespace}-${randomUUID()}`,
    client: new Client({ connection, namespace, dataConverter: createDataConverter(config.encryption) }),
  };
  callers.push(caller);
  caller.connection = await NativeConnection.connect({ address: devServerAddress() });
  // A namespace just registered reaches the server's namespace cache within seconds.
  caller.worker = await eventually(
    () =>
      Worker.create({
        connection: caller.connection!,
        namespace,
        taskQueue: caller.taskQueue,
        workflowBundle: bundle,
        dataConverter: createDataConverter(config.encryption),
      }),
    { timeoutMs: 30_000, intervalMs: 500, ignoreErrors: true, description: `a worker in the ${namespace} namespace` },
  );
  caller.running = caller.worker.run();
  return caller;
}

beforeAll(async () => {
  connection = await Connection.connect({ address: devServerAddress() });
  const bundle = await workflowBundle(require.resolve('./fixtures/merchant-workflows'));
  const first = await openCaller(MERCHANT_NAMESPACE, bundle);
  ({ client: merchant, taskQueue: merchantTaskQueue, endpoint } = first);
  other = await openCaller(OTHER_NAMESPACE, bundle);
}, 120_000);

afterAll(async () => {
  for (const c of callers) {
    c.worker?.shutdown();
    await c.running?.catch(() => undefined);
    await c.connection?.close();
    if (c.endpointId) {
      const got = await connection.operatorService.getNexusEndpoint({ id: c.endpointId });
      await connection.operatorService.deleteNexusEndpoint({ id: c.endpointId, version: got.endpoint?.version });
    }
  }
  await connection?.close();
});

/** Starts the merchant's caller workflow for one operation (from the first caller namespace, or `by`). */
const call = (op: OpName, input: unknown, by?: Caller): Promise<WorkflowHandle<typeof merchantPaysWorkflow>> =>
  (by?.client ?? merchant).workflow.start<typeof merchantPaysWorkflow>('merchantPaysWorkflow', {
    taskQueue: by?.taskQueue ?? merchantTaskQueue,
    workflowId: `merchant-${op}-${randomUUID()}`,
    args: [by?.endpoint ?? endpoint, op, input],
  });
/** What the caller got back from one operation. */
const answer = async (op: OpName, input: unknown, by?: Caller): Promise<CallerAnswer> =>
  (await call(op, input, by)).result();

const payments = () => env.services.client;

describe('the payments Nexus service, called from the merchant namespace', () => {
  it("docs/nexus.md's endpoint command, run as written, creates the caller's endpoint targeting the payments worker", async () => {
    const doc = readFileSync(join(PROJECT_ROOT, 'docs', 'nexus.md'), 'utf8');
    const command = /^temporal operator nexus endpoint create .*$/m.exec(doc)?.[0];
    expect(command).toBeDefined();
    const cli = temporalBinaries().cli;
    expect(cli).toBeDefined(); // scripts/install-temporal.mjs puts it there for the suite's dev server
    const name = /--name (\S+)/.exec(command!)![1];
    const byName = async () =>
      (await connection.operatorService.listNexusEndpoints({ name, pageSize: 1 })).endpoints?.[0] ?? undefined;
    const remove = async () => {
      const found = await byName();
      if (found?.id) await connection.operatorService.deleteNexusEndpoint({ id: found.id, version: found.version });
    };
    await remove(); // left by an interrupted run
    const run = spawnSync(cli!, command!.split(' ').slice(1), {
      env: { ...process.env, TEMPORAL_ADDRESS: devServerAddress() },
      encoding: 'utf8',
    });
    try {
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect((await byName())?.spec?.target?.worker).toMatchObject({ namespace: 'default', taskQueue: 'payments' });
    } finally {
      await remove();
    }
  });

  it('vend: the caller gets the final outcome (vended, with the token) of a vendElectricityWorkflow under vend-<order_ref>', async () => {
    const orderRef = `nx-vend-${randomUUID()}`;
    const answer: CallerAnswer = await (await call('vend', electricityVend(orderRef))).result();
    expect(answer.failure).toBeUndefined();
    expect(answer.outcome).toMatchObject({ status: 'vended' });
    expect((answer.outcome as { token?: string }).token).toBeTruthy();
    // The flow is the same one the starters start: its id, its search attributes.
    const desc = await payments().workflow.getHandle(`vend-${orderRef}`).describe();
    expect(desc.type).toBe('vendElectricityWorkflow');
    expect(desc.status.name).toBe('COMPLETED');
    expect(desc.typedSearchAttributes.get(PaymentFlow)).toBe('vend');
  });

  it('checkout: the operation waits while the payer pays on the checkout page; the caller gets success', async () => {
    const ref = `nx-co-${randomUUID()}`;
    const h = await call('checkoutPayment', {
      transactionRef: ref,
      amount: 250_000,
      currency: 'NGN',
      email: 'ada@example.com',
    });
    const state = await until(
      () => getCheckoutState(env.services.starters, ref),
      (s) => Boolean(s.checkoutUrl),
      'the checkout URL',
    );
    await payCheckoutByCard(state.checkoutUrl!);
    const answer = await h.result();
    expect(answer.outcome).toMatchObject({ status: 'success', transactionRef: ref });
    expect(await env.admin.ledger(ref)).toHaveLength(1);
  });

  it('POS remote request: pending until the terminal completes, then the caller gets success', async () => {
    const reference = shortRef('nxr');
    const h = await call('posRemoteRequest', { reference, terminal_id: '2SBX0001', amount: 150_000, options: fast });
    const flow = payments().workflow.getHandle(posRemoteWorkflowId(reference));
    await until(
      () => flow.query(posRemoteStateQuery),
      (s) => s.status === 'pending' && Boolean(s.requestRef),
      'the request pending at the terminal',
    );
    await env.admin.advanceClock(COMPLETE_AFTER_MS); // the payer taps the card
    const answer = await h.result();
    expect(answer.outcome).toMatchObject({ status: 'success', amount: 150_000 });
  });

  it('mandate: created with the BVN sealed, approved by a sealed OTP, debited; the same key after continue-as-new is the first debit; cancelled', async () => {
    const request = newMandateRequest({ debitsPerRun: 1 }); // continues as new after each debit
    const { mandateRef } = request;
    const sealed = await sealMandateForNexus(env.services.starters, request);
    expect(JSON.stringify(sealed)).not.toContain(request.customer.bvn);
    const created = await call('mandateCreate', sealed);
    await until(
      () => getMandateState(env.services.starters, mandateRef),
      (s) => s.status === 'awaiting_otp',
      'the mandate awaiting its OTP',
    );
    expect((await answer('mandateState', { mandateRef })).outcome).toMatchObject({ status: 'awaiting_otp' });
    const otp = await answer(
      'mandateOtp',
      await sealMandateOtpForNexus(env.services.starters, mandateRef, MANDATE_OTP),
    );
    expect(otp.outcome).toMatchObject({ status: 'approved' });

    const mandateFlow = payments().workflow.getHandle(mandateWorkflowId(mandateRef));
    const firstRun = (await mandateFlow.describe()).runId;
    const debit = { mandateRef, amount: 500_000, idempotencyKey: `k-${randomUUID()}` };
    const first = (await answer('mandateDebit', debit)).outcome as { status: string; reference: string };
    expect(first).toMatchObject({ status: 'success', amount: 500_000 });
    await until(
      () => mandateFlow.describe(),
      (d) => d.runId !== firstRun && d.status.name === 'RUNNING',
      'the mandate continued as new',
    );
    // The Update id alone cannot find it now (a new run): the key carried into the debit does.
    const again = await answer('mandateDebit', debit);
    expect(again.failure).toBeUndefined();
    expect(again.outcome).toMatchObject({ status: 'success', reference: first.reference, amount: 500_000 });
    expect(await env.admin.ledger({ reference: first.reference })).toHaveLength(1);

    const cancelled = await answer('mandateCancel', { mandateRef });
    expect(cancelled.outcome).toMatchObject({ status: 'cancelled' });
    expect((await created.result()).outcome).toMatchObject({ status: 'cancelled', mandateRef });
    // Neither namespace's history holds the BVN or the OTP, raw or decoded.
    for (const h of [created, mandateFlow]) {
      const { raw, decoded, payloads } = await historyTexts(h, config.encryption);
      expect(payloads).toBeGreaterThan(0);
      for (const secret of [request.customer.bvn, `"${MANDATE_OTP}"`]) {
        expect(raw).not.toContain(secret);
        expect(decoded).not.toContain(secret);
      }
    }
  });

  it('a caller reaches only the flows it started: another namespace gets the answer of an unknown reference', async () => {
    const request = newMandateRequest();
    const { mandateRef } = request;
    void call('mandateCreate', await sealMandateForNexus(env.services.starters, request));
    await until(
      () => getMandateState(env.services.starters, mandateRef),
      (s) => s.status === 'awaiting_otp',
      'the mandate awaiting its OTP',
    );
    await answer('mandateOtp', await sealMandateOtpForNexus(env.services.starters, mandateRef, MANDATE_OTP));
    const unknownRef = `M${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const debit = (ref: string) => ({ mandateRef: ref, amount: 300_000, idempotencyKey: `k-${randomUUID()}` });
    for (const [op, input] of [
      ['mandateDebit', debit],
      ['mandateState', (ref: string) => ({ mandateRef: ref })],
      ['mandateCancel', (ref: string) => ({ mandateRef: ref })],
    ] as [OpName, (ref: string) => unknown][]) {
      const theirs = await answer(op, input(mandateRef), other);
      const unknown = await answer(op, input(unknownRef), other);
      expect(theirs.outcome).toBeUndefined();
      expect(theirs.failure?.join(' | ')).toContain(
        'mandateRef: no mandate by this reference was started through this endpoint',
      );
      expect(theirs.failure).toEqual(unknown.failure); // word for word: nothing tells them apart
    }
    // A mandate the starters created belongs to no Nexus caller either.
    const byStarters = newMandateRequest();
    await startMandate(env.services.starters, byStarters);
    const refused = await answer('mandateState', { mandateRef: byStarters.mandateRef });
    expect(refused.failure?.join(' | ')).toContain('no mandate by this reference was started through this endpoint');
    // Nothing moved, and the owner still reaches its mandate.
    expect(await getMandateState(env.services.starters, mandateRef)).toMatchObject({
      status: 'approved',
      debitCount: 0,
      totalDebited: 0,
    });
    expect((await answer('mandateState', { mandateRef })).outcome).toMatchObject({ status: 'approved', mandateRef });
    // A step the flow refuses fails the operation with the flow's reason (not retried until the timeout).
    const over = await answer('mandateDebit', { ...debit(mandateRef), amount: 2_000_000 });
    expect(over.outcome).toBeUndefined();
    expect(over.failure?.join(' | ')).toMatch(/amount 2000000 exceeds the remaining balance 1000000/);
    const flow = await payments().workflow.getHandle(mandateWorkflowId(mandateRef)).describe();
    expect(flow.memo?.[NEXUS_CALLER_MEMO]).toEqual({ endpoint, namespace: MERCHANT_NAMESPACE });
    await answer('mandateCancel', { mandateRef });
  });

  it("a checkout's return link to /payments/return is signed by the handler, as the starters sign it", async () => {
    const ref = `nx-rl-${randomUUID()}`;
    const h = await call('checkoutPayment', {
      transactionRef: ref,
      amount: 250_000,
      currency: 'NGN',
      email: 'ada@example.com',
      callbackUrl: 'https://pay.example.com/payments/return',
    });
    const flow = payments().workflow.getHandle(paymentWorkflowId(ref));
    await until(
      () => getCheckoutState(env.services.starters, ref),
      (s) => Boolean(s.checkoutUrl),
      'the checkout started',
    );
    const { decoded } = await historyTexts(flow, config.encryption);
    const link = decoded.match(/https:\/\/pay\.example\.com\/payments\/return\?[^"\\]+/)?.[0];
    expect(link).toBeDefined();
    expect(verifyReturnLink(new URL(link!).searchParams, config.returnLinks.key)).toEqual({ reference: ref });
    await flow.terminate('test over');
    // The payment's end can end the caller's operation, and so the caller, before this line.
    await h.terminate('test over').catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    });
  });

  it('bank payment: the payer sends the code through the starters meanwhile; the caller gets success', async () => {
    const ref = `nx-bank-${randomUUID()}`;
    const h = await call('bankPayment', {
      transactionRef: ref,
      amount: 250_000,
      currency: 'NGN',
      bank: { bankCode: '058', accountOrPhone: '0123456789' },
      customer: { name: 'Ada Obi', email: 'ada@example.com' },
    });
    await until(
      () => getDirectPaymentState(env.services.starters, ref),
      (s) => s.status === 'awaiting_code',
      'the bank debit awaiting its code',
    );
    await submitBankCode(env.services.starters, ref, SANDBOX_OTP);
    expect((await h.result()).outcome).toMatchObject({ status: 'success', transactionRef: ref });
    expect(await env.admin.ledger(ref)).toMatchObject([{ kind: 'bank_debit', amount: 250_000 }]);
  });

  it('USSD payment: the payer dials the code from the state; the caller gets success', async () => {
    const ref = `nx-ussd-${randomUUID()}`;
    const h = await call('ussdPayment', {
      transactionRef: ref,
      amount: 150_000,
      currency: 'NGN',
      bankCode: '058',
      customer: { name: 'Ada Obi', email: 'ada@example.com' },
    });
    const waiting = await until(
      () => getDirectPaymentState(env.services.starters, ref),
      (s) => s.status === 'awaiting_payment',
      'the USSD code',
    );
    expect(waiting.ussdCode).toMatch(/^\*058\*/);
    await env.admin.payUssd(ref);
    expect((await h.result()).outcome).toMatchObject({ status: 'success', transactionRef: ref });
    expect(await env.admin.ledger(ref)).toMatchObject([{ kind: 'ussd', amount: 150_000 }]);
  });

  it("recurring plan and token charge: the plan's first payment tokenises, a charge of that token is one ledger entry; cancelling the operation is the plan's own cancel (A5)", async () => {
    const planRef = `nx-plan-${randomUUID().slice(0, 8)}`;
    const plan = await merchant.workflow.start<typeof merchantCancelsWorkflow>('merchantCancelsWorkflow', {
      taskQueue: merchantTaskQueue,
      workflowId: `merchant-cancel-${randomUUID()}`,
      args: [
        endpoint,
        'recurringPlan',
        { planRef, amount: 150_000, currency: 'NGN', email: 'ada@example.com', intervalMs: 24 * 3600_000 },
      ],
    });
    await payCheckoutByCard(await firstPaymentCheckoutUrl(env.services.starters, planRef));
    const { tokenId } = await until(
      () => getRecurringState(env.services.starters, planRef),
      (s) => s.status === 'active',
      'the plan active with its token',
    );
    const ref = `nx-tok-${randomUUID()}`;
    const charge = await answer('tokenCharge', { reference: ref, tokenId, amount: 70_000, currency: 'NGN' });
    expect(charge.failure).toBeUndefined();
    expect(charge.outcome).toMatchObject({ status: 'success', charged: true });
    expect(await env.admin.ledger(ref)).toMatchObject([{ kind: 'token_charge', amount: 70_000 }]);
    await plan.signal(cancelPaymentSignal);
    const answered = await plan.result();
    expect(answered.failure).toBeUndefined();
    expect(answered.outcome).toMatchObject({ status: 'cancelled', reason: 'token cancelled (A5)', tokenId });
    // The token is cancelled at the service: charging it again is refused.
    await expect(
      env.services.api.tokens.charge({ amount: 70_000, token_id: tokenId!, transaction_ref: `${planRef}-X` }),
    ).rejects.toThrow();
  });

  it('SMS send: the caller gets the send result', async () => {
    const reference = `nx-sms-${randomUUID()}`;
    const sent = await answer('smsSend', {
      reference,
      sender_id: 'SHOP',
      messages: ['2348011110001', '2348011110002'].map((p) => ({ phone_number: p, message: 'Your order has shipped' })),
    });
    expect(sent.failure).toBeUndefined();
    expect(sent.outcome).toMatchObject({ status: 'sent', counts: { total: 2, sent: 2 } });
    const bad = await answer('smsSend', { reference: `nx-sms-${randomUUID()}`, sender_id: 'SHOP', messages: [] });
    expect(bad.failure?.join(' | ')).toMatch(/BAD_REQUEST.*messages/s);
  });

  describe('POS through Nexus, the card reads sealed in the caller backend', () => {
    let session: PosTerminalSession;
    beforeAll(async () => {
      session = await openPosTerminalSession(env.services.starters, { serial_no: 'SN-0002' });
    });
    afterAll(() => session?.close());
    const read = (ref: string, over: Partial<PosTransactionInput> = {}) =>
      sandboxCard('0000', ref, session.terminalId, session.pinKey(), over);
    const sealed = async <T>(r: PosTransactionInput | Record<string, unknown>): Promise<T> => {
      const s = await sealPosCardRead<T>(env.services.starters, r as PosTransactionInput);
      return s.input;
    };

    it('a sale (posTransaction), then its refund (posRefund): approved, one ledger entry each; no PAN in the caller history', async () => {
      const saleRef = shortRef('nxs');
      const saleRead = read(saleRef);
      const sale = await call('posTransaction', await sealed(saleRead));
      expect((await sale.result()).outcome).toMatchObject({ status: 'approved' });
      const { merchant_ref: _m, transaction_type: _t, ...refundRead } = read('unused');
      void [_m, _t];
      const requestId = `rq-${saleRef}`;
      const refund = await answer(
        'posRefund',
        await sealed({ ...refundRead, amount: 100_000, refund_request_id: requestId, original_merchant_ref: saleRef }),
      );
      expect(refund.failure).toBeUndefined();
      expect(refund.outcome).toMatchObject({ status: 'approved', amount: 100_000 });
      expect(await env.admin.ledger({ reference: refundMerchantRef(requestId) })).toMatchObject([
        { kind: 'pos_refund', amount: 100_000 },
      ]);
      const { raw, decoded } = await historyTexts(sale, config.encryption);
      expect(raw).not.toContain(saleRead.card_pan);
      expect(decoded).not.toContain(saleRead.card_pan);
    });

    it('a pre-authorisation completed by its caller; another namespace can neither complete nor release it; a second one released', async () => {
      /** The same card presented again (fresh chip data): the fields a completion's card read has. */
      const completionRead = (amount: number): PosCompletionCardRead => {
        const r = read('unused', { amount }) as unknown as Record<string, unknown>;
        return Object.fromEntries(
          Object.keys(PosCompletionCardReadSchema.shape).map((k) => [k, r[k]]),
        ) as PosCompletionCardRead;
      };
      const hold = async (ref: string) => {
        const { transaction_type: _t, ...r } = read(ref, { amount: 300_000 });
        void _t;
        const h = await call('posPreAuth', await sealed(r));
        await until(
          () => payments().workflow.getHandle(posPreAuthWorkflowId(ref)).query(posPreAuthStateQuery),
          (st) => st.status === 'held',
          'the pre-authorisation held',
        );
        return h;
      };
      const ref = shortRef('nxp');
      const held = await hold(ref);
      const completion = await sealPosCompletionForNexus(env.services.starters, ref, completionRead(275_000));
      const theirs = await answer('posPreAuthComplete', completion, other);
      const unknown = await answer('posPreAuthComplete', { ...completion, merchantRef: shortRef('nxu') }, other);
      expect(theirs.failure?.join(' | ')).toContain(
        'merchantRef: no pre-authorisation by this reference was started through this endpoint',
      );
      expect(theirs.failure).toEqual(unknown.failure);
      expect((await answer('posPreAuthRelease', { merchantRef: ref }, other)).failure).toEqual(
        (await answer('posPreAuthRelease', { merchantRef: shortRef('nxu') }, other)).failure,
      );
      const accepted = await answer('posPreAuthComplete', completion);
      expect(accepted.outcome).toMatchObject({ completionMerchantRef: completionMerchantRef(ref), amount: 275_000 });
      expect((await held.result()).outcome).toMatchObject({
        status: 'completed',
        completion: { amount: 275_000, status: 'approved' },
      });

      const ref2 = shortRef('nxr');
      const held2 = await hold(ref2);
      expect((await answer('posPreAuthRelease', { merchantRef: ref2, reason: 'customer left' })).outcome).toMatchObject(
        { releasedAt: expect.any(String) },
      );
      expect((await held2.result()).outcome).toMatchObject({ status: 'released', releaseReason: 'customer left' });
    });
  });

  it('card: the caller passes a sealed card and the payer sends the OTP through the starters; no card number in either history', async () => {
    const ref = `nx-card-${randomUUID()}`;
    const sealed = await sealCardPaymentForNexus(env.services.starters, cardPayment(ref, TEST_CARDS.otpOnly, 100_000));
    const h = await call('cardPayment', sealed);
    await until(
      () => getCardPaymentState(env.services.starters, ref),
      (s) => s.status === 'awaiting_otp',
      'the card payment awaiting its OTP',
    );
    await submitOtp(env.services.starters, ref, SANDBOX_OTP);
    const answer = await h.result();
    expect(answer.outcome).toMatchObject({ status: 'success', transactionRef: ref });
    for (const handle of [h, payments().workflow.getHandle(paymentWorkflowId(ref))]) {
      const { raw, decoded, payloads } = await historyTexts(handle, config.encryption);
      expect(payloads).toBeGreaterThan(0);
      expect(raw).not.toContain(TEST_CARDS.otpOnly);
      expect(decoded).not.toContain(TEST_CARDS.otpOnly);
      expect(decoded).toContain(sealed.card.handle); // the history holds the handle only
    }
  });

  it('a card in the clear is refused by name before any flow starts', async () => {
    const ref = `nx-clear-${randomUUID()}`;
    const answer = await (await call('cardPayment', cardPayment(ref, TEST_CARDS.otpOnly, 100_000))).result();
    const said = answer.failure?.join(' | ');
    expect(said).toContain('BAD_REQUEST');
    expect(said).toMatch(/card\.handle Invalid input/);
    expect(said).toMatch(/card Unrecognized keys: "number", "cvv"/);
    expect(said).not.toContain(TEST_CARDS.otpOnly); // the refusal names the fields, never their values
    await expect(payments().workflow.getHandle(paymentWorkflowId(ref)).describe()).rejects.toThrow();
  });

  it('bad input is refused, naming the field and the rule; no flow starts', async () => {
    const orderRef = `nx-bad-${randomUUID()}`;
    const bad = await (await call('vend', electricityVend(orderRef, { amount: 50.5 }))).result();
    expect(bad.failure?.join(' | ')).toMatch(/BAD_REQUEST.*amount must be a whole amount/s);
    await expect(payments().workflow.getHandle(`vend-${orderRef}`).describe()).rejects.toThrow();
  });

  it('a reference already started is refused, not joined', async () => {
    const reference = shortRef('nxd');
    const input = { reference, terminal_id: '2SBX0012', amount: 1000, options: fast };
    const first = await call('posRemoteRequest', input);
    await until(
      () => payments().workflow.getHandle(posRemoteWorkflowId(reference)).describe(),
      (d) => d.status.name === 'RUNNING',
      'the first request started',
    );
    const second = await (await call('posRemoteRequest', input)).result();
    expect(second.failure?.join(' | ')).toContain(`reference already started: ${posRemoteWorkflowId(reference)}`);
    await first.terminate('test over');
    await payments().workflow.getHandle(posRemoteWorkflowId(reference)).terminate('test over');
  });

  it("cancelling the operation is the POS remote request's own cancel: it watches until the lifetime ends, then ends cancelled", async () => {
    const reference = shortRef('nxc');
    const h = await merchant.workflow.start<typeof merchantCancelsWorkflow>('merchantCancelsWorkflow', {
      taskQueue: merchantTaskQueue,
      workflowId: `merchant-cancel-${randomUUID()}`,
      args: [
        endpoint,
        'posRemoteRequest',
        {
          reference,
          terminal_id: '2SBX0011',
          amount: 9900,
          options: { ...fast, requestLifetime: '2s', searchInterval: '200ms' },
        },
      ],
    });
    const flow = payments().workflow.getHandle(posRemoteWorkflowId(reference));
    await until(
      () => flow.query(posRemoteStateQuery),
      (s) => s.status === 'pending',
      'the request pending',
    );
    await h.signal(cancelPaymentSignal);
    await until(
      () => flow.query(posRemoteStateQuery),
      (s) => s.status === 'cancelling',
      'the flow cancelling',
    );
    await env.admin.advanceClock(5 * 60 * 1000);
    const result = (await flow.result()) as PosRemoteResult;
    expect(result).toMatchObject({ status: 'cancelled', cancelRequested: true });
    const answer = await h.result();
    expect(answer.token).toBeTruthy();
    // The caller's cancelled operation answers with the flow's own final outcome.
    expect(answer.failure).toBeUndefined();
    expect(answer.outcome).toEqual(result);
  });

  it('cancelling a card payment waiting for its OTP: verify finds it pending, so it parks (never just "cancelled"); the caller gets the settled outcome', async () => {
    const ref = `nx-cc-${randomUUID()}`;
    const sealed = await sealCardPaymentForNexus(env.services.starters, cardPayment(ref, TEST_CARDS.otpOnly, 100_000));
    const h = await merchant.workflow.start<typeof merchantCancelsWorkflow>('merchantCancelsWorkflow', {
      taskQueue: merchantTaskQueue,
      workflowId: `merchant-cancel-${randomUUID()}`,
      args: [endpoint, 'cardPayment', sealed],
    });
    await until(
      () => getCardPaymentState(env.services.starters, ref),
      (s) => s.status === 'awaiting_otp',
      'the card payment awaiting its OTP',
    );
    await h.signal(cancelPaymentSignal);
    // B1 was sent and the service says Pending: the payment parks until the service or an operator settles it.
    const parked = await until(
      () => getCardPaymentState(env.services.starters, ref),
      (s) => s.status === 'outcome_unknown',
      'the payment parked',
    );
    expect(parked.reason).toContain('cancelled by the caller while the payment is still pending at the service');
    expect((await h.describe()).status.name).toBe('RUNNING'); // the caller is not told "cancelled"
    await resolveParkedFlow(env.services.starters, paymentWorkflowId(ref), {
      outcome: 'failed',
      reason: 'settlement report: never captured',
      operator: 'ops@example.com',
    });
    const answer = await h.result();
    expect(answer.failure).toBeUndefined();
    expect(answer.outcome).toMatchObject({
      status: 'failed',
      transactionRef: ref,
      resolution: { outcome: 'failed', operator: 'ops@example.com' },
    });
    expect(PAYMENTS_NEXUS_SERVICE).toBe('payments');
  });
});
