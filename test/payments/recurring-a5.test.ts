// A recurring plan's cancel never says `cancelled` while the token may still be live (issue #44
// §2, patch `recurring-a5-unknown-parks`): any 400 from A5 is its refusal (the service's message
// kept); A5 failing for about a quarter of an hour parks the plan as outcome_unknown (ops list,
// recurring.needs_attention) and A5 is asked again in the background until it cancels the token
// or an operator resolves the plan. On the time-skipping server, with scripted activities.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { checkoutStateQuery } from '../../src/shared/checkout';
import { resolveOutcomeUpdate } from '../../src/shared/outcome';
import { paymentWebhookSignal, paymentWorkflowId } from '../../src/shared/payment-webhook';
import type { TransactionLookup } from '../../src/shared/payment-common';
import {
  cancelRecurringSignal,
  cycleReference,
  recurringStateQuery,
  recurringWorkflowId,
  type RecurringState,
  type TokenCancelAnswer,
} from '../../src/shared/recurring';
import type { recurringChargeWorkflow } from '../../src/workflows/recurring';
import { ATTENTION_QUERIES } from '../../src/starters/ops';
import { chargeSuccessfulEvent } from '../support/flow-inputs';
import { eventually } from '../support/polling';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { activitiesByWorkflow } from '../support/activities-by-workflow';
import { recordHistory } from '../support/replay';

interface Activities {
  initiateCheckout(input: { transactionRef: string }): Promise<{ checkoutUrl: string }>;
  lookupTransaction(ref: string): Promise<TransactionLookup>;
  cancelTokenAnswered(tokenId: string): Promise<TokenCancelAnswer>;
  emitMerchantEvent(emission: { event: { type: string; data: { status: string } } }): Promise<string>;
}

const byFlow = activitiesByWorkflow<Activities>([
  'initiateCheckout',
  'lookupTransaction',
  'cancelTokenAnswered',
  'emitMerchantEvent',
]);
const TASK_QUEUE = `recurring-a5-${randomUUID()}`;
const env = useTimeSkippingEnv({
  quietRuntime: true,
  worker: { taskQueue: TASK_QUEUE, activities: () => byFlow.activities },
});

const TOKEN = 'AUTH_000000000044';
const QUARTER_HOUR_PLUS = 20 * 60_000;

/** The service as a plan's cancel sees it: A5 answers by `a5` (ok, a 400 with a message, or a 5xx). */
function fakeService() {
  const paid = new Set<string>();
  const a5: { answer: 'ok' | { refuse: string } | 'down'; asked: number } = { answer: 'ok', asked: 0 };
  const events: string[] = [];
  const activities: Activities = {
    async initiateCheckout(input) {
      return { checkoutUrl: `https://pay.example/checkout/${input.transactionRef}` };
    },
    async lookupTransaction(ref) {
      return paid.has(ref) ? { found: true, status: 'Success', amount: 90_000, currency: 'NGN' } : { found: false };
    },
    async cancelTokenAnswered() {
      a5.asked += 1;
      if (a5.answer === 'ok') return { cancelled: true };
      if (a5.answer === 'down')
        throw ApplicationFailure.create({ type: 'ServerError', message: 'cancel token: HTTP 503 Service Unavailable' });
      return { cancelled: false, refusal: a5.answer.refuse };
    },
    async emitMerchantEvent(emission) {
      events.push(`${emission.event.type} ${emission.event.data.status}`);
      return 'started';
    },
  };
  return { activities, paid, a5, events };
}
type FakeService = ReturnType<typeof fakeService>;

const until = <S>(read: () => Promise<S>, ok: (s: S) => boolean): Promise<S> =>
  eventually(read, ok, { attempts: 200, pause: () => env.sleep(500), description: 'the state', ignoreErrors: true });

/** A plan whose first payment was paid (token TOKEN), active, then asked to cancel. */
async function cancelledActivePlan(service: FakeService) {
  const planRef = byFlow.script(`tsa5u-${randomUUID().slice(0, 8)}`, service.activities);
  const handle = await env.client.workflow.start<typeof recurringChargeWorkflow>('recurringChargeWorkflow', {
    workflowId: recurringWorkflowId(planRef),
    taskQueue: TASK_QUEUE,
    args: [
      {
        planRef,
        amount: 90_000,
        currency: 'NGN',
        email: 'ada@example.com',
        intervalMs: 24 * 3600_000,
        webhookGraceMs: 1_000,
        notify: { url: 'https://merchant.example/events' },
      },
    ],
  });
  const firstRef = cycleReference(planRef, 1);
  const first = env.client.workflow.getHandle(paymentWorkflowId(firstRef));
  await until(
    () => first.query(checkoutStateQuery),
    (s) => s.status === 'open',
  );
  service.paid.add(firstRef);
  await first.signal(
    paymentWebhookSignal,
    chargeSuccessfulEvent(firstRef, { amount: 90_000, isRecurring: true, tokenId: TOKEN }),
  );
  await until(
    () => handle.query(recurringStateQuery),
    (s) => s.status === 'active',
  );
  await handle.signal(cancelRecurringSignal);
  return handle;
}

