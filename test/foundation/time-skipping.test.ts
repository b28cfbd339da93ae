// The webhook inbox on the time-skipping server: an orphan webhook is kept, a duplicate is
// kept once, and the holding workflow completes after its retention without real waiting.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { paymentWebhookSignal, unmatchedWebhookQuery } from '../../src/shared/payment-webhook';
import { workflowBundle } from '../support/stack';
import { chargeSuccessfulEvent, signalUnmatchedWebhook } from '../support/flow-inputs';
import { createTimeSkippingEnv, withEventHandOver } from '../support/time-skipping';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
}, 120_000);
afterAll(() => env?.teardown());

const event = (ref: string) =>
  chargeSuccessfulEvent(ref, { gatewayRef: `${ref}_1`, receivedAt: '2026-11-22T10:00:00.000Z' });

describe('the webhook inbox on the time-skipping server', () => {
  it('keeps an orphan webhook once, through a 30-day retention, in seconds', async () => {
    const taskQueue = `ts-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: withEventHandOver({}), // the inbox tells webhook.unmatched: "not configured" here
    });
    const ref = `orphan-${randomUUID()}`;
    await worker.runUntil(async () => {
      const handle = await signalUnmatchedWebhook(env.client, taskQueue, event(ref));
      await handle.signal(paymentWebhookSignal, event(ref)); // duplicate delivery
      expect(await handle.query(unmatchedWebhookQuery)).toHaveLength(1);
      const started = Date.now();
      const kept = await handle.result();
      expect(kept).toEqual([event(ref)]);
      expect(Date.now() - started).toBeLessThan(20_000); // 30 days skipped, not waited
    });
  });
});
