// Each process's Prometheus address after a few flows: the worker, the webhook receiver and the codec
// server run as their own processes (src/*/main.ts, configured by the environment only, METRICS_PORT
// each), against the suite's dev server and a sandbox over real HTTP. The test runs card payments (one
// that succeeds, one whose charge is lost before it arrived and is resent once proved absent, one
// declined), webhooks (the sandbox's signed ones, a duplicate, a forged one) and codec requests, then
// scrapes each /metrics and asserts the SDK's worker metrics and the business metrics by name and count.
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMBEDDED_DEFAULTS, loadConfig } from '../../src/config/config';
import { startSandbox, SANDBOX_OTP, TEST_CARDS, type Sandbox } from '../../src/sandbox';
import { freePort } from '../../src/http/free-port';
import { ServiceProcess } from '../../chaos/stack';
import { closeStarters, connectStarters, type StarterContext } from '../../src/starters/connect';
import { getCardPaymentState, resubmitCard, startCardPayment, submitOtp } from '../../src/starters/card-payment';
import { waitForState } from '../../src/starters/payment-common';
import { SandboxAdmin } from '../support/sandbox-admin';
import { claimCheckDatabaseUrl, devServerAddress } from '../support/stack';
import { scrape, scrapeUntil, SDK_WORKER_METRICS, sumOf, type Sample } from '../support/prometheus';
import { cardPayment, payCardWithOtp } from '../support/flow-inputs';

jest.setTimeout(180_000);

const B1 = '/transaction/initiate/process-payment';
const dir = mkdtempSync(join(tmpdir(), 'payflow-metrics-'));
const taskQueue = `metrics-${randomUUID()}`;
const CODEC_TOKEN = 'metrics-test-codec-token';

let sandbox: Sandbox;
let admin: SandboxAdmin;
let starters: StarterContext;
const ports = {} as Record<
  'webhook' | 'codec' | 'workerMetrics' | 'webhookMetrics' | 'codecMetrics' | 'health',
  number
>;
const processes: ServiceProcess[] = [];
const metricsUrl = (port: number) => `http://127.0.0.1:${port}/metrics`;

beforeAll(async () => {
  for (const name of ['webhook', 'codec', 'workerMetrics', 'webhookMetrics', 'codecMetrics', 'health'] as const)
    ports[name] = await freePort();
  sandbox = await startSandbox({
    port: 0,
    webhookUrl: `http://127.0.0.1:${ports.webhook}/webhooks`,
    webhookRetryScheduleMs: [500, 1000, 2000],
  });
  admin = new SandboxAdmin(sandbox.url);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: dir, // no ~/.config/temporalio/temporal.toml of the machine's user
    TEMPORAL_ADDRESS: devServerAddress(),
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYMENTS_BASE_URL: sandbox.url,
    PAYMENTS_SECRET_KEY: EMBEDDED_DEFAULTS.secretKey,
    PAYMENTS_TIMEOUT_MS: '5000',
    CLAIM_CHECK_DATABASE_URL: claimCheckDatabaseUrl(),
    CLAIM_CHECK_EMBEDDED: 'false',
    VA_ERROR_LOG_SWEEP_EVERY_S: '0',
    RECONCILIATION_SCHEDULE: 'false', // the suite shares one dev server: no Schedule of this test's worker left behind
    WEBHOOK_PORT: String(ports.webhook),
    CODEC_PORT: String(ports.codec),
    CODEC_SERVER_TOKEN: CODEC_TOKEN,
    LOG_LEVEL: 'info',
  };
  const service = (name: string, entry: string, ready: RegExp, extra: Record<string, string>) => {
    const p = new ServiceProcess(name, entry, { ...env, ...extra }, join(dir, `${name}.log`), ready);
    processes.push(p);
    return p;
  };
  await Promise.all([
    service('webhooks', 'src/webhooks/main.ts', /webhook receiver listening/, {
      METRICS_PORT: String(ports.webhookMetrics),
    }).start(),
    service('codec', 'src/codec/main.ts', /codec server listening/, {
      METRICS_PORT: String(ports.codecMetrics),
    }).start(),
    service('worker', 'src/workers/main.ts', /worker started/, {
      METRICS_PORT: String(ports.workerMetrics),
      HEALTH_PORT: String(ports.health),
    }).start(),
  ]);
  starters = await connectStarters(loadConfig({ ...env, HOME: dir }));
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
  if (starters) await closeStarters(starters);
  await sandbox?.close();
});

const card = (number: string, amount: number) => cardPayment(`metrics-${randomUUID()}`, number, amount);

