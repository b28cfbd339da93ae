// `npm start` as a user runs it: the whole stack comes up on free ports, the Web UI and
// `temporal workflow list` answer, a workflow survives a restart, and Ctrl-C leaves nothing behind.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { temporalBinaries } from '../../src/stack/temporal-binaries';
import { EMBEDDED_DEFAULTS } from '../../src/config/config';
import { SANDBOX_ADMIN_HEADERS } from '../support/sandbox-admin';
import { freeStackPorts, portOpen, stackEnvironment, startStackProcess, type StackPorts } from '../support/npm-start';

jest.setTimeout(180_000);

const startStack = (ports: StackPorts, dataDir: string) =>
  startStackProcess(stackEnvironment(ports, dataDir, { LOG_LEVEL: 'warn' }));

async function stopWithCtrlC(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  return exited;
}

/**
 * The first start, once more on other free ports if a process could not bind its own: free ports are
 * picked before the stack binds them, and another suite running alongside may take one in between.
 */
async function firstStart(dataDir: string): Promise<{ ports: StackPorts; stack: ReturnType<typeof startStack> }> {
  for (let attempt = 1; ; attempt++) {
    const ports = await freeStackPorts();
    const stack = startStack(ports, dataDir);
    try {
      await stack.ready;
      return { ports, stack };
    } catch (err) {
      const portTaken = /before it was ready|EADDRINUSE|address already in use/i.test(String(err));
      if (attempt >= 2 || !portTaken) throw err;
    }
  }
}

describe('`npm start` as a user runs it', () => {
  it('brings the stack up, keeps workflows across a restart, and stops cleanly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'payflow-stack-'));
    const cli = temporalBinaries().cli!;
    try {
      const { ports, stack: first } = await firstStart(dataDir);
      const printed = first.output();
      for (const port of Object.values(ports)) expect(printed).toContain(`:${port}`);

      expect((await fetch(`http://127.0.0.1:${ports.ui}/`)).status).toBe(200);
      expect(
        (await fetch(`http://127.0.0.1:${ports.sandbox}/__admin/clock`, { headers: SANDBOX_ADMIN_HEADERS })).ok,
      ).toBe(true);
      expect((await fetch(`http://127.0.0.1:${ports.sandbox}/__admin/clock`)).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${ports.codec}/healthz`)).status).toBe(200);
      // The worker runs as a process of its own: the banner names its pid, which is neither the stack's
      // nor a wrapper's (its command line is the worker's entry), and it is alive.
      const workerPid = Number(/Worker +pid (\d+) \(a process of its own\)/.exec(printed)?.[1]);
      expect(workerPid).toBeGreaterThan(0);
      expect(workerPid).not.toBe(first.child.pid);
      expect(() => process.kill(workerPid, 0)).not.toThrow();
      expect(readFileSync(`/proc/${workerPid}/cmdline`, 'utf8').split('\0')).toEqual(
        expect.arrayContaining([expect.stringMatching(/src\/workers\/main\.ts$/)]),
      );
      // Started as production starts it: the stack-capture preload in the worker's own command, in effect.
      expect(readFileSync(`/proc/${workerPid}/cmdline`, 'utf8').split('\0')).toEqual(
        expect.arrayContaining([expect.stringMatching(/src\/workers\/workflow-stack-traces\.ts$/)]),
      );
      expect(printed).toContain('workflow stack traces off (WORKER_WORKFLOW_STACK_TRACES)');
      // Worker Versioning with no extra step: the worker made its own version current (development).
      expect(printed).toMatch(/version payflow:1\.0\.0(\+[0-9a-f]{12})? \(made current\)/);
      // The banner names the stack's metrics address, the worker's own, and each health endpoint; they answer.
      expect(printed).toContain(`Metrics           http://127.0.0.1:${ports.metrics}/metrics`);
      expect(printed).toContain(`worker http://127.0.0.1:${ports.workerMetrics}/metrics`);
      expect(printed).toContain(`worker http://127.0.0.1:${ports.health}/healthz /readyz`);
      expect(printed).toContain(`receiver http://127.0.0.1:${ports.webhook}/healthz /readyz`);
      // The SDK's worker metrics are on the worker's address, not on the stack's (receiver, codec server).
      expect(await (await fetch(`http://127.0.0.1:${ports.workerMetrics}/metrics`)).text()).toContain(
        'temporal_worker_task_slots_available',
      );
      expect(await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text()).not.toContain(
        'temporal_worker_task_slots_available',
      );
      let ready = 0;
      for (let i = 0; i < 50 && ready !== 200; i++) {
        ready = (await fetch(`http://127.0.0.1:${ports.health}/readyz`)).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      expect(ready).toBe(200);
      expect((await fetch(`http://127.0.0.1:${ports.webhook}/readyz`)).status).toBe(200);

      // A webhook that nobody waits for starts a holding workflow (it runs for 30 days).
      const ref = `stack-${randomUUID()}`;
      const body = JSON.stringify({
        Event: 'charge_successful',
        TransactionRef: ref,
        Body: {
          amount: 5000,
          transaction_ref: ref,
          transaction_status: 'Success',
          currency: 'NGN',
          transaction_type: 'Card',
        },
      });
      const sig = createHmac('sha512', EMBEDDED_DEFAULTS.secretKey).update(body).digest('hex');
      const res = await fetch(`http://127.0.0.1:${ports.webhook}/webhooks`, {
        method: 'POST',
        body,
        headers: { 'x-service-encrypted-body': sig },
      });
      expect(res.status).toBe(200);

      const list = () =>
        spawnSync(
          cli,
          ['workflow', 'list', '--address', `127.0.0.1:${ports.temporal}`, '--query', `WorkflowId = 'payment-${ref}'`],
          { encoding: 'utf8' },
        );
      const before = list();
      expect(before.status).toBe(0);
      expect(before.stdout).toContain(`payment-${ref}`);
      expect(before.stdout).toContain('Running');

      expect(await stopWithCtrlC(first.child)).toBe(0);
      for (const port of Object.values(ports)) expect(await portOpen(port)).toBe(false);
      // The worker process is gone too.
      expect(() => process.kill(workerPid, 0)).toThrow();

      const second = startStack(ports, dataDir);
      await second.ready;
      const after = list();
      expect(after.stdout).toContain(`payment-${ref}`);
      expect(after.stdout).toContain('Running');
      // The daily reconciliation Schedule exists after start, once (the restart updated it, no second one).
      const schedules = spawnSync(cli, ['schedule', 'list', '--address', `127.0.0.1:${ports.temporal}`], {
        encoding: 'utf8',
      });
      expect(schedules.stdout.match(/reconciliation-daily/g)).toHaveLength(1);
      expect(schedules.stdout).toContain('reconciliationWorkflow');
      expect(await stopWithCtrlC(second.child)).toBe(0);
      for (const port of Object.values(ports)) expect(await portOpen(port)).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