/** Parked: outcome_unknown in the state and in PaymentStatus, which `ops list outcome-unknown` queries. */
async function expectParked(handle: Awaited<ReturnType<typeof cancelledActivePlan>>): Promise<RecurringState> {
  const parked = await until(
    () => handle.query(recurringStateQuery),
    (s) => s.status === 'outcome_unknown',
  );
  const attrs = (await handle.describe()).searchAttributes;
  expect(attrs.PaymentStatus).toEqual(['outcome_unknown']);
  expect(attrs.PaymentFlow).toEqual(['recurring']);
  // The time-skipping server has no list API: `ops list outcome-unknown` is this attribute's query.
  expect(ATTENTION_QUERIES['outcome-unknown']).toMatch(/^PaymentStatus IN \(.*'outcome_unknown'/);
  return parked;
}

it('a 400 with another message is the refusal: asked again, then parked with the service’s message, never cancelled', async () => {
  const service = fakeService();
  service.a5.answer = { refuse: 'Token not found for this merchant' };
  const handle = await cancelledActivePlan(service);
  await env.sleep(60_000); // past the pause before A5 is asked again
  const parked = await expectParked(handle);
  expect(parked.reason).toContain("the cancel (A5) was refused ('Token not found for this merchant')");
  expect(service.a5.asked).toBe(2); // a refusal is never retried by the activity's policy
  await handle.executeUpdate(resolveOutcomeUpdate, {
    args: [{ outcome: 'failed', reason: 'token still live in the dashboard', operator: 'ops@example.com' }],
  });
  expect(await handle.result()).toMatchObject({ status: 'failed', resolution: { outcome: 'failed' } });
});

it('5xx for 20 minutes: parked outcome_unknown with recurring.needs_attention, A5 asked in the background, cancelled once it answers', async () => {
  const service = fakeService();
  service.a5.answer = 'down';
  const handle = await cancelledActivePlan(service);
  await env.sleep(10 * 60_000); // A5 still retried by its policy: neither parked nor cancelled yet
  expect((await handle.query(recurringStateQuery)).status).toBe('active');
  await env.sleep(QUARTER_HOUR_PLUS - 10 * 60_000); // A5's retries (about a quarter of an hour) run out
  const parked = await expectParked(handle);
  expect(parked.reason).toContain('the cancel (A5) failed for about a quarter of an hour');
  expect(parked.reason).toContain('HTTP 503');
  expect(service.events).toContain('recurring.needs_attention outcome_unknown');
  expect(service.events).not.toContain('recurring.cancelled cancelled');
  const askedWhenParked = service.a5.asked;
  await env.sleep(5 * 60_000); // background rounds, still failing
  expect(service.a5.asked).toBeGreaterThan(askedWhenParked);
  expect((await handle.query(recurringStateQuery)).status).toBe('outcome_unknown');
  service.a5.answer = 'ok';
  expect(await handle.result()).toMatchObject({
    status: 'cancelled',
    reason: 'token cancelled (A5, asked again in the background after it had failed)',
  });
  expect(service.events.filter((e) => e.startsWith('recurring.'))).toEqual([
    'recurring.needs_attention outcome_unknown',
    'recurring.cancelled cancelled',
  ]);
  // The patched path's history, replayed by test/replay (kept when the patch is deprecated).
  await recordHistory(handle, 'recurring-plan-a5-unknown-parks');
});

it('5xx until an operator resolves it: cancelled by hand ends the plan, and A5 is asked no more', async () => {
  const service = fakeService();
  service.a5.answer = 'down';
  const handle = await cancelledActivePlan(service);
  await env.sleep(QUARTER_HOUR_PLUS);
  await expectParked(handle);
  await expect(
    handle.executeUpdate(resolveOutcomeUpdate, { args: [{ outcome: 'success', reason: 'x', operator: 'o' }] }),
  ).rejects.toHaveProperty('cause.message', 'outcome must be one of cancelled, failed');
  await handle.executeUpdate(resolveOutcomeUpdate, {
    args: [{ outcome: 'cancelled', reason: 'cancelled in the dashboard', operator: 'ops@example.com' }],
  });
  const final = await handle.result();
  expect(final).toMatchObject({
    status: 'cancelled',
    resolution: { outcome: 'cancelled', operator: 'ops@example.com' },
    reason: 'resolved by ops@example.com: cancelled in the dashboard (the cancel (A5) had failed)',
  });
  const asked = service.a5.asked;
  await env.sleep(2 * 3600_000);
  expect(service.a5.asked).toBe(asked);
});
