// Re-records the webhook-inbox histories: `npx tsx test/replay/record-webhook-inbox.ts`
// (starts its own dev server unless TEMPORAL_TEST_ADDRESS=host:port is set), after the workflow
// changed on purpose; the replay test then replays the new history. The test config wants
// CLAIM_CHECK_TEST_DATABASE_URL; the inbox worker runs no activity, so any URL does:
// `CLAIM_CHECK_TEST_DATABASE_URL=postgres://unused@127.0.0.1:1/unused npx tsx test/replay/record-webhook-inbox.ts`.
import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { createTemporalClient } from '../../src/temporal/client';
import { createPaymentsWorker } from '../../src/workers/worker';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../../src/shared/payment-webhook';
import { releaseUnmatchedSignal, type unmatchedPaymentWebhookWorkflow } from '../../src/workflows/webhook-inbox';
import { testConfig, workflowBundle } from '../support/stack';
import { recordHistory } from '../support/replay';
import { startDevServer } from '../../src/stack/temporal-dev-server';

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
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await createPaymentsWorker({
    ...config.temporal,
    encryption: config.encryption,
    connection,
    activities: {},
    workflowBundle: await workflowBundle(),
  });
  const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  await worker.runUntil(async () => {
    const ref = `replay-${randomUUID()}`;
    const event: PaymentWebhookEvent = {
      event: 'charge_successful',
      transactionRef: ref,
      amount: 10000,
      currency: 'NGN',
      transactionStatus: 'Success',
      transactionType: 'Card',
      isRecurring: false,
      receivedAt: '2026-11-22T10:00:00.000Z',
    };
    const h = await client.workflow.signalWithStart<typeof unmatchedPaymentWebhookWorkflow, [PaymentWebhookEvent]>(
      'unmatchedPaymentWebhookWorkflow',
      {
        workflowId: `payment-${ref}`,
        taskQueue: config.temporal.taskQueue,
        args: [{}],
        signal: paymentWebhookSignal,
        signalArgs: [event],
      },
    );
    await h.signal(paymentWebhookSignal, event);
    await h.signal(releaseUnmatchedSignal);
    await h.result();
    await recordHistory(h, 'unmatched-payment-webhook');
    // Histories of the virtual-account credit workflow are recorded by
    // test/webhooks/va-credit-dedupe.test.ts and test/virtual-accounts/va-credit-e2e.test.ts.
  });
  await client.connection.close();
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
