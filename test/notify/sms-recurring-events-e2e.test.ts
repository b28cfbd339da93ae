// SMS sends and campaigns, and a recurring plan as a whole, tell the merchant their outcome, end
// to end (dev server, the project's worker, the sandbox over real HTTP, a real endpoint verifying
// each event's signature): one event per outcome with the right type, reference and stable id; a
// send parked for a person tells it first that it needs one, then its outcome; a plan tells its
// end (its charges tell theirs as payments). A flow without a URL of its own tells the deployment's
// endpoint (the worker's NOTIFY_URL, the receiver here); the starters know no NOTIFY_URL.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { CAMPAIGN_SEND_DELAY_MS } from '../../src/sandbox';
import { newNotifySecret } from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { recurringWorkflowId } from '../../src/shared/recurring';
import {
  smsCampaignStateQuery,
  smsCampaignWorkflowId,
  smsSendStateQuery,
  smsSendWorkflowId,
  type SmsCampaignInput,
  type SmsSendInput,
} from '../../src/shared/sms';
import { resolveParkedFlow } from '../../src/starters/ops';
import {
  cancelRecurring,
  firstPaymentCheckoutUrl,
  getRecurringState,
  startRecurring,
} from '../../src/starters/recurring';
import { createSmsTemplate, runSmsSend, startSmsCampaign, startSmsSend } from '../../src/starters/sms';
import { historyTexts } from '../support/history';
import { eventually } from '../support/polling';
import { payCheckoutByCard } from '../support/sandbox-admin';
import { testConfig, useServices } from '../support/stack';
import { useDeploymentEventReceiver } from './receiver';

const secret = newNotifySecret();
const config = testConfig({ NOTIFY_SECRET: secret });
const receiver = useDeploymentEventReceiver(secret, config);
const env = useServices(config);
afterEach(() => env.admin?.clearFaults());

const emitted = async (handle: WorkflowHandle): Promise<boolean> =>
  (await historyTexts(handle, config.encryption)).decoded.includes('emitMerchantEvent');

const send = (phones: string[], over: Partial<SmsSendInput> = {}): SmsSendInput => ({
  reference: `ev-sms-${randomUUID().slice(0, 8)}`,
  sender_id: 'SHOP',
  messages: phones.map((p) => ({ phone_number: p, message: 'Your order has shipped' })),
  ...over,
});

describe('an SMS send tells the merchant its outcome', () => {
  it('sent, through a per-flow URL: one verified sms.batch.succeeded; its history holds the emission', async () => {
    const input = send(['2348031110001', '2348031110002'], { notify: { url: receiver.url } });
    const result = await runSmsSend(env.services.starters, input);
    expect(result.status).toBe('sent');
    const [event] = await receiver.delivered(input.reference);
    expect(event).toEqual({
      type: 'sms.batch.succeeded',
      id: merchantEventId(smsSendWorkflowId(input.reference), 'sms.batch.succeeded'),
      created_at: expect.any(String),
      data: {
        version: 1,
        flow: 'sms-send',
        reference: input.reference,
        status: 'sent',
        reason: result.message,
        sequence: 1,
        occurred_at: event.created_at,
      },
    });
    // No phone number in what the merchant gets.
    expect(JSON.stringify(event)).not.toContain('2348031110001');
    expect(await emitted(env.services.client.workflow.getHandle(smsSendWorkflowId(input.reference)))).toBe(true);
    expect(receiver.refused).toEqual([]);
  });

  it('a lost G1 answer parks it: sms.batch.needs_attention (1); resolved failed by an operator: sms.batch.succeeded partially_sent (2)', async () => {
    await env.admin.fault({ method: 'POST', path: '^/sms/send/instant$', kind: 'error5xx', count: 1 });
    const input = send(['2348032220001', '2348032220002', '2348032220003', '2348032220004'], {
      options: { batchSize: 2 },
    });
    const handle = await startSmsSend(env.services.starters, input);
    const [parked] = await receiver.delivered(input.reference);
    expect(parked).toMatchObject({
      type: 'sms.batch.needs_attention',
      id: merchantEventId(handle.workflowId, 'sms.batch.needs_attention'),
      data: { status: 'outcome_unknown', sequence: 1 },
    });
    expect((await handle.query(smsSendStateQuery)).status).toBe('outcome_unknown');
    await eventually(() =>
      resolveParkedFlow(env.services.starters, handle.workflowId, {
        outcome: 'failed',
        reason: 'the provider report shows no delivery (test)',
        operator: 'ops@example.com',
      }).then(
        () => true,
        () => false,
      ),
    );
    expect((await handle.result()).status).toBe('partially_sent');
    const events = await receiver.delivered(input.reference, 2);
    expect(events.map((e) => [e.type, e.data.status, e.data.sequence])).toEqual([
      ['sms.batch.needs_attention', 'outcome_unknown', 1],
      ['sms.batch.succeeded', 'partially_sent', 2],
    ]);
  });

  it("without a URL of its own: sms.batch.succeeded to the worker's NOTIFY_URL", async () => {
    const input = send(['2348033330001']);
    expect((await runSmsSend(env.services.starters, input)).status).toBe('sent');
    expect((await receiver.delivered(input.reference)).map((e) => e.type)).toEqual(['sms.batch.succeeded']);
  });
});

