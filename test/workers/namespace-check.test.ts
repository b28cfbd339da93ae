// The worker process checks its namespace at start (src/workers/search-attribute-setup.ts
// checkNamespace): against a dev server of the test's own that lacks PaymentServiceReference it
// refuses with one line naming the attribute and the command that registers it, exits 2, and its
// /readyz never answers 200; once that very command has run, the same worker starts and turns ready.
import { spawnSync } from 'node:child_process';
import { freePort } from '../../src/http/free-port';
import { startDevServer, type DevServer } from '../../src/stack/temporal-dev-server';
import { temporalBinaries } from '../../src/stack/temporal-binaries';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../../src/shared/search-attributes';
import { startWorkerProcess, stopWorkerProcess, workerEnvironment, type WorkerProcess } from '../ship/processes';
import { testConfig } from '../support/stack';
import { eventually } from '../support/polling';

jest.setTimeout(240_000);

const { PaymentServiceReference: _left, ...allButOne } = SEARCH_ATTRIBUTE_REGISTRATION;

/** /readyz's status code, or 0 while nothing answers. */
async function readyzStatus(port: number): Promise<number> {
  return fetch(`http://127.0.0.1:${port}/readyz`).then(
    (r) => r.status,
    () => 0,
  );
}

/** Polls /readyz until the process exits; every status it answered. */
async function readyzWhileAlive(worker: WorkerProcess, port: number): Promise<number[]> {
  const seen: number[] = [];
  let alive = true;
  void worker.exited.then(() => (alive = false));
  while (alive) {
    seen.push(await readyzStatus(port));
    await new Promise((r) => setTimeout(r, 100));
  }
  return seen;
}

describe('a worker whose namespace lacks a search attribute the flows write', () => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startDevServer({ uiPort: null, namespace: 'payflow-check', searchAttributes: allButOne });
  });
  afterAll(() => server?.stop());

  it('refuses to start with one line and the command that registers it; once run, the worker starts and turns ready', async () => {
    const healthPort = await freePort();
    const config = testConfig({ TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: 'payflow-check' });
    const env = workerEnvironment(config, 'http://127.0.0.1:9', {
      HEALTH_PORT: String(healthPort),
      METRICS_PORT: 'off',
    });

    const refused = startWorkerProcess('refused worker', env, 'src');
    // A worker that does not refuse is stopped after a while, and the test fails on its exit code.
    const stopIfStillRunning = setTimeout(() => void stopWorkerProcess(refused), 90_000);
    const [exit, readyz] = await Promise.all([refused.exited, readyzWhileAlive(refused, healthPort)]);
    clearTimeout(stopIfStillRunning);
    expect(exit.code).toBe(2);
    expect(readyz).not.toContain(200);
    const command = `temporal operator search-attribute create --address ${server.address} --namespace payflow-check --name PaymentServiceReference --type Keyword`;
    const line = refused
      .output()
      .split('\n')
      .find((l) => l.includes('PaymentServiceReference'));
    expect(line).toBe(
      `TEMPORAL_NAMESPACE: namespace payflow-check lacks the search attribute PaymentServiceReference (Keyword) that the flows write; register it: ${command}`,
    );
    expect(refused.output()).not.toContain('"msg":"worker started"');

    // The command as the line gives it, with the CLI `npm start` uses.
    const registered = spawnSync(temporalBinaries().cli!, command.split(' ').slice(1), { encoding: 'utf8' });
    expect(registered.status).toBe(0);

    const worker = startWorkerProcess('worker', env, 'src', 180_000);
    try {
      await worker.ready;
      await eventually(
        () => readyzStatus(healthPort),
        (s) => s === 200,
        {
          timeoutMs: 30_000,
          intervalMs: 200,
          description: '/readyz 200',
        },
      );
    } finally {
      await stopWorkerProcess(worker);
    }
  });
});
