// Scale-out: two worker processes (the production entry, `node dist/workers/main.js`, configured by
// the environment like chaos/stack.ts) poll one task queue. A dozen vends run across both; while
// one worker holds vend purchases in flight (the sandbox answers them 3 s late) it is SIGKILLed.
// Every flow completes on the other worker, each with exactly one purchase in the service's ledger.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { RunningServices } from '../../src/stack/services';
import { startVend } from '../../src/starters/vending';
import type { VendInput } from '../../src/shared/vending';
import { startServices, testConfig } from '../support/stack';
import { sleep } from '../support/polling';
import { SandboxAdmin } from '../support/sandbox-admin';
import { electricityVend } from '../support/flow-inputs';
import { ensureBuilt } from './build';
import { startWorkerProcess, stopWorkerProcess, workerEnvironment, type WorkerProcess } from './processes';

jest.setTimeout(120_000);

const { EventType, PendingActivityState } = temporal.api.enums.v1;
const config = testConfig();
let services: RunningServices;
let admin: SandboxAdmin;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  await ensureBuilt();
  services = await startServices(config, { withoutWorker: true });
  admin = new SandboxAdmin(services.sandboxUrl!);
}, 180_000);
afterAll(async () => {
  await Promise.all(workers.map((w) => stopWorkerProcess(w, 5_000)));
  await services?.stop();
});

const identityOf = (w: WorkerProcess) => `${w.child.pid}@${hostname()}`;

/** Identities of the workers that started workflow or activity tasks of this run. */
async function identities(handle: WorkflowHandle): Promise<Set<string>> {
  const history = await handle.fetchHistory();
  const ids = new Set<string>();
  for (const e of history.events ?? []) {
    const id = e.workflowTaskStartedEventAttributes?.identity ?? e.activityTaskStartedEventAttributes?.identity;
    if (id) ids.add(id);
  }
  return ids;
}

describe('scale-out: two worker processes on one task queue', () => {
  it('a SIGKILLed worker loses nothing: every flow completes on the other worker, each purchase sent once', async () => {
    const env = workerEnvironment(config, services.sandboxUrl!);
    const [a, b] = [startWorkerProcess('worker A', env), startWorkerProcess('worker B', env)];
    workers.push(a, b);
    await Promise.all([a.ready, b.ready]);

    const flows = 12;
    await admin.fault({
      method: 'POST',
      path: '^/vending/utilities/electricity$',
      kind: 'latency',
      latencyMs: 3_000,
      count: flows,
    });
    const run = randomUUID().slice(0, 6);
    const input = (i: number): VendInput =>
      electricityVend(`scale-${run}-${i}`, {
        // A purchase lost with its worker is looked up by reference (H4) before anything is sent again.
        options: {
          checkSettleDelay: '200ms',
          retryBackoff: '300ms',
          purchaseTimeoutMs: 5_000,
          requeryBackoff: '500ms',
        },
      });
    const handles = await Promise.all(Array.from({ length: flows }, (_, i) => startVend(services.starters, input(i))));

    // Wait until worker A holds a purchase in flight, then kill it without warning.
    const idA = identityOf(a);
    for (let i = 0; ; i++) {
      const described = await Promise.all(handles.map((h) => h.describe()));
      const inFlightOnA = described
        .flatMap((d) => d.raw.pendingActivities ?? [])
        .filter(
          (p) =>
            p.activityType?.name === 'vendPurchase' &&
            p.state === PendingActivityState.PENDING_ACTIVITY_STATE_STARTED &&
            p.lastWorkerIdentity === idA,
        );
      if (inFlightOnA.length > 0) break;
      if (i > 200) throw new Error('worker A never held a purchase in flight');
      await sleep(50);
    }
    a.child.kill('SIGKILL');
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const results = await Promise.all(handles.map((h) => h.result()));
    expect(results.map((r) => r.status)).toEqual(Array(flows).fill('vended'));
    for (const r of results) expect(await admin.ledger({ reference: r.reference!, kind: 'vend' })).toHaveLength(1);

    // Some flows were on A when it died and finished on B; B is still serving.
    const idB = identityOf(b);
    const touched = await Promise.all(handles.map((h) => identities(h)));
    const failedOver = touched.filter((ids) => ids.has(idA) && ids.has(idB));
    expect(failedOver.length).toBeGreaterThan(0);
    for (const ids of touched) expect([...ids].every((id) => id === idA || id === idB)).toBe(true);
    // The killed purchase attempts ended by heartbeat timeout (seconds, not the start-to-close).
    const histories = await Promise.all(handles.map((h) => h.fetchHistory()));
    const timedOut = histories
      .flatMap((h) => h.events ?? [])
      .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT);
    expect(timedOut.length).toBeGreaterThan(0);
    expect(b.child.exitCode).toBeNull();
  });
});