describe('an SMS campaign tells the merchant its outcome', () => {
  let templateId: string;
  beforeAll(async () => {
    const template = await createSmsTemplate(env.services.starters, {
      name: `Promo ${randomUUID().slice(0, 8)}`,
      description: 'events test',
      message: 'Hello from the shop',
    });
    templateId = template.uuid;
  });
  const start = (reference: string, options: SmsCampaignInput['options'] = {}) =>
    startSmsCampaign(env.services.starters, {
      reference,
      campaign: {
        name: `Ev ${randomUUID().slice(0, 8)}`,
        bucket_id: '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d10',
        sender_id: 'SHOP',
        is_scheduled: false,
        template_id: templateId,
      },
      options: { pollInterval: '100ms', maxPollInterval: '200ms', lostCreateSettle: '100ms', ...options },
    });

  it("followed to success, through the worker's NOTIFY_URL: one sms.campaign.succeeded", async () => {
    const reference = `ev-cmp-${randomUUID().slice(0, 8)}`;
    const h = await start(reference);
    await eventually(async () => (await h.query(smsCampaignStateQuery)).serviceStatus === 'pending', {
      timeoutMs: 20_000,
    });
    await env.admin.advanceClock(CAMPAIGN_SEND_DELAY_MS);
    expect((await h.result()).status).toBe('success');
    const [event] = await receiver.delivered(reference);
    expect(event).toMatchObject({
      type: 'sms.campaign.succeeded',
      id: merchantEventId(smsCampaignWorkflowId(reference), 'sms.campaign.succeeded'),
      data: { flow: 'sms-campaign', reference, status: 'success', sequence: 1 },
    });
  });

  it("G2's answer lost and nothing listed: sms.campaign.needs_attention (1); resolved rejected: sms.campaign.failed (2)", async () => {
    await env.admin.fault({ method: 'POST', path: '^/sms/campaign$', kind: 'drop-before-processing', count: 1 });
    const reference = `ev-cmq-${randomUUID().slice(0, 8)}`;
    const h = await start(reference, { lostCreateReads: 2 });
    const [parked] = await receiver.delivered(reference);
    expect(parked).toMatchObject({
      type: 'sms.campaign.needs_attention',
      id: merchantEventId(h.workflowId, 'sms.campaign.needs_attention'),
      data: { status: 'outcome_unknown', sequence: 1 },
    });
    await eventually(() =>
      resolveParkedFlow(env.services.starters, h.workflowId, {
        outcome: 'rejected',
        reason: 'not in the provider dashboard (test)',
        operator: 'ops@example.com',
      }).then(
        () => true,
        () => false,
      ),
    );
    expect((await h.result()).status).toBe('rejected');
    const events = await receiver.delivered(reference, 2);
    expect(events.map((e) => [e.type, e.data.status, e.data.sequence])).toEqual([
      ['sms.campaign.needs_attention', 'outcome_unknown', 1],
      ['sms.campaign.failed', 'rejected', 2],
    ]);
  });
});

const plan = (planRef: string) => ({
  planRef,
  amount: 150_000,
  currency: 'NGN' as const,
  email: 'ada@example.com',
  intervalMs: 1_000,
});

/**
 * A plan whose token was cancelled at the service behind its back, then cancelled: its own A5 is
 * refused, asked again 30 s later (the workflow's fixed pause) and refused again, and the plan parks.
 */
