// Liveness and readiness of each process: the webhook receiver (ready = Temporal answers), the codec
// server (ready = its codec round-trips a probe) and the worker's health server (ready = running,
// every worker of the process running and polling, Temporal answering). The worker's ready case
// against a real stack is in metrics-e2e.test.ts; here its refusals, and a real money-queue-only worker.
import type { Server } from 'node:http';
import { Connection } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { closeServer } from '../../src/webhooks/receiver';
import { startCodecServer } from '../../src/codec/codec-server';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { startHealthServer, WorkerHealth, type RunningHealthServer } from '../../src/observability/health';
import { createTemporalClient } from '../../src/temporal/client';
import { createLogger } from '../../src/logging/logger';
import { LogCapture, testConfig } from '../support/stack';
import { listenWebhookReceiver } from '../support/webhook-receiver';
import { createWorkerGroup } from '../../src/workers/worker-group';
import { eventually } from '../support/polling';

const logger = createLogger({ destination: new LogCapture() });
const config = testConfig();

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

describe('webhook receiver', () => {
  it('is alive and ready while Temporal answers', async () => {
    const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
    const { server, url } = await listenWebhookReceiver(config, client, { logger });
    try {
      expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: { ok: true } });
      expect(await get(`${url}/readyz`)).toEqual({ status: 200, body: { ready: true, checks: { temporal: true } } });
      expect((await fetch(`${url}/readyz`, { method: 'POST' })).status).toBe(404);
    } finally {
      await closeServer(server);
      await client.connection.close();
    }
  });

  it('is alive but not ready when Temporal cannot be reached', async () => {
    const connection = await Connection.lazy({ address: '127.0.0.1:1' });
    const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption, connection });
    const { server, url } = await listenWebhookReceiver(config, client, { logger });
    try {
      expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: { ok: true } });
      expect(await get(`${url}/readyz`)).toEqual({ status: 503, body: { ready: false, checks: { temporal: false } } });
    } finally {
      await closeServer(server);
      await connection.close();
    }
  });
});

describe('codec server', () => {
  const healthy = new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId);
  const broken: PayloadCodec = {
    encode: async () => {
      throw new Error('no key');
    },
    decode: async (p: Payload[]) => p,
  };

  it.each([
    ['ready when the codec round-trips a probe', healthy, 200, true],
    ['not ready when it cannot encrypt', broken, 503, false],
  ] as const)(
    'is alive, and %s (no token needed, also under the /t/<token> form)',
    async (_label, codec, status, ready) => {
      const server = await startCodecServer({ codec, token: 'health-test-token', corsOrigins: [], port: 0, logger });
      try {
        expect(await get(`${server.url}/healthz`)).toEqual({ status: 200, body: { ok: true } });
        expect(await get(`${server.url}/readyz`)).toEqual({ status, body: { ready, checks: { codec: ready } } });
        expect((await get(`${server.url}/t/health-test-token/readyz`)).status).toBe(status);
      } finally {
        await server.close();
      }
    },
  );
});