describe("each process's Prometheus address after a few flows", () => {
  it('exports the SDK and business metrics of each process on its own address', async () => {
    // Flows: a success (its webhook delivered twice by the sandbox), a B1 lost before it arrived
    // (requeried, proved absent; its CVV did not outlive the attempt, so the payer submits the card
    // again and B1 is resent once), a decline.
    // The webhooks are held until the flows have ended (they finish on the service's answer): a
    // signal that lands while a flow's last workflow task is open makes the server refuse that
    // completion and the task run again, and workflow counters are emitted again with it.
    await admin.webhookFault('hold', 2);
    const paid = card(TEST_CARDS.otpOnly, 100_000);
    expect(await payCardWithOtp(starters, paid)).toMatchObject({ status: 'success' });
    await admin.fault({ method: 'POST', path: `^${B1}$`, kind: 'drop-before-processing', count: 1 });
    const resent = card(TEST_CARDS.otpOnly, 250_000);
    const resentHandle = await startCardPayment(starters, resent);
    const stateOf = () => getCardPaymentState(starters, resent.transactionRef);
    await waitForState(stateOf, (s) => s.status === 'awaiting_card');
    expect(await resubmitCard(starters, resent.transactionRef, resent.card)).toMatchObject({ status: 'awaiting_otp' });
    await submitOtp(starters, resent.transactionRef, SANDBOX_OTP);
    expect(await resentHandle.result()).toMatchObject({ status: 'success' });
    const declined = card(TEST_CARDS.declined, 50_000);
    expect(await (await startCardPayment(starters, declined)).result()).toMatchObject({ status: 'failed' });
    await admin.webhookFault('duplicate', 1);
    await admin.releaseWebhooks();
    await admin.settle(); // every released delivery answered before the receiver is scraped

    // A forged webhook, and codec requests (the Web UI's path-token form, and one without a token).
    const body = JSON.stringify({
      Event: 'charge_successful',
      TransactionRef: paid.transactionRef,
      Body: { amount: 100_000 },
    });
    const forged = await fetch(`http://127.0.0.1:${ports.webhook}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-encrypted-body': createHmac('sha512', 'not-the-key').update(body).digest('hex'),
      },
      body,
    });
    expect(forged.status).toBe(401);
    const payloads = {
      payloads: [
        {
          metadata: { encoding: Buffer.from('json/plain').toString('base64') },
          data: Buffer.from('"hello"').toString('base64'),
        },
      ],
    };
    // The codec-server process takes header authentication only: the token in the path is refused (never a label either).
    const inPath = await fetch(`http://127.0.0.1:${ports.codec}/t/${CODEC_TOKEN}/encode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payloads),
    });
    expect(inPath.status).toBe(401);
    const encoded = await fetch(`http://127.0.0.1:${ports.codec}/encode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${CODEC_TOKEN}` },
      body: JSON.stringify(payloads),
    });
    expect(encoded.status).toBe(200);
    const decoded = await fetch(`http://127.0.0.1:${ports.codec}/decode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${CODEC_TOKEN}` },
      body: await encoded.text(),
    });
    expect(decoded.status).toBe(200);
    expect(
      (
        await fetch(`http://127.0.0.1:${ports.codec}/decode`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBe(401);

    // The worker: the SDK's own metrics (task latencies, slots, polls, sticky cache) and the business counters.
    const worker = await scrapeUntil(
      metricsUrl(ports.workerMetrics),
      (s) => sumOf(s, 'payflow_flow_outcomes_total', { flow: 'card' }) >= 3,
    );
    const w = worker.samples;
    const names = new Set(w.map((s) => s.name));
    for (const sdk of SDK_WORKER_METRICS) expect(names).toContain(sdk);
    expect(sumOf(w, 'temporal_workflow_completed_total', { workflow_type: 'cardPaymentWorkflow' })).toBe(3);
    expect(sumOf(w, 'payflow_flows_started_total', { flow: 'card' })).toBe(3);
    expect(sumOf(w, 'payflow_flow_outcomes_total', { flow: 'card', outcome: 'succeeded' })).toBe(2);
    expect(sumOf(w, 'payflow_flow_outcomes_total', { flow: 'card', outcome: 'failed' })).toBe(1);
    expect(sumOf(w, 'payflow_flow_outcomes_total', { flow: 'card', outcome: 'outcome_unknown' })).toBe(0);
    expect(sumOf(w, 'payflow_flow_succeeded_amount_minor_total', { flow: 'card', currency: 'NGN' })).toBe(350_000);
    expect(sumOf(w, 'payflow_flow_status_changes_total', { flow: 'card', status: 'awaiting_otp' })).toBe(2);
    // The lost B1: requeried until proved absent, then resent once (the resend without the CVV
    // answered "secret unavailable", the card submitted again answered); every send counted by its outcome.
    expect(sumOf(w, 'payflow_resends_proved_safe_total', { flow: 'card' })).toBe(1);
    expect(sumOf(w, 'payflow_requeries_total', { flow: 'card', stage: 'lost_answer', result: 'absent' })).toBe(2);
    expect(sumOf(w, 'payflow_flow_status_changes_total', { flow: 'card', status: 'awaiting_card' })).toBe(1);
    expect(sumOf(w, 'payflow_send_outcomes_total', { flow: 'card', outcome: 'answered' })).toBe(3);
    expect(sumOf(w, 'payflow_send_outcomes_total', { flow: 'card', outcome: 'refused' })).toBe(1);
    // The calls to the service, by operation and result: three B1 answered (two 200, one 400) and one lost.
    expect(sumOf(w, 'payflow_service_calls_total', { operation: 'direct.chargeCard', result: '2xx' })).toBe(2);
    expect(sumOf(w, 'payflow_service_calls_total', { operation: 'direct.chargeCard', result: '4xx' })).toBe(1);
    expect(sumOf(w, 'payflow_service_calls_total', { operation: 'direct.chargeCard', result: 'connection' })).toBe(1);
    expect(sumOf(w, 'payflow_service_call_duration_seconds_count', { operation: 'direct.chargeCard' })).toBe(4);
    // Recorded through the activity's metric meter: each call carries the activity that made it.
    expect(
      sumOf(w, 'payflow_service_calls_total', { operation: 'direct.chargeCard', activityType: 'chargeCard' }),
    ).toBe(4);

    // The receiver: webhooks by result, requests by route and status.
    const receiver = (
      await scrapeUntil(
        metricsUrl(ports.webhookMetrics),
        (s) =>
          sumOf(s, 'payflow_webhooks_total', { result: 'duplicate' }) >= 1 &&
          sumOf(s, 'payflow_http_requests_total', { server: 'webhooks', route: '/webhooks', status_code: '200' }) >= 3,
      )
    ).samples;
    expect(sumOf(receiver, 'payflow_webhooks_total', { kind: 'payment', result: 'verified' })).toBe(2);
    expect(sumOf(receiver, 'payflow_webhooks_total', { kind: 'payment', result: 'duplicate' })).toBe(1);
    expect(sumOf(receiver, 'payflow_webhooks_total', { kind: 'payment', result: 'rejected' })).toBe(1);
    expect(
      sumOf(receiver, 'payflow_http_requests_total', {
        server: 'webhooks',
        route: '/webhooks',
        method: 'POST',
        status_code: '200',
      }),
    ).toBe(3);
    expect(
      sumOf(receiver, 'payflow_http_requests_total', {
        server: 'webhooks',
        route: '/webhooks',
        method: 'POST',
        status_code: '401',
      }),
    ).toBe(1);
    expect(
      sumOf(receiver, 'payflow_http_request_duration_seconds_count', { server: 'webhooks', route: '/webhooks' }),
    ).toBe(4);
    expect(receiver.some((s: Sample) => s.name.startsWith('payflow_flow'))).toBe(false); // business flow metrics live on the worker

    // The codec server: requests by route (the token in the path is never a label).
    const codec = await scrape(metricsUrl(ports.codecMetrics));
    expect(
      sumOf(codec.samples, 'payflow_http_requests_total', { server: 'codec', route: '/encode', status_code: '200' }),
    ).toBe(1);
    expect(
      sumOf(codec.samples, 'payflow_http_requests_total', { server: 'codec', route: '/decode', status_code: '200' }),
    ).toBe(1);
    expect(
      sumOf(codec.samples, 'payflow_http_requests_total', { server: 'codec', route: '/decode', status_code: '401' }),
    ).toBe(1);
    expect(
      sumOf(codec.samples, 'payflow_http_requests_total', { server: 'codec', route: '/encode', status_code: '401' }),
    ).toBe(1);
    expect(codec.text).not.toContain(CODEC_TOKEN);

    // No reference, card number, key or e-mail in any label.
    for (const text of [worker.text, codec.text, await (await fetch(metricsUrl(ports.webhookMetrics))).text()]) {
      for (const secret of [
        paid.transactionRef,
        TEST_CARDS.otpOnly,
        EMBEDDED_DEFAULTS.secretKey,
        'ada@example.com',
        SANDBOX_OTP,
      ])
        expect(text).not.toContain(secret);
    }
  });

  it("serves the worker's /healthz and /readyz on HEALTH_PORT: alive, ready (running, polling, Temporal answers)", async () => {
    const health = await fetch(`http://127.0.0.1:${ports.health}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
    const ready = await fetch(`http://127.0.0.1:${ports.health}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, checks: { worker: true, polling: true, temporal: true } });
    expect((await fetch(`http://127.0.0.1:${ports.health}/metrics`)).status).toBe(404);
  });
});
