// A payment's final outcome reaches the merchant's endpoint as a signed event, end to end: the
// target is the flow's own URL, else the deployment's (the worker's NOTIFY_URL, which the starters
// never see), the flow emits once, the delivery workflow signs with the worker's NOTIFY_SECRET, and
// `notify listen`'s listener verifies it. (A deployment without NOTIFY_URL: test/notify/delivery.test.ts
// and emission-cost.test.ts.)
import { randomUUID } from 'node:crypto';
import { newNotifySecret } from '../../src/notify';
import { startCardPayment } from '../../src/starters/card-payment';
import { merchantEventId } from '../../src/shared/merchant-event';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { PaymentFlow, PaymentReference, PaymentStatus } from '../../src/shared/search-attributes';
import { TEST_CARDS } from '../../src/sandbox';
import { cardPayment, electricityVend, payCardWithOtp } from '../support/flow-inputs';
import { runVend } from '../../src/starters/vending';
import { vendWorkflowId } from '../../src/shared/vending';
import { historyTexts } from '../support/history';
import { recordHistory } from '../support/replay';
import { eventually } from '../support/polling';
import { testConfig, useServices } from '../support/stack';
import { useDeploymentEventReceiver } from './receiver';

const secret = newNotifySecret();
const config = testConfig({ NOTIFY_SECRET: secret });
const listener = useDeploymentEventReceiver(secret, config);
const env = useServices(config);

const { refused, delivered } = listener;

describe('a card payment tells the merchant its outcome', () => {
  it('a success through a per-flow URL: one verified payment.succeeded, its id stable, its delivery marked delivered', async () => {
    const ref = `ev-card-${randomUUID()}`;
    const input = { ...cardPayment(ref, TEST_CARDS.otpOnly, 500_000), notify: { url: listener.url } };
    const state = await payCardWithOtp(env.services.starters, input);
    expect(state.status).toBe('success');

    const [event] = await delivered(ref);
    expect(event).toEqual({
      type: 'payment.succeeded',
      id: merchantEventId(paymentWorkflowId(ref), 'payment.succeeded'),
      created_at: expect.any(String),
      data: {
        version: 1,
        flow: 'card',
        reference: ref,
        status: 'success',
        amount: 500_000,
        currency: 'NGN',
        sequence: 1,
        occurred_at: event.created_at,
      },
    });
    // No card data or personal data in what the merchant gets.
    const text = JSON.stringify(event);
    for (const secretish of [TEST_CARDS.otpOnly, TEST_CARDS.otpOnly.slice(-4), 'Ada', 'ada@example.com'])
      expect(text).not.toContain(secretish);

    const delivery = env.services.client.workflow.getHandle(event.id);
    await eventually(
      async () => (await delivery.describe()).typedSearchAttributes.get(PaymentStatus),
      (s) => s === 'delivered',
      { timeoutMs: 30_000 },
    );
    const d = await delivery.describe();
    // Replay fixtures (test/replay/coverage.test.ts): the delivery, and a card payment that emitted.
    await recordHistory(delivery, 'merchant-event-delivered');
    await recordHistory(env.services.client.workflow.getHandle(paymentWorkflowId(ref)), 'card-otp-only-notify');
    expect(d.typedSearchAttributes.get(PaymentFlow)).toBe('merchant-event');
    expect(d.typedSearchAttributes.get(PaymentReference)).toBe(ref);
    expect(refused).toEqual([]);
    // The flow's own history holds the emission: one local activity (its marker names it; a local
    // activity's input, the event, is not recorded).
    const { decoded } = await historyTexts(
      env.services.client.workflow.getHandle(paymentWorkflowId(ref)),
      config.encryption,
    );
    expect(decoded).toContain('emitMerchantEvent');
  });

  it("a decline through the worker's NOTIFY_URL (no per-flow URL, none in the starters): payment.failed with the service's reason", async () => {
    const ref = `ev-decl-${randomUUID()}`;
    const handle = await startCardPayment(env.services.starters, cardPayment(ref, TEST_CARDS.declined, 100_000));
    expect((await handle.result()).status).toBe('failed');
    const [event] = await delivered(ref);
    expect(event.type).toBe('payment.failed');
    expect(event.data).toMatchObject({ flow: 'card', status: 'failed', amount: 100_000, currency: 'NGN', sequence: 1 });
    expect(event.data.reason).toMatch(/declined/i);
  });

  it('refuses a per-flow URL that is not http(s), naming the field', async () => {
    const ref = `ev-bad-${randomUUID()}`;
    await expect(
      startCardPayment(env.services.starters, {
        ...cardPayment(ref, TEST_CARDS.declined, 100_000),
        notify: { url: 'ftp://merchant.example/events' },
      }),
    ).rejects.toThrow('notify.url must be an http(s) URL');
  });
});

describe('a vend tells the merchant its outcome', () => {
  it('vended: one verified vend.succeeded, its amount in kobo', async () => {
    const ref = `ev-vend-${randomUUID()}`;
    const result = await runVend(env.services.starters, { ...electricityVend(ref), notify: { url: listener.url } });
    expect(result.status).toBe('vended');
    const [event] = await delivered(ref);
    expect(event.type).toBe('vend.succeeded');
    expect(event.id).toBe(merchantEventId(vendWorkflowId(ref), 'vend.succeeded'));
    expect(event.data).toMatchObject({
      flow: 'vend',
      reference: ref,
      status: 'vended',
      amount: electricityVend(ref).amount * 100,
      currency: 'NGN',
      sequence: 1,
    });
  });

  it('rejected below the minimum: vend.failed, nothing vended', async () => {
    const ref = `ev-vmin-${randomUUID()}`;
    const result = await runVend(env.services.starters, {
      ...electricityVend(ref, { amount: 1 }),
      notify: { url: listener.url },
    });
    expect(result.status).toBe('rejected');
    const [event] = await delivered(ref);
    expect(event.type).toBe('vend.failed');
    expect(event.data.reason).toMatch(/minimum_vend/);
  });
});

describe('a payment parked for a person tells the merchant, then tells it the outcome', () => {
  afterEach(async () => {
    await env.admin.clearFaults();
    await env.admin.clearWebhookFaults();
  });

  it('verify cannot answer: payment.needs_attention (sequence 1), then payment.succeeded (sequence 2) once verify settles it', async () => {
    const ref = `ev-park-${randomUUID()}`;
    await env.admin.webhookFault('hold', 1);
    await env.admin.fault({ path: '/transaction/verify', kind: 'error5xx', status: 503 });
    const input = {
      ...cardPayment(ref, TEST_CARDS.otpOnly, 300_000),
      webhookGraceMs: 500,
      notify: { url: listener.url },
    };
    const paid = payCardWithOtp(env.services.starters, input);
    const [parked] = await delivered(ref, 1);
    expect(parked.type).toBe('payment.needs_attention');
    expect(parked.data).toMatchObject({ status: 'outcome_unknown', sequence: 1, amount: 300_000, currency: 'NGN' });
    expect(parked.id).toBe(merchantEventId(paymentWorkflowId(ref), 'payment.needs_attention'));

    await env.admin.clearFaults();
    expect((await paid).status).toBe('success');
    const events = await delivered(ref, 2);
    expect(events.map((e) => [e.type, e.data.sequence])).toEqual([
      ['payment.needs_attention', 1],
      ['payment.succeeded', 2],
    ]);
    expect(events[1].data.reason).toMatch(/settled by verify/);
  }, 120_000);
});
