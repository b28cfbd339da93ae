// The `payments` Nexus service on the suite's dev server: a second namespace `merchant` runs its own
// worker with a caller workflow (test/nexus/fixtures/merchant-workflows.ts) that calls the operations
// through a Nexus endpoint targeting our payments worker's task queue, against the sandbox over HTTP.
// It gets each flow's final outcome; a cancelled operation is the flow's own cancel request; bad input
// is refused by name; a card goes through sealed, so no card number is in either namespace's history.
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createDataConverter } from '../../src/codec/data-converter';
import { MANDATE_OTP, SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';
import { sealCardPaymentForNexus } from '../../src/nexus/payments-handler';
import { PAYMENTS_NEXUS_SERVICE } from '../../src/nexus/payments-service';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { PaymentFlow } from '../../src/shared/search-attributes';
import { posRemoteStateQuery, posRemoteWorkflowId, type PosRemoteResult } from '../../src/shared/pos-remote';
import { getCardPaymentState, submitOtp } from '../../src/starters/card-payment';
import { getCheckoutState } from '../../src/starters/checkout';
import { resolveParkedFlow } from '../../src/starters/ops';
import { getMandateState, startMandate, submitMandateOtp } from '../../src/starters/mandate';
import { cardPayment, electricityVend, newMandateRequest } from '../support/flow-inputs';
import { historyTexts } from '../support/history';
import { eventually } from '../support/polling';
import { payCheckoutByCard } from '../support/sandbox-admin';
import { devServerAddress, testConfig, useServices, workflowBundle } from '../support/stack';
import { shortRef } from '../pos/sandbox';
import {
  cancelPaymentSignal,
  type CallerAnswer,
  type merchantCancelsWorkflow,
  type merchantPaysWorkflow,
  type OpName,
} from './fixtures/merchant-workflows';

const MERCHANT_NAMESPACE = 'merchant';
const COMPLETE_AFTER_MS = 60_000;
const config = testConfig();
const env = useServices(config, undefined, { sandbox: { posRemoteCompleteAfterMs: COMPLETE_AFTER_MS } });

const fast = { pollIntervalMs: 200, heartbeatTimeout: '3s' } as const;

let connection: Connection;
let merchant: Client;
let merchantWorker: Worker;
let merchantRunning: Promise<void>;
let merchantWorkerConnection: NativeConnection;
const merchantTaskQueue = `merchant-${randomUUID()}`;
const endpoint = `payments-${randomUUID()}`;
let endpointId: string | undefined;

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string) =>
  eventually(read, ok, { timeoutMs: 30_000, intervalMs: 100, description: what, ignoreErrors: true });

beforeAll(async () => {
  connection = await Connection.connect({ address: devServerAddress() });
  await connection.workflowService
    .registerNamespace({ namespace: MERCHANT_NAMESPACE, workflowExecutionRetentionPeriod: msToTs('1 day') })
    .catch((err: { code?: number }) => {
      if (err.code !== 6) throw err; // ALREADY_EXISTS: another file's run registered it
    });
  const created = await connection.operatorService.createNexusEndpoint({
    spec: {
      name: endpoint,
      target: { worker: { namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue } },
    },
  });
  endpointId = created.endpoint?.id ?? undefined;
  merchant = new Client({
    connection,
    namespace: MERCHANT_NAMESPACE,
    dataConverter: createDataConverter(config.encryption),
  });
  merchantWorkerConnection = await NativeConnection.connect({ address: devServerAddress() });
  const bundle = await workflowBundle(require.resolve('./fixtures/merchant-workflows'));
  // A namespace just registered reaches the server's namespace cache within seconds.
  merchantWorker = await eventually(
    () =>
      Worker.create({
        connection: merchantWorkerConnection,
        namespace: MERCHANT_NAMESPACE,
        taskQueue: merchantTaskQueue,
        workflowBundle: bundle,
        dataConverter: createDataConverter(config.encryption),
      }),
    { timeoutMs: 30_000, intervalMs: 500, ignoreErrors: true, description: 'a worker in the merchant namespace' },
  );
  merchantRunning = merchantWorker.run();
}, 90_000);

afterAll(async () => {
  merchantWorker?.shutdown();
  await merchantRunning?.catch(() => undefined);
  await merchantWorkerConnection?.close();
  if (endpointId) {
    const got = await connection.operatorService.getNexusEndpoint({ id: endpointId });
    await connection.operatorService.deleteNexusEndpoint({ id: endpointId, version: got.endpoint?.version });
  }
  await connection?.close();
});

/** Starts the merchant's caller workflow for one operation. */
const call = (op: OpName, input: unknown): Promise<WorkflowHandle<typeof merchantPaysWorkflow>> =>
  merchant.workflow.start<typeof merchantPaysWorkflow>('merchantPaysWorkflow', {
    taskQueue: merchantTaskQueue,
    workflowId: `merchant-${op}-${randomUUID()}`,
    args: [endpoint, op, input],
  });

const payments = () => env.services.client;

describe('the payments Nexus service, called from the merchant namespace', () => {
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

  it('mandate debit: a debit of an approved VARIABLE mandate through the Update; the same key again is the same debit', async () => {
    const request = newMandateRequest();
    const { mandateRef } = request;
    await startMandate(env.services.starters, request);
    await until(
      () => getMandateState(env.services.starters, mandateRef),
      (s) => s.status === 'awaiting_otp',
      'the mandate awaiting its OTP',
    );
    expect((await submitMandateOtp(env.services.starters, mandateRef, MANDATE_OTP)).status).toBe('approved');
    const debit = { mandateRef, amount: 500_000, idempotencyKey: `k-${randomUUID()}` };
    const first = await (await call('mandateDebit', debit)).result();
    expect(first.outcome).toMatchObject({ status: 'success', amount: 500_000 });
    const again = await (await call('mandateDebit', debit)).result();
    expect(again.outcome).toMatchObject({
      status: 'success',
      reference: (first.outcome as { reference: string }).reference,
    });
    const ledger = await env.admin.ledger({ reference: (first.outcome as { reference: string }).reference });
    expect(ledger).toHaveLength(1);
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
