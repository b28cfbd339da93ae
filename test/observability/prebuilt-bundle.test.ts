// A bundle built ahead of time (npm run build) carries both workflow interceptor modules, since it
// cannot know whether tracing will be on. With tracing off the worker must still run it quietly: the
// OpenTelemetry interceptor's spans go to a no-op sink (no "unregistered external sink" errors), and
// the metrics interceptor keeps counting.
import { randomUUID } from 'node:crypto';
import { PREBUILT_BUNDLE_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../../src/workers/worker';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { activeTracing } from '../../src/observability/trace-context';
import { releaseUnmatchedSignal } from '../../src/workflows/webhook-inbox';
import { LogCapture, testConfig, withWorker, workflowBundle } from '../support/stack';
import { chargeSuccessfulEvent, signalUnmatchedWebhook } from '../support/flow-inputs';
import { withEventHandOver } from '../support/time-skipping';

jest.setTimeout(90_000);
const capture = new LogCapture();
installTemporalRuntime(createLogger({ destination: capture, level: 'info' }));

describe('a bundle built ahead of time', () => {
  it('runs a bundle with the OpenTelemetry workflow interceptor while tracing is off, without sink errors', async () => {
    expect(activeTracing()).toBeUndefined();
    const config = testConfig();
    const bundle = await workflowBundle(WORKFLOWS_PATH, PREBUILT_BUNDLE_INTERCEPTOR_MODULES);
    const events = await withWorker(
      config,
      { activities: withEventHandOver({}), workflowBundle: bundle },
      async (client) => {
        const event = chargeSuccessfulEvent(`prebuilt-${randomUUID()}`);
        const h = await signalUnmatchedWebhook(client, config.temporal.taskQueue, event);
        await h.signal(releaseUnmatchedSignal);
        return h.result();
      },
    );
    expect(events).toHaveLength(1);
    expect(capture.text).not.toMatch(/unregistered external sink|External sink function threw/);
  });
});
