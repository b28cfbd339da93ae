// Issue #27 §4: every log line of a traced request carries its trace and span ids — the webhook
// receiver's and the codec server's too. A request that arrives with W3C `traceparent` gets a SERVER
// span in the caller's trace, active while the handler runs: its log lines name that span, the span's
// parent is the caller's, its attributes hold the route template (never the path: a reference rides
// in it). A request without `traceparent` starts a trace of its own; a line written outside any
// request carries no ids. A signed webhook's hand-over to Temporal joins the same trace.
import { createHmac, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Client } from '@temporalio/client';
import { createCodecServer } from '../../src/codec/codec-server';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { createLogger } from '../../src/logging/logger';
import { installTracing, type InstalledTracing } from '../../src/observability/tracing';
import { createTemporalClient } from '../../src/temporal/client';
import { closeServer, listen } from '../../src/webhooks/receiver';
import { eventually } from '../support/polling';
import { LogCapture, testConfig } from '../support/stack';
import { chargeSuccessfulBody, listenWebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(60_000);

const config = testConfig();
const exporter = new InMemorySpanExporter();
const logs = new LogCapture();
const logger = createLogger({ destination: logs, level: 'debug' });
let tracing: InstalledTracing;
let client: Client;
let receiver: { server: Server; url: string };
let codecServer: Server;
let codecUrl = '';
const TOKEN = `trace-test-${randomUUID()}`;

/** A caller's trace context: its trace id, its span id, sampled. */
function callerContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomUUID().replace(/-/g, '');
  const spanId = randomUUID().replace(/-/g, '').slice(0, 16);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function finishedSpans(done: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
  return eventually(
    async () => {
      await tracing.provider.forceFlush();
      return exporter.getFinishedSpans();
    },
    done,
    { timeoutMs: 10_000, intervalMs: 100, returnLastOnTimeout: true },
  );
}

beforeAll(async () => {
  tracing = installTracing({ serviceName: 'payflow-server-trace-test', exporter, simple: true });
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  receiver = await listenWebhookReceiver(config, client, { logger });
  const codec = new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId);
  codecServer = createCodecServer({ codec, token: TOKEN, corsOrigins: [], logger });
  codecUrl = await listen(codecServer, 0);
});

afterAll(async () => {
  if (receiver) await closeServer(receiver.server);
  if (codecServer) await closeServer(codecServer);
  await client?.connection.close();
  await tracing?.shutdown();
});

describe('the webhook receiver', () => {
  it("writes a refused webhook's line with the ids of its request's span, in the caller's trace", async () => {
    const caller = callerContext();
    const res = await fetch(`${receiver.url}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-encrypted-body': 'f'.repeat(128),
        traceparent: caller.traceparent,
      },
      body: chargeSuccessfulBody(`trace-${randomUUID()}`),
    });
    expect(res.status).toBe(401);
    const line = logs.records.find(
      (r) => r.msg === 'webhook signature mismatch: ignored' && r.trace_id === caller.traceId,
    );
    expect(line).toBeDefined();
    expect(line!.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(line!.span_id).not.toBe(caller.spanId); // the receiver's own span, a child of the caller's
    const spans = await finishedSpans((all) => all.some((s) => s.spanContext().spanId === line!.span_id));
    const span = spans.find((s) => s.spanContext().spanId === line!.span_id);
    expect(span).toBeDefined();
    expect(span!.name).toBe('POST /webhooks');
    expect(span!.parentSpanId).toBe(caller.spanId);
    expect(span!.attributes).toMatchObject({
      'payflow.server': 'webhooks',
      'http.request.method': 'POST',
      'http.response.status_code': 401,
    });
  });

  it("hands a signed webhook to Temporal in the same trace, and logs the hand-over with the request's ids", async () => {
    const caller = callerContext();
    const ref = `trace-${randomUUID()}`;
    const body = chargeSuccessfulBody(ref);
    const res = await fetch(`${receiver.url}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-encrypted-body': createHmac('sha512', config.payments.secretKey).update(body).digest('hex'),
        traceparent: caller.traceparent,
      },
      body,
    });
    expect(res.status).toBe(200);
    const line = logs.records.find(
      (r) => r.msg === 'payment webhook delivered to workflow' && r.transactionRef === ref,
    );
    expect(line).toMatchObject({ trace_id: caller.traceId });
    const spans = await finishedSpans((all) => all.some((s) => s.spanContext().spanId === line!.span_id));
    // The Temporal client's span for the hand-over is in the caller's trace too.
    const inTrace = spans.filter((s) => s.spanContext().traceId === caller.traceId);
    expect(inTrace.map((s) => s.name)).toEqual(
      expect.arrayContaining(['POST /webhooks', expect.stringMatching(/^Signal(WithStart)?Workflow:/)]),
    );
    // The receiver's span never names the reference (the path's or the body's); Temporal's carry the workflow id by design.
    const own = inTrace.find((s) => s.name === 'POST /webhooks')!;
    expect(JSON.stringify({ name: own.name, attributes: own.attributes })).not.toContain(ref);
  });
});

describe('the codec server', () => {
  it("writes the decode audit line with its request's ids; an untraced request gets a trace of its own", async () => {
    const codec = new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId);
    const [encoded] = await codec.encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"x"') },
    ]);
    const payloads = [
      {
        metadata: Object.fromEntries(
          Object.entries(encoded.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
        ),
        data: Buffer.from(encoded.data!).toString('base64'),
      },
    ];
    const decode = (headers: Record<string, string>) =>
      fetch(`${codecUrl}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
        body: JSON.stringify({ payloads }),
      });
    const caller = callerContext();
    const workflowId = `traced-${randomUUID()}`;
    expect((await decode({ traceparent: caller.traceparent, 'x-workflow-id': workflowId })).status).toBe(200);
    const traced = logs.records.find((r) => r.audit === 'codec.decode' && r.workflowId === workflowId);
    expect(traced).toMatchObject({ trace_id: caller.traceId });
    expect(traced!.span_id).not.toBe(caller.spanId);
    const spans = await finishedSpans((all) => all.some((s) => s.spanContext().spanId === traced!.span_id));
    expect(spans.find((s) => s.spanContext().spanId === traced!.span_id)).toMatchObject({
      name: 'POST /decode',
      attributes: expect.objectContaining({ 'payflow.server': 'codec', 'http.response.status_code': 200 }),
    });

    const untracedId = `untraced-${randomUUID()}`;
    expect((await decode({ 'x-workflow-id': untracedId })).status).toBe(200);
    const own = logs.records.find((r) => r.audit === 'codec.decode' && r.workflowId === untracedId);
    expect(own!.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(own!.trace_id).not.toBe(caller.traceId);

    // Health probes open no span (a root trace every few seconds would be noise).
    const before = exporter.getFinishedSpans().length;
    const probe = await fetch(`${codecUrl}/healthz`, { headers: { traceparent: callerContext().traceparent } });
    expect(probe.status).toBe(200);
    await tracing.provider.forceFlush();
    expect(
      exporter
        .getFinishedSpans()
        .slice(before)
        .filter((s) => s.name.endsWith('/healthz')),
    ).toEqual([]);

    logger.info('outside any request');
    expect(logs.records.find((r) => r.msg === 'outside any request')).not.toHaveProperty('trace_id');
  });
});
