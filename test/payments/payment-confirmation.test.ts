// The payment confirmation steps (src/workflows/steps/payment-confirmation.ts) on the time-skipping
// server, through probe workflows (test/fixtures/payment-confirmation-workflows.ts) and a scripted
// verify: which webhooks count, how long the flow waits for one, how often it verifies meanwhile,
// and what it concludes, in what words, when a webhook came and the record disagrees or lags.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { awaitWebhookProbeWorkflow, confirmationProbeWorkflow } from '../fixtures/payment-confirmation-workflows';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../../src/shared/payment-webhook';
import type { ExpectedPayment, TransactionLookup } from '../../src/shared/payment-common';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { activitiesByWorkflow } from '../support/activities-by-workflow';
import { chargeSuccessfulEvent } from '../support/flow-inputs';

interface VerifyActivities {
  lookupTransaction(ref: string): Promise<TransactionLookup>;
}
const byFlow = activitiesByWorkflow<VerifyActivities>(['lookupTransaction']);
const TASK_QUEUE = `confirm-${randomUUID()}`;
const env = useTimeSkippingEnv({
  worker: {
    taskQueue: TASK_QUEUE,
    activities: () => byFlow.activities,
    workflowsPath: require.resolve('../fixtures/payment-confirmation-workflows'),
  },
});

const EXPECTED: ExpectedPayment = { amount: 10_000, currency: 'NGN', passCharge: false };
const MINUTE = 60_000;
type Answer = TransactionLookup | 'down';
const success: Answer = { found: true, status: 'Success', amount: 10_000, currency: 'NGN' };
const pending: Answer = { found: true, status: 'Pending' };
const absent: Answer = { found: false };
const failed: Answer = { found: true, status: 'Failed', reason: 'Insufficient funds' };

/** verify's scripted answers (the last repeats), and the server's clock at each read. */
function verify(answers: Answer[]) {
  const readsAt: number[] = [];
  const activities: VerifyActivities = {
    async lookupTransaction() {
      readsAt.push(await env.currentTimeMs());
      const a = answers.length > 1 ? answers.shift()! : answers[0]!;
      if (a === 'down')
        throw ApplicationFailure.create({ type: 'Unauthorized', message: 'verify: 401', nonRetryable: true });
      return a;
    },
  };
  return { activities, readsAt };
}

const webhook = chargeSuccessfulEvent;

/** confirmPayment for a new reference; `early`: webhooks signalled with the start (before its first task). */
async function confirm(
  answers: Answer[],
  graceMs: number,
  early: PaymentWebhookEvent[] | ((ref: string) => PaymentWebhookEvent[]) = [],
) {
  const ref = `ref-${randomUUID()}`;
  const service = verify(answers);
  const workflowId = byFlow.script(`confirm-${ref}`, service.activities);
  const signals = typeof early === 'function' ? early(ref) : early;
  const startedAt = await env.currentTimeMs();
  const handle =
    signals.length > 0
      ? await env.client.workflow.signalWithStart<typeof confirmationProbeWorkflow, [PaymentWebhookEvent]>(
          'confirmationProbeWorkflow',
          {
            taskQueue: TASK_QUEUE,
            workflowId,
            args: [ref, EXPECTED, graceMs],
            signal: paymentWebhookSignal,
            signalArgs: [signals[0]!],
          },
        )
      : await env.client.workflow.start<typeof confirmationProbeWorkflow>('confirmationProbeWorkflow', {
          taskQueue: TASK_QUEUE,
          workflowId,
          args: [ref, EXPECTED, graceMs],
        });
  for (const s of signals.slice(1)) await handle.signal(paymentWebhookSignal, s);
  const result = await handle.result();
  return { ...result, ref, workflowId, readsAt: service.readsAt.map((t) => t - startedAt) };
}

describe('which webhooks wake the confirmation', () => {
  it("another reference's charge_successful, or another event for this reference: neither counts; the grace runs out and verify decides", async () => {
    const r = await confirm([success], 5 * MINUTE, (ref) => [
      webhook(`other-${ref}`),
      webhook(ref, { event: 'charge_failed' }),
    ]);
    expect(r.deliveries).toBe(0);
    expect(r.confirmation).toEqual({ status: 'success', confirmedBy: 'verify' });
    expect(r.readsAt).toHaveLength(1);
    expect(r.readsAt[0]).toBeGreaterThanOrEqual(5 * MINUTE);
  });

  it("this reference's charge_successful, twice: counted twice, processed once, verified at once (no grace waited)", async () => {
    const r = await confirm([success], 5 * MINUTE, (ref) => [webhook(ref), webhook(ref)]);
    expect(r.deliveries).toBe(2);
    expect(r.confirmation).toEqual({ status: 'success', confirmedBy: 'webhook' });
    expect(r.elapsedMs).toBeLessThan(MINUTE);
  });
});

