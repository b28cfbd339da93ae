// Every log line written inside a traced request carries its trace and span ids (trace_id, span_id,
// trace_flags): the logger reads the active OpenTelemetry span. Checked end to end here: a card
// payment's activity log line names the span of the activity that wrote it, in the trace the starter
// began. The logger alone: log-trace-ids-logger.test.ts.
import { randomUUID } from 'node:crypto';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '../../src/logging/logger';
import { installTracing, type InstalledTracing } from '../../src/observability/tracing';
import { workflowInterceptorModules, WORKFLOWS_PATH } from '../../src/workers/worker';
import type { RunningServices } from '../../src/stack/services';
import { TEST_CARDS } from '../../src/sandbox';
import { eventually } from '../support/polling';
import { LogCapture, startServices, testConfig, workflowBundle } from '../support/stack';
import { cardPayment, payCardWithOtp } from '../support/flow-inputs';

jest.setTimeout(120_000);

const exporter = new InMemorySpanExporter();
let tracing: InstalledTracing;
let services: RunningServices | undefined;
const serviceLogs = new LogCapture();

beforeAll(() => {
  tracing = installTracing({ serviceName: 'payflow-log-ids-test', exporter, simple: true });
});

afterAll(async () => {
  await services?.stop();
  await tracing?.shutdown();
});

describe('a traced card payment', () => {
  it('writes the activity’s log line with the ids of that activity’s span, in the starter’s trace', async () => {
    services = await startServices(testConfig(), {
      logger: createLogger({ destination: serviceLogs, level: 'info' }),
      workflowBundle: await workflowBundle(WORKFLOWS_PATH, workflowInterceptorModules()),
    });
    const ref = `logids-${randomUUID()}`;
    const input = cardPayment(ref, TEST_CARDS.otpOnly, 100_000);
    expect(await payCardWithOtp(services.starters, input)).toMatchObject({ status: 'success' });

    const spans: ReadableSpan[] = await eventually(
      async () => {
        await tracing.provider.forceFlush();
        return exporter.getFinishedSpans();
      },
      (all) => all.some((s) => s.name === 'RunActivity:chargeCard'),
      { timeoutMs: 30_000, intervalMs: 200, returnLastOnTimeout: true },
    );
    const line = serviceLogs.records.find((r) => r.msg === 'card charge answered' && r.transactionRef === ref);
    expect(line).toBeDefined();
    const span = spans.find((s) => s.spanContext().spanId === line!.span_id);
    expect(span).toBeDefined();
    expect(span!.spanContext().traceId).toBe(line!.trace_id);
    // The line was written in the activity's span or below it (the HTTP call's span ends before it).
    expect(['RunActivity:chargeCard', 'POST direct.chargeCard']).toContain(span!.name);
    const start = spans.find(
      (s) => s.name === 'StartWorkflow:cardPaymentWorkflow' && s.spanContext().traceId === line!.trace_id,
    );
    expect(start).toBeDefined();
  });
});