describe("worker's health server", () => {
  let running: RunningHealthServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  const fakeWorker = (state: string, workflowPollerState = 'POLLING', activityPollerState = 'POLLING') =>
    ({
      getState: () => state,
      getStatus: () => ({ runState: state, workflowPollerState, activityPollerState }),
    }) as unknown as Worker;
  const fakeConnection = (reachable: boolean) =>
    ({
      withDeadline: (_d: number, fn: () => Promise<unknown>) => fn(),
      workflowService: { getSystemInfo: async () => (reachable ? {} : Promise.reject(new Error('unavailable'))) },
    }) as unknown as NativeConnection;

  async function probe(health: WorkerHealth) {
    running = await startHealthServer({ host: '127.0.0.1', port: 0, checks: health });
    return { live: await get(`${running.url}/healthz`), ready: await get(`${running.url}/readyz`) };
  }

  it('answers alive but not ready before the worker exists (it is still connecting)', async () => {
    expect(await probe(new WorkerHealth())).toEqual({
      live: { status: 200, body: { ok: true } },
      ready: { status: 503, body: { ready: false, checks: { worker: false, polling: false, temporal: false } } },
    });
  });

  it.each([
    [
      'running, polling, Temporal answers',
      fakeWorker('RUNNING'),
      true,
      200,
      { worker: true, polling: true, temporal: true },
    ],
    [
      'a poller failed',
      fakeWorker('RUNNING', 'POLLING', 'FAILED'),
      true,
      503,
      { worker: true, polling: false, temporal: true },
    ],
    ['Temporal does not answer', fakeWorker('RUNNING'), false, 503, { worker: true, polling: true, temporal: false }],
    ['draining for shutdown', fakeWorker('DRAINING'), true, 503, { worker: false, polling: true, temporal: false }],
    [
      'an activity-only worker (a money or reads queue alone): no workflow poller, its activity poller polls',
      fakeWorker('RUNNING', 'SHUTDOWN', 'POLLING'),
      true,
      200,
      { worker: true, polling: true, temporal: true },
    ],
    [
      'a running worker whose pollers all stopped',
      fakeWorker('RUNNING', 'SHUTDOWN', 'SHUTDOWN'),
      true,
      503,
      { worker: true, polling: false, temporal: true },
    ],
    [
      "a process's workers: the main queue's polls, the money queue's activity poller failed",
      [fakeWorker('RUNNING'), fakeWorker('RUNNING', 'SHUTDOWN', 'FAILED')],
      true,
      503,
      { worker: true, polling: false, temporal: true },
    ],
    [
      "a process's workers: the main queue's runs, the reads queue's is draining",
      [fakeWorker('RUNNING'), fakeWorker('DRAINING', 'SHUTDOWN', 'POLLING')],
      true,
      503,
      { worker: false, polling: true, temporal: false },
    ],
    [
      "a process's workers: main, money and reads all running and polling",
      [fakeWorker('RUNNING'), fakeWorker('RUNNING', 'SHUTDOWN'), fakeWorker('RUNNING', 'SHUTDOWN')],
      true,
      200,
      { worker: true, polling: true, temporal: true },
    ],
  ] as const)('readiness: %s', async (_label, worker, reachable, status, checks) => {
    const health = new WorkerHealth();
    health.attach(worker, fakeConnection(reachable));
    const { ready } = await probe(health);
    expect(ready).toEqual({ status, body: { ready: status === 200, checks } });
  });

  it('is not alive once the worker failed', async () => {
    const health = new WorkerHealth();
    health.attach(fakeWorker('FAILED'), fakeConnection(true));
    expect((await probe(health)).live).toEqual({ status: 503, body: { ok: false } });
  });

  it("is not alive once any of the process's workers failed (the money queue's)", async () => {
    const health = new WorkerHealth();
    health.attach([fakeWorker('RUNNING'), fakeWorker('FAILED', 'SHUTDOWN', 'FAILED')], fakeConnection(true));
    expect((await probe(health)).live).toEqual({ status: 503, body: { ok: false } });
  });

  it('is ready with a real money-queue-only worker (WORKER_TASK_QUEUES=money), which has no workflow poller', async () => {
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const group = await createWorkerGroup(
      {
        connection,
        namespace: config.temporal.namespace,
        taskQueue: `health-money-${randomUUID()}`,
        activities: { noop: async () => undefined },
      },
      ['money'],
    );
    const health = new WorkerHealth();
    health.attach(group.workers, connection);
    const server = await startHealthServer({ host: '127.0.0.1', port: 0, checks: health });
    running = server;
    try {
      const ready = await group.runUntil(() =>
        eventually(
          () => get(`${server.url}/readyz`),
          (r) => r.status === 200,
          {
            timeoutMs: 15_000,
            returnLastOnTimeout: true,
          },
        ),
      );
      expect(ready).toEqual({
        status: 200,
        body: { ready: true, checks: { worker: true, polling: true, temporal: true } },
      });
    } finally {
      await connection.close();
    }
  });

  it('answers only its two routes', async () => {
    running = await startHealthServer({ host: '127.0.0.1', port: 0, checks: new WorkerHealth() });
    expect((await fetch(`${running.url}/`)).status).toBe(404);
    expect((running.server as Server).listening).toBe(true);
  });
});
