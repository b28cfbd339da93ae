// Every log line written inside a traced request carries its trace and span ids (trace_id, span_id,
// trace_flags): the logger reads the active OpenTelemetry span. Checked on the logger alone here
// (across awaits, outside any span, with a PAN-shaped span id); log-trace-ids.test.ts checks it end to
// end. A file of its own so that mutation testing's logging group can run it without a card payment.
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createLogger } from '../../src/logging/logger';
import { installTracing, type InstalledTracing } from '../../src/observability/tracing';
import { LogCapture } from '../support/stack';

let tracing: InstalledTracing;

beforeAll(() => {
  tracing = installTracing({
    serviceName: 'payflow-log-ids-logger-test',
    exporter: new InMemorySpanExporter(),
    simple: true,
  });
});

afterAll(async () => {
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

  it('writes trace_flags as two hex digits, as W3C trace context does, for any 8-bit value', () => {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture });
    const line = (traceFlags: number) => {
      const ids = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags };
      context.with(trace.setSpan(context.active(), trace.wrapSpanContext(ids)), () => logger.info('inside'));
      return capture.records[capture.records.length - 1];
    };
    expect(line(TraceFlags.SAMPLED)).toMatchObject({ trace_flags: '01' });
    expect(line(0x2a)).toMatchObject({ trace_flags: '2a' });
    expect(line(0xff)).toMatchObject({ trace_flags: 'ff' });
  });

  it('adds nothing for a span whose ids are not valid (all zeros)', () => {
    const capture = new LogCapture();
    const logger = createLogger({ destination: capture });
    const invalid = { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: TraceFlags.SAMPLED };
    context.with(trace.setSpan(context.active(), trace.wrapSpanContext(invalid)), () => logger.info('inside'));
    expect(capture.records[0]).not.toHaveProperty('trace_id');
    expect(capture.records[0]).not.toHaveProperty('span_id');
    expect(capture.records[0]).not.toHaveProperty('trace_flags');
  });
});