describe('the grace before verify', () => {
  it('no webhook: verify after the whole grace, and Pending there is unknown, "verified as Pending"', async () => {
    const r = await confirm([pending], 2 * MINUTE);
    expect(r.readsAt[0]).toBeGreaterThanOrEqual(2 * MINUTE);
    expect(r.confirmation).toEqual({ status: 'unknown', confirmedBy: 'verify', reason: 'verified as Pending' });
  });

  it('a grace of 0: verify at once, with no timer', async () => {
    const r = await confirm([success], 0);
    expect(r.confirmation).toEqual({ status: 'success', confirmedBy: 'verify' });
    expect(r.elapsedMs).toBeLessThan(1_000); // the read's own time only
    const { events } = await env.client.workflow.getHandle(r.workflowId).fetchHistory();
    expect(events?.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
  });
});

describe('after a webhook, verify decides, and says why when it does not confirm', () => {
  const hint = 'a charge_successful webhook came, but';

  it('a record that lags: read three times in all, then unknown, "does not know the reference"', async () => {
    const r = await confirm([absent], MINUTE, (ref) => [webhook(ref)]);
    expect(r.readsAt).toHaveLength(3);
    expect(r.confirmation).toEqual({
      status: 'unknown',
      confirmedBy: 'verify',
      reason: `${hint} the service does not know the reference`,
    });
  });

  it('a record that shows up on the second read: success from the webhook, after two reads', async () => {
    const r = await confirm([pending, success], MINUTE, (ref) => [webhook(ref)]);
    expect(r.readsAt).toHaveLength(2);
    expect(r.confirmation).toEqual({ status: 'success', confirmedBy: 'webhook' });
  });

  it('verify that cannot be asked: one read, unknown, "could not be asked to confirm it"', async () => {
    const r = await confirm(['down'], MINUTE, (ref) => [webhook(ref)]);
    expect(r.readsAt.length).toBeGreaterThanOrEqual(1);
    expect(r.confirmation).toEqual({
      status: 'unknown',
      confirmedBy: 'verify',
      reason: `${hint} the service could not be asked to confirm it`,
    });
  });

  it("a record that says Failed: failed, confirmed by verify, with verify's reason after the hint", async () => {
    const r = await confirm([failed], MINUTE, (ref) => [webhook(ref)]);
    expect(r.confirmation).toEqual({
      status: 'failed',
      confirmedBy: 'verify',
      reason: `${hint} verified as Failed: Insufficient funds`,
    });
  });
});

describe('waiting for the payer while verifying', () => {
  async function wait(answers: Answer[], waitMs: number, pollMs: number, early?: (ref: string) => PaymentWebhookEvent) {
    const ref = `ref-${randomUUID()}`;
    const service = verify(answers);
    const workflowId = byFlow.script(`await-${ref}`, service.activities);
    const startedAt = await env.currentTimeMs();
    const options = { taskQueue: TASK_QUEUE, workflowId, args: [ref, waitMs, pollMs] as [string, number, number] };
    const handle = early
      ? await env.client.workflow.signalWithStart<typeof awaitWebhookProbeWorkflow, [PaymentWebhookEvent]>(
          'awaitWebhookProbeWorkflow',
          { ...options, signal: paymentWebhookSignal, signalArgs: [early(ref)] },
        )
      : await env.client.workflow.start<typeof awaitWebhookProbeWorkflow>('awaitWebhookProbeWorkflow', options);
    const result = await handle.result();
    return { ...result, readsAt: service.readsAt.map((t) => t - startedAt) };
  }

  it('Pending throughout: a read every pollMs, none at or after the end, and the wait ends exactly at waitMs', async () => {
    const r = await wait([pending], 10_000, 3_000);
    expect(r.record).toBeUndefined();
    expect(r.readsAt).toHaveLength(3);
    r.readsAt.forEach((t, i) => expect(t).toBeGreaterThanOrEqual((i + 1) * 3_000));
    expect(r.readsAt.every((t) => t < 10_000)).toBe(true);
    expect(r.elapsedMs).toBeGreaterThanOrEqual(10_000);
    expect(r.elapsedMs).toBeLessThan(11_000); // not the next poll's 12 s
  });

  it('a record that becomes final: returned at the read that shows it, not before', async () => {
    const r = await wait([pending, pending, success], MINUTE, 3_000);
    expect(r.readsAt).toHaveLength(3);
    expect(r.record).toMatchObject({ found: true, status: 'Success' });
  });

  it('a webhook already in: the wait ends at once, with no read', async () => {
    const r = await wait([pending], MINUTE, 3_000, (ref) => webhook(ref));
    expect(r).toMatchObject({ webhook: true });
    expect(r.record).toBeUndefined();
    expect(r.elapsedMs).toBeLessThan(1_000);
    expect(r.readsAt).toEqual([]);
  });
});