async function cancelledBehindItsBack(): Promise<{ planRef: string; handle: WorkflowHandle }> {
  const planRef = `ev-park-${randomUUID().slice(0, 8)}`;
  const handle = await startRecurring(env.services.starters, { ...plan(planRef), intervalMs: 3_600_000 });
  await payCheckoutByCard(await firstPaymentCheckoutUrl(env.services.starters, planRef));
  const { tokenId } = await eventually(
    () => getRecurringState(env.services.starters, planRef),
    (s) => s.status === 'active',
    { timeoutMs: 20_000 },
  );
  await env.services.api.tokens.cancel({ auth_code: [tokenId!] });
  await cancelRecurring(env.services.starters, planRef);
  return { planRef, handle };
}
// That 30 s pause is all waiting: the plan starts with the file, so the other cases run meanwhile
// (they share no reference, fault or path with it); its case below checks what it led to.
let refusedPlan: Promise<{ planRef: string; handle: WorkflowHandle }>;
beforeAll(() => {
  refusedPlan = cancelledBehindItsBack();
  refusedPlan.catch(() => undefined); // awaited (and reported) by its case
});

describe('a recurring plan tells the merchant its end, and each charge its outcome', () => {
  it('two cycles done: payment.succeeded for each charge, then one recurring.completed with the amount', async () => {
    const planRef = `ev-plan-${randomUUID().slice(0, 8)}`;
    const handle = await startRecurring(env.services.starters, { ...plan(planRef), maxCycles: 2 });
    await payCheckoutByCard(await firstPaymentCheckoutUrl(env.services.starters, planRef));
    expect((await handle.result()).status).toBe('completed');
    const [end] = await receiver.delivered(planRef);
    expect(end).toEqual({
      type: 'recurring.completed',
      id: merchantEventId(recurringWorkflowId(planRef), 'recurring.completed'),
      created_at: expect.any(String),
      data: {
        version: 1,
        flow: 'recurring-plan',
        reference: planRef,
        status: 'completed',
        reason: 'all 2 cycles done',
        amount: 150_000,
        currency: 'NGN',
        sequence: 1,
        occurred_at: end.created_at,
      },
    });
    for (const n of [1, 2]) {
      const [charge] = await receiver.delivered(`${planRef}-C${n}`);
      expect(charge).toMatchObject({
        type: 'payment.succeeded',
        id: merchantEventId(paymentWorkflowId(`${planRef}-C${n}`), 'payment.succeeded'),
        data: { flow: 'recurring', amount: 150_000 },
      });
    }
    expect(receiver.eventsOf(planRef)).toHaveLength(1);
  }, 60_000);

  it('A5 refused twice (the token was cancelled elsewhere): recurring.needs_attention (1); resolved cancelled: recurring.cancelled (2)', async () => {
    const { planRef, handle } = await refusedPlan;
    const [parked] = await receiver.delivered(planRef);
    expect(parked).toMatchObject({
      type: 'recurring.needs_attention',
      id: merchantEventId(recurringWorkflowId(planRef), 'recurring.needs_attention'),
      data: { flow: 'recurring-plan', status: 'outcome_unknown', sequence: 1, amount: 150_000 },
    });
    await resolveParkedFlow(env.services.starters, handle.workflowId, {
      outcome: 'cancelled',
      reason: 'the token is inactive in the dashboard (test)',
      operator: 'ops@example.com',
    });
    expect((await handle.result()).status).toBe('cancelled');
    const events = await receiver.delivered(planRef, 2);
    expect(events.map((e) => [e.type, e.data.sequence])).toEqual([
      ['recurring.needs_attention', 1],
      ['recurring.cancelled', 2],
    ]);
  }, 90_000);

  it("without a URL of its own: recurring.completed to the worker's NOTIFY_URL, behind the patch", async () => {
    const planRef = `ev-none-${randomUUID().slice(0, 8)}`;
    const handle = await startRecurring(env.services.starters, { ...plan(planRef), maxCycles: 1 });
    await payCheckoutByCard(await firstPaymentCheckoutUrl(env.services.starters, planRef));
    expect((await handle.result()).status).toBe('completed');
    expect((await receiver.delivered(planRef)).map((e) => e.type)).toEqual(['recurring.completed']);
    const { decoded } = await historyTexts(handle, config.encryption);
    expect(decoded).toContain('merchant-events-deployment-target');
  }, 60_000);
});
