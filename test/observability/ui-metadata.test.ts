// Issue #27 §5: what the Temporal Web UI shows for a flow, without opening payloads. A card payment
// started through the starter carries a static summary and details; each activity carries its summary
// in history; the flow's current details follow its status; and none of it holds the PAN, the
// e-mail or the payer's name. The tables: every registered activity has a summary; amounts are
// written from integer lowest units exactly.
import { createHmac, randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { loadConfig } from '../../src/config/config';
import { createLogger } from '../../src/logging/logger';
import { SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import {
  ACTIVITY_SUMMARIES,
  activitySummary,
  childStartMetadata,
  currentDetailsFor,
  flowStartMetadata,
  formatMoney,
} from '../../src/shared/flow-summary';
import {
  getCardPaymentState,
  startCardPayment,
  startCardPaymentForStep,
  submitOtp,
  submitPin,
} from '../../src/starters/card-payment';
import { startCheckout } from '../../src/starters/checkout';
import { startUssdPayment } from '../../src/starters/ussd-payment';
import { virtualAccountCreditWorkflowId } from '../../src/shared/virtual-account-credit';
import { vaCreditBody, vaSignedValues } from '../support/webhook-receiver';
import { waitForState } from '../../src/starters/payment-common';
import { eventually } from '../support/polling';
import { METRICS_INTERCEPTOR_PATH } from '../../src/workers/worker';
import { testConfig, useServices, workflowBundle } from '../support/stack';

jest.setTimeout(120_000);

describe('the tables', () => {
  it('writes integer lowest units exactly, with the currency, and refuses a non-integer', () => {
    expect(formatMoney(100_000, 'NGN')).toBe('NGN 1,000.00');
    expect(formatMoney(5, 'NGN')).toBe('NGN 0.05');
    expect(formatMoney(0, 'USD')).toBe('USD 0.00');
    expect(formatMoney(123_456_789_01, 'NGN')).toBe('NGN 123,456,789.01');
    expect(formatMoney(Number.MAX_SAFE_INTEGER, 'NGN')).toBe('NGN 90,071,992,547,409.91');
    expect(formatMoney(-250, 'USD')).toBe('-USD 2.50');
    expect(formatMoney(1_500, 'JPY')).toBe('JPY 1,500');
    expect(formatMoney(1_234, 'KWD')).toBe('KWD 1.234');
    expect(() => formatMoney(10.5, 'NGN')).toThrow(/safe integer/);
    expect(() => formatMoney(2 ** 53, 'NGN')).toThrow(/safe integer/);
  });

  it('summarises a start from its search fields: title, money, reference; a kind it does not know by its type', () => {
    const m = flowStartMetadata('cardPaymentWorkflow', {
      flow: 'card',
      reference: 'ORDER-123',
      amount: 100_000,
      currency: 'NGN',
    });
    expect(m.staticSummary).toBe('Card payment NGN 1,000.00 · ORDER-123');
    expect(m.staticDetails).toContain('- amount: NGN 1,000.00 (100000 in the lowest unit)');
    expect(m.staticDetails).toContain('`cardPaymentWorkflow`');
    expect(flowStartMetadata('smsSendWorkflow', { flow: 'sms-send', reference: 'b1' }).staticSummary).toBe(
      'SMS send · b1',
    );
    expect(flowStartMetadata('someNewWorkflow', {}).staticSummary).toBe('someNewWorkflow');
  });

  it('names every activity the worker registers, and nothing else', () => {
    const registered = Object.keys(
      createActivities({
        api: {} as never,
        logger: createLogger({}),
        config: loadConfig({}),
        claimCheck: {} as never,
      }),
    ).sort();
    expect(Object.keys(ACTIVITY_SUMMARIES).sort()).toEqual(registered);
    expect(activitySummary('authorizeCard', ['ref', 'pin', 'cc_handle'])).toBe('send PIN (B2)');
    expect(activitySummary('authorizeCard', ['ref', 'otp', 'cc_handle'])).toBe('send OTP (B2)');
    expect(activitySummary('notAnActivity', [])).toBeUndefined();
  });

  it("summarises a child from its type, its input's amount and currency only, and its workflow id", () => {
    const m = childStartMetadata('tokenChargeWorkflow', 'payment-plan-1-c3', [
      { amount: 150_000, currency: 'NGN', tokenId: 'tok_secret', email: 'ada@example.com' },
    ]);
    expect(m.staticSummary).toBe('Card token charge NGN 1,500.00 · payment-plan-1-c3');
    expect(JSON.stringify(m)).not.toMatch(/tok_secret|ada@example\.com/);
    expect(childStartMetadata('x', 'id-1', [{ amount: 1.5, currency: 'NGN' }]).staticSummary).toBe('x · id-1');
    expect(childStartMetadata('x', 'id-1', ['not an object']).staticSummary).toBe('x · id-1');
  });

  it('says the status in words, since when, when its timer fires, or when it ended', () => {
    const at = Date.UTC(2026, 10, 26, 10, 2, 30);
    expect(currentDetailsFor('awaiting_otp', at)).toBe('waiting for the OTP since 10:02 UTC');
    expect(currentDetailsFor('outcome_unknown', at, at + 5 * 60_000)).toBe(
      'parked: outcome unknown since 10:02 UTC; its timer fires at 10:07 UTC',
    );
    expect(currentDetailsFor('success', at)).toBe('ended: succeeded at 10:02 UTC');
    expect(currentDetailsFor('some_new_status', at)).toBe('some new status since 10:02 UTC');
  });
});

describe('a card payment started through the starter', () => {
  const config = testConfig();
  const env = useServices(config);
  const codec = new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId);
  const CARD = TEST_CARDS.pinThenOtp;
  const PERSONAL = [CARD, CARD.replace(/(\d{4})(?=\d)/g, '$1 '), 'Ada Obi', 'ada@example.com'];

  /** The activity summaries in the flow's history, decoded through the codec (as the Web UI does). */
  async function activitySummaries(handle: WorkflowHandle): Promise<string[]> {
    const history = await handle.fetchHistory();
    const scheduled = (history.events ?? []).filter(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    );
    const summaries: string[] = [];
    for (const e of scheduled) {
      const payload = e.userMetadata?.summary;
      if (!payload) continue;
      const [decoded] = await codec.decode([payload as never]);
      summaries.push(JSON.parse(Buffer.from(decoded.data!).toString('utf8')) as string);
    }
    return summaries;
  }

  const metadata = (handle: WorkflowHandle) => handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');

  it('shows its summary, details, activity summaries and current details, with no card or personal data', async () => {
    const ref = `ui-meta-${randomUUID()}`;
    const handle = await startCardPayment(env.services.starters, {
      transactionRef: ref,
      amount: 900_000,
      currency: 'NGN',
      card: { number: CARD, cvv: '123', expiryMonth: '12', expiryYear: '29' },
      customer: { name: 'Ada Obi', email: 'ada@example.com' },
    });
    const described = await handle.describe();
    expect(await described.staticSummary()).toBe(`Card payment NGN 9,000.00 · ${ref}`);
    const details = await described.staticDetails();
    expect(details).toContain(`reference: \`${ref}\``);

    const pinWait = await waitForState(
      () => getCardPaymentState(env.services.starters, ref),
      (s) => s.status === 'awaiting_pin',
    );
    expect(pinWait.status).toBe('awaiting_pin');
    const waitingForPin = await eventually(
      () => metadata(handle),
      (m) => m.currentDetails.startsWith('waiting for the PIN since '),
      { timeoutMs: 15_000, intervalMs: 200, returnLastOnTimeout: true },
    );
    expect(waitingForPin.currentDetails).toMatch(
      /^waiting for the PIN since \d\d:\d\d UTC; its timer fires at \d\d:\d\d UTC$/,
    );

    await submitPin(env.services.starters, ref, SANDBOX_PIN);
    const waitingForOtp = await eventually(
      () => metadata(handle),
      (m) => m.currentDetails.startsWith('waiting for the OTP since '),
      { timeoutMs: 15_000, intervalMs: 200, returnLastOnTimeout: true },
    );
    expect(waitingForOtp.currentDetails).toMatch(/^waiting for the OTP since \d\d:\d\d UTC/);

    const summaries = await activitySummaries(handle);
    expect(summaries).toEqual(expect.arrayContaining(['charge card (B1)', 'send PIN (B2)']));
    // Every activity the flow scheduled has one.
    const scheduled = (await handle.fetchHistory()).events!.filter(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
    );
    expect(summaries).toHaveLength(scheduled.length);

    const shown = [
      await described.staticSummary(),
      details,
      ...summaries,
      waitingForPin.currentDetails,
      waitingForOtp.currentDetails,
    ].join('\n');
    for (const secret of PERSONAL) expect(shown).not.toContain(secret);
    // The end: said with the time it ended (a closed flow's query is answered by replaying it).
    await submitOtp(env.services.starters, ref, SANDBOX_OTP);
    expect(await handle.result()).toMatchObject({ status: 'success' });
    const ended = await metadata(handle);
    expect(ended.currentDetails).toMatch(/^ended: succeeded at \d\d:\d\d UTC$/);
    expect(await activitySummaries(handle)).toEqual(expect.arrayContaining(['send OTP (B2)']));
  });
});

describe('the update-with-start starters and the receiver', () => {
  const config = testConfig();
  const env = useServices(config);

  it('give card (first step), USSD and checkout flows their summary too', async () => {
    const [card, ussd, checkout] = [`uws-card-${randomUUID()}`, `uws-ussd-${randomUUID()}`, `uws-co-${randomUUID()}`];
    const customer = { name: 'Ada Obi', email: 'ada@example.com' };
    const handles = [
      (
        await startCardPaymentForStep(env.services.starters, {
          transactionRef: card,
          amount: 100_000,
          currency: 'NGN',
          card: { number: TEST_CARDS.pinThenOtp, cvv: '123', expiryMonth: '12', expiryYear: '29' },
          customer,
        })
      ).handle,
      (
        await startUssdPayment(env.services.starters, {
          transactionRef: ussd,
          amount: 150_000,
          currency: 'NGN',
          bankCode: '058',
          customer,
        })
      ).handle,
      (
        await startCheckout(env.services.starters, {
          transactionRef: checkout,
          amount: 120_000,
          currency: 'NGN',
          email: 'ada@example.com',
        })
      ).handle,
    ];
    const summaries = await Promise.all(handles.map(async (h) => (await h.describe()).staticSummary()));
    expect(summaries).toEqual([
      `Card payment NGN 1,000.00 · ${card}`,
      `USSD payment NGN 1,500.00 · ${ussd}`,
      `Hosted checkout NGN 1,200.00 · ${checkout}`,
    ]);
    await Promise.all(handles.map((h) => h.terminate('ui-metadata test done').catch(() => undefined)));
  });

  it("gives the receiver's virtual-account credit its summary (no amount: the notification's is a decimal string)", async () => {
    const ref = `uws-va-${randomUUID()}`;
    const body = vaCreditBody(ref, { version: 'v2' });
    const signature = createHmac('sha512', config.payments.secretKey).update(vaSignedValues(body)).digest('hex');
    const res = await fetch(`${env.services.webhookUrl}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': signature },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const handle = env.services.client.workflow.getHandle(virtualAccountCreditWorkflowId(ref));
    const described = await handle.describe();
    expect(await described.staticSummary()).toBe(`Virtual-account credit · ${ref}`);
    expect(await described.staticDetails()).not.toMatch(/4567891234|CUST-1|Ada/);
    await handle.terminate('ui-metadata test done').catch(() => undefined);
  });
});

describe('a child flow', () => {
  it('gets a summary when its parent gives none, and keeps the one its parent gives', async () => {
    const config = testConfig();
    const taskQueue = `ui-metadata-children-${randomUUID()}`;
    const bundle = await workflowBundle(require.resolve('./fixtures/child-workflows'), [METRICS_INTERCEPTOR_PATH]);
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const clientConnection = await Connection.connect({ address: config.temporal.address });
    const client = new Client({ connection: clientConnection });
    try {
      const worker = await Worker.create({ connection, taskQueue, workflowBundle: bundle });
      await worker.runUntil(async () => {
        const [plain, named] = [`child-${randomUUID()}`, `child-${randomUUID()}`];
        const run = (childId: string, own?: string) =>
          client.workflow.execute('uiMetadataParent', {
            taskQueue,
            workflowId: `parent-${randomUUID()}`,
            args: own ? [childId, own] : [childId],
          });
        expect(await run(plain)).toBe(150_000);
        expect(await run(named, 'the parent says so')).toBe(150_000);
        const child = await client.workflow.getHandle(plain).describe();
        expect(await child.staticSummary()).toBe(`uiMetadataChild NGN 1,500.00 · ${plain}`);
        expect(await child.staticDetails()).not.toContain('4111111111111111');
        expect(await (await client.workflow.getHandle(named).describe()).staticSummary()).toBe('the parent says so');
      });
    } finally {
      await clientConnection.close();
      await connection.close();
    }
  });
});
