// A bundle built ahead of time (npm run build) carries both workflow interceptor modules, since it
// cannot know whether tracing will be on. With tracing off the worker must still run it quietly: the
// OpenTelemetry interceptor's spans go to a no-op sink (no "unregistered external sink" errors), and
// the metrics interceptor keeps counting.
import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { createPaymentsWorker, PREBUILT_BUNDLE_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../../src/workers/worker';
import { createTemporalClient } from '../../src/temporal/client';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { activeTracing } from '../../src/observability/trace-context';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../../src/shared/payment-webhook';
import { releaseUnmatchedSignal, type unmatchedPaymentWebhookWorkflow } from '../../src/workflows/webhook-inbox';
import { LogCapture, testConfig, workflowBundle } from '../support/stack';

jest.setTimeout(90_000);
const capture = new LogCapture();
installTemporalRuntime(createLogger({ destination: capture, level: 'info' }));

describe('a bundle built ahead of time', () => {
  it('runs a bundle with the OpenTelemetry workflow interceptor while tracing is off, without sink errors', async () => {
    expect(activeTracing()).toBeUndefined();
    const config = testConfig();
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const worker = await createPaymentsWorker({
      ...config.temporal,
      encryption: config.encryption,
      connection,
      activities: {},
      workflowBundle: await workflowBundle(WORKFLOWS_PATH, PREBUILT_BUNDLE_INTERCEPTOR_MODULES),
    });
    const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
    try {
      const events = await worker.runUntil(async () => {
        const ref = `prebuilt-${randomUUID()}`;
        const event: PaymentWebhookEvent = {
          event: 'charge_successful',
          transactionRef: ref,
          amount: 10_000,
          currency: 'NGN',
          transactionStatus: 'Success',
          transactionType: 'Card',
          isRecurring: false,
          receivedAt: new Date().toISOString(),
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
        await h.signal(releaseUnmatchedSignal);
        return h.result();
      });
      expect(events).toHaveLength(1);
      expect(capture.text).not.toMatch(/unregistered external sink|External sink function threw/);
    } finally {
      await client.connection.close();
      await connection.close();
    }
  });
});
