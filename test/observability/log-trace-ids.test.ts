// Every log line written inside a traced request carries its trace and span ids (trace_id, span_id,
// trace_flags): the logger reads the active OpenTelemetry span. Checked on the logger alone (across
// awaits, outside any span, with a PAN-shaped span id) and end to end: a card payment's activity log
// line names the span of the activity that wrote it, in the trace the starter began.
import { randomUUID } from 'node:crypto';
import { context, trace, TraceFlags } from '@opentelemetry/api';
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

describe('the logger and the active span', () => {
  it('adds the active span’s ids to every line inside it, across awaits, and none outside', async () => {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture });
    logger.info('before');
    let traceId = '';
    let spanId = '';
    await tracing.tracer.startActiveSpan('request', async (span) => {
      traceId = span.spanContext().traceId;
      spanId = span.spanContext().spanId;
      logger.info({ step: 1 }, 'first');
      await new Promise((r) => setTimeout(r, 5));
      logger.child({ component: 'x' }).warn('after an await, from a child logger');
      span.end();
    });
    logger.info('after');
    const [before, first, second, after] = capture.records;
    expect(before).not.toHaveProperty('trace_id');
    expect(after).not.toHaveProperty('span_id');
    for (const line of [first, second])
      expect(line).toMatchObject({ trace_id: traceId, span_id: spanId, trace_flags: '01' });
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('keeps a span id made only of digits (PAN-shaped to the text scrubber) and replaces a caller’s own trace_id', () => {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture });
    const ids = {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '4111111111111111',
      traceFlags: TraceFlags.NONE,
    };
    context.with(trace.setSpan(context.active(), trace.wrapSpanContext(ids)), () =>
      logger.info({ trace_id: 'forged' }, 'inside'),
    );
    expect(capture.records[0]).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId, trace_flags: '00' });
    // The same digits as a logged value are still scrubbed.
    logger.info({ note: `card ${ids.spanId}` }, 'value');
    expect(JSON.stringify(capture.records[1])).not.toContain(ids.spanId);
  });
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
