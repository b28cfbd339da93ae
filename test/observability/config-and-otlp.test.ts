// The observability settings (METRICS_*, HEALTH_*, OTEL_*) parsed and refused by name, and tracing
// configured by the standard OTEL_* variables only: off by default, and with an OTLP endpoint the
// spans (sanitised) reach that collector over OTLP/HTTP; a metrics port that is taken is named.
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { startProcessObservability } from '../../src/observability/process';
import { createLogger } from '../../src/logging/logger';
import { LogCapture } from '../support/stack';
import { loadConfig } from '../../src/config/config';
import { configIssueVariables as variablesOf, productionEnv } from '../support/config';
import { installTracingFromConfig } from '../../src/observability/tracing';
import { activeTracing } from '../../src/observability/trace-context';

const PROD = productionEnv({ TEMPORAL_TLS: 'true' });

describe('observability settings', () => {
  it('keeps metrics and tracing off by default; the worker health on a free local port (8080 on all interfaces in production)', () => {
    expect(loadConfig({}).observability).toEqual({
      metricsOff: false,
      health: { host: '127.0.0.1', port: 0 },
      tracing: { enabled: false, exporter: 'none' },
    });
    // "off" is remembered, so npm start does not open its default metrics address either.
    expect(loadConfig({ METRICS_PORT: 'off' }).observability).toMatchObject({ metricsOff: true });
    expect(loadConfig(PROD).observability).toMatchObject({
      health: { host: '0.0.0.0', port: 8080 },
      tracing: { enabled: false },
    });
    expect(loadConfig(PROD).observability.metrics).toBeUndefined();
  });

  it('reads METRICS_PORT/HOST and HEALTH_PORT (a port, 0 for a free one, or off)', () => {
    expect(loadConfig({ METRICS_PORT: '9464' }).observability.metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' }).observability.metrics).toEqual({
      host: '0.0.0.0',
      port: 0,
    });
    expect(loadConfig({ METRICS_PORT: 'off' }).observability.metrics).toBeUndefined();
    expect(loadConfig({ ...PROD, HEALTH_PORT: 'off' }).observability.health).toBeUndefined();
    expect(variablesOf({ METRICS_PORT: 'ninety' })).toEqual(['METRICS_PORT']);
    expect(variablesOf({ HEALTH_PORT: '70000' })).toEqual(['HEALTH_PORT']);
  });

  it('turns tracing on with an OTLP endpoint or OTEL_TRACES_EXPORTER, off with OTEL_SDK_DISABLED; refuses what it cannot do, by name', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).observability.tracing).toEqual({
      enabled: true,
      exporter: 'otlp',
    });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console', OTEL_SERVICE_NAME: 'w1' }).observability.tracing).toEqual({
      enabled: true,
      exporter: 'console',
      serviceName: 'w1',
    });
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).observability
        .tracing.enabled,
    ).toBe(false);
    expect(variablesOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual(['OTEL_EXPORTER_OTLP_PROTOCOL']);
    expect(variablesOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toEqual(['OTEL_EXPORTER_OTLP_ENDPOINT']);
    expect(variablesOf({ OTEL_TRACES_EXPORTER: 'zipkin' })).toEqual(['OTEL_TRACES_EXPORTER']);
  });
});

it('installs nothing without configuration, and exports sanitised spans to the OTLP endpoint when configured', async () => {
  expect(installTracingFromConfig(loadConfig({}), 'payflow-test')).toBeUndefined();
  expect(activeTracing()).toBeUndefined();

  const received: { path: string; body: string }[] = [];
  const collector = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', () => r()));
  const endpoint = `http://127.0.0.1:${(collector.address() as { port: number }).port}`;
  // The exporter reads the standard variable itself (as in production); config decides on/off.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
  try {
    const tracing = installTracingFromConfig(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'payflow-otlp-test' }),
      'payflow-worker',
    )!;
    expect(activeTracing()).toBe(tracing);
    const span = tracing.tracer.startSpan('POST direct.chargeCard', {
      attributes: {
        'payflow.operation': 'direct.chargeCard',
        'customer.email': 'ada@example.com',
        card_number: '5555555555554444',
      },
    });
    span.recordException(new Error('declined for ada@example.com'));
    span.end();
    await tracing.shutdown(); // flushes the batch
    expect(received.map((r) => r.path)).toEqual(['/v1/traces']);
    const body = received[0].body;
    expect(body).toContain('POST direct.chargeCard');
    expect(body).toContain('payflow-otlp-test');
    expect(body).toContain('payflow.operation');
    for (const secret of ['ada@example.com', '5555555555554444', 'customer.email', 'card_number'])
      expect(body).not.toContain(secret);
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await new Promise<void>((r) => collector.close(() => r()));
  }
});

it('names METRICS_PORT when the metrics endpoint cannot listen (the port is taken)', async () => {
  const taken = createNetServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
  const port = (taken.address() as { port: number }).port;
  try {
    await expect(
      startProcessObservability(
        loadConfig({ METRICS_PORT: String(port) }),
        createLogger({ destination: new LogCapture() }),
        { serviceName: 'payflow-test' },
      ),
    ).rejects.toThrow(new RegExp(`^METRICS_PORT: the metrics endpoint cannot listen on 127\\.0\\.0\\.1:${port}`));
  } finally {
    await new Promise<void>((r) => taken.close(() => r()));
  }
});
