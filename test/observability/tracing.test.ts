// One trace from the starter to the HTTP call: with tracing installed (an in-memory exporter in place
// of OTLP), a card payment started by the typed starter gives StartWorkflow (client) → RunWorkflow
// (workflow) → StartActivity → RunActivity (activity) → "POST direct.chargeCard" (the call to the
// service, undici), all in the starter's trace, and the W3C context reaches the service. No card data,
// OTP, key, e-mail or WorkflowInfo field beyond the ids is in any exported span.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { PaymentsClient } from '../../src/api';
import { serviceCallObserver } from '../../src/observability/service-calls';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { installTracing, type InstalledTracing } from '../../src/observability/tracing';
import { workflowInterceptorModules, WORKFLOWS_PATH } from '../../src/workers/worker';
import type { RunningServices } from '../../src/stack/services';
import { SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';
import { EMBEDDED_DEFAULTS } from '../../src/config/config';
import { eventually } from '../support/polling';
import { startServices, testConfig, workflowBundle } from '../support/stack';
import { cardPayment, payCardWithOtp } from '../support/flow-inputs';

jest.setTimeout(120_000);

const exporter = new InMemorySpanExporter();
let tracing: InstalledTracing;
let services: RunningServices;

beforeAll(async () => {
  // Installed before any client or worker exists (as each process's main does through startProcessObservability).
  tracing = installTracing({ serviceName: 'payflow-test', exporter, simple: true });
  expect(workflowInterceptorModules()).toHaveLength(2); // metrics + OpenTelemetry
  services = await startServices(testConfig(), {
    workflowBundle: await workflowBundle(WORKFLOWS_PATH, workflowInterceptorModules()),
  });
});

afterAll(async () => {
  await services?.stop();
  await tracing?.shutdown();
});

const byId = (spans: ReadableSpan[]) => new Map(spans.map((s) => [s.spanContext().spanId, s]));

/** The finished spans once `ready` (at the deadline, what there is, for the test's assertions). */
const spansUntil = (ready: (spans: ReadableSpan[]) => boolean, deadlineMs = 30_000): Promise<ReadableSpan[]> =>
  eventually(
    async () => {
      await tracing.provider.forceFlush();
      return exporter.getFinishedSpans();
    },
    ready,
    { timeoutMs: deadlineMs, intervalMs: 200, returnLastOnTimeout: true },
  );

describe('one trace from the starter to the HTTP call', () => {
  it('joins the starter, the workflow, the activity and the HTTP call to the service in one trace', async () => {
    const input = cardPayment(`trace-${randomUUID()}`, TEST_CARDS.otpOnly, 100_000);
    expect(await payCardWithOtp(services.starters, input)).toMatchObject({ status: 'success' });

    const spans = await spansUntil((all) => all.some((s) => s.name === 'RunWorkflow:cardPaymentWorkflow'));
    const http = spans.find((s) => s.name === 'POST direct.chargeCard');
    expect(http).toBeDefined();
    expect(http!.attributes).toMatchObject({
      'payflow.operation': 'direct.chargeCard',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'payflow.money_moving': true,
    });

    // Walk up from the HTTP call to the root: every parent is there, in the same trace.
    const index = byId(spans);
    const chain: string[] = [];
    for (
      let span: ReadableSpan | undefined = http;
      span;
      span = span.parentSpanId ? index.get(span.parentSpanId) : undefined
    ) {
      expect(span.spanContext().traceId).toBe(http!.spanContext().traceId);
      chain.push(span.name);
    }
    expect(chain).toEqual([
      'POST direct.chargeCard',
      'RunActivity:chargeCard',
      'StartActivity:chargeCard',
      'RunWorkflow:cardPaymentWorkflow',
      'StartWorkflow:cardPaymentWorkflow',
    ]);
    // The Update from the same backend (the OTP) is traced too, and the service calls under it.
    expect(spans.some((s) => s.name === 'POST direct.authorizeCard')).toBe(true);

    // Nothing secret or personal in any exported span: names, attributes, events, status.
    const exported = JSON.stringify(
      spans.map((s) => ({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
        links: s.links,
      })),
    );
    for (const secret of [
      TEST_CARDS.otpOnly,
      '"123"',
      SANDBOX_OTP,
      EMBEDDED_DEFAULTS.secretKey,
      'ada@example.com',
      'Ada Obi',
    ])
      expect(exported).not.toContain(secret);
    // The workflow exporter attaches all of WorkflowInfo; only the ids go out.
    const workflowSpan = spans.find((s) => s.name === 'RunWorkflow:cardPaymentWorkflow')!;
    expect(Object.keys(workflowSpan.attributes).sort()).toEqual(expect.arrayContaining(['workflowId', 'workflowType']));
    for (const dropped of ['memo', 'searchAttributes', 'typedSearchAttributes', 'lastFailure', 'unsafe'])
      expect(workflowSpan.attributes).not.toHaveProperty(dropped);
  });

  it('sends the W3C trace context to the service (traceparent: the trace, and the HTTP span as parent)', async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.traceparent as string | undefined);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          status: 200,
          success: true,
          message: 'ok',
          data: {
            transaction_status: 'Success',
            transaction_ref: 'T-1',
            transaction_amount: 100,
            transaction_currency_id: 'NGN',
          },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const api = new PaymentsClient({
      baseUrl: url,
      secretKey: EMBEDDED_DEFAULTS.secretKey,
      observer: serviceCallObserver(url),
    });
    try {
      const traceId = await tracing.tracer.startActiveSpan('backend-request', async (parent) => {
        await api.transactions.verify({ transaction_ref: 'T-1' }).catch(() => undefined); // the answer's shape does not matter here
        parent.end();
        return parent.spanContext().traceId;
      });
      const spans = await spansUntil((all) =>
        all.some((s) => s.name === 'GET transactions.verify' && s.spanContext().traceId === traceId),
      );
      const call = spans.find((s) => s.name === 'GET transactions.verify' && s.spanContext().traceId === traceId)!;
      expect(seen).toEqual([`00-${traceId}-${call.spanContext().spanId}-01`]);
    } finally {
      await api.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
