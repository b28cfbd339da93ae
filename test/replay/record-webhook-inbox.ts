// Re-records the webhook-inbox histories: `npx tsx test/replay/record-webhook-inbox.ts`
// (starts its own dev server unless TEMPORAL_TEST_ADDRESS=host:port is set), after the workflow
// changed on purpose; the replay test then replays the new history. The test config wants
// CLAIM_CHECK_TEST_DATABASE_URL; the inbox worker runs no activity, so any URL does:
// `CLAIM_CHECK_TEST_DATABASE_URL=postgres://unused@127.0.0.1:1/unused npx tsx test/replay/record-webhook-inbox.ts`.
import { randomUUID } from 'node:crypto';
import { paymentWebhookSignal } from '../../src/shared/payment-webhook';
import { releaseUnmatchedSignal } from '../../src/workflows/webhook-inbox';
import { testConfig, withWorker, workflowBundle } from '../support/stack';
import { chargeSuccessfulEvent, signalUnmatchedWebhook } from '../support/flow-inputs';
import { recordHistory } from '../support/replay';
import { startDevServer } from '../../src/stack/temporal-dev-server';
import { withEventHandOver } from '../support/time-skipping';

async function main(): Promise<void> {
  process.env.RECORD_HISTORIES = '1';
  const devServer = process.env.TEMPORAL_TEST_ADDRESS ? undefined : await startDevServer({ uiPort: null });
  if (devServer) process.env.TEMPORAL_TEST_ADDRESS = devServer.address;
  try {
    await record();
  } finally {
    await devServer?.stop();
  }
}

async function record(): Promise<void> {
  const config = testConfig();
  await withWorker(
    config,
    { activities: withEventHandOver({}), workflowBundle: await workflowBundle() },
    async (client) => {
      const event = chargeSuccessfulEvent(`replay-${randomUUID()}`, { receivedAt: '2026-11-22T10:00:00.000Z' });
      const h = await signalUnmatchedWebhook(client, config.temporal.taskQueue, event);
      await h.signal(paymentWebhookSignal, event);
      await h.signal(releaseUnmatchedSignal);
      await h.result();
      await recordHistory(h, 'unmatched-payment-webhook');
      // Histories of the virtual-account credit workflow are recorded by
      // test/webhooks/va-credit-dedupe.test.ts and test/virtual-accounts/va-credit-e2e.test.ts.
    },
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
