// `npm start` stopped the way a terminal stops it: Ctrl-C sends SIGINT to the whole foreground
// process group. The worker process, the dev server and the claim-check PostgreSQL run in groups of
// their own, so only the stack receives it, and it stops the worker process first (and waits for it to
// exit) and the dev server last: no warning that the dev server went away under a running worker,
// nothing left listening or running. A vend purchase in flight at that moment (the sandbox answers it
// 4 s late) is answered and reported by the worker process before anything else stops.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/stack/temporal-dev-server';
import { loadConfig } from '../../src/config/config';
import { closeStarters, connectStarters } from '../../src/starters/connect';
import { startVend } from '../../src/starters/vending';
import { vendStateQuery } from '../../src/shared/vending';
import { SandboxAdmin } from '../support/sandbox-admin';
import { electricityVend } from '../support/flow-inputs';
import { freeStackPorts, portOpen, stackEnvironment, startStackProcess } from '../support/npm-start';
import { eventually } from '../support/polling';

jest.setTimeout(120_000);

describe('`npm start` stopped the way a terminal stops it', () => {
  it('Ctrl-C (SIGINT to the process group) lets an in-flight money call finish, then stops the worker and services, PostgreSQL and the dev server, in that order, without warnings', async () => {
    const ports = { ...(await freeStackPorts()), pg: await freePort() };
    const dataDir = mkdtempSync(join(tmpdir(), 'payflow-ctrl-c-'));
    const env = stackEnvironment(ports, dataDir, {
      CLAIM_CHECK_DATABASE_URL: `postgres://postgres:dev-claim-check@127.0.0.1:${ports.pg}/claimcheck`,
      LOG_LEVEL: 'info',
    });
    // A process group of its own, as a shell gives a foreground job.
    const stack = startStackProcess(env, { detached: true });
    const { child, exited } = stack;
    try {
      await stack.ready;
      expect(await portOpen(ports.temporal)).toBe(true);
      expect(await portOpen(ports.pg)).toBe(true);
      // The worker is a process of its own, in a process group of its own (not the stack's, which Ctrl-C reaches).
      const workerPid = Number(/Worker +pid (\d+) \(a process of its own\)/.exec(stack.output())?.[1]);
      expect(workerPid).toBeGreaterThan(0);
      expect(workerPid).not.toBe(child.pid);
      const processGroupOf = (pid: number) =>
        Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]);
      expect(processGroupOf(workerPid)).toBe(workerPid);
      expect(processGroupOf(child.pid!)).not.toBe(workerPid);

      // A vend whose purchase (H3) the sandbox answers 4 s late: Ctrl-C while it is in flight.
      await new SandboxAdmin(`http://127.0.0.1:${ports.sandbox}`).fault({
        method: 'POST',
        path: '^/vending/utilities/electricity$',
        kind: 'latency',
        latencyMs: 4_000,
        count: 1,
      });
      const starters = await connectStarters(loadConfig(env));
      try {
        const handle = await startVend(starters, electricityVend('ctrl-c-1'));
        const purchasing = await eventually(
          () => handle.query(vendStateQuery),
          (s) => s.status === 'purchasing',
          { timeoutMs: 30_000, intervalMs: 50, description: 'the vend purchasing', returnLastOnTimeout: true },
        );
        expect(purchasing.status).toBe('purchasing');
        await new Promise((r) => setTimeout(r, 500));
      } finally {
        await closeStarters(starters);
      }

      process.kill(-child.pid!, 'SIGINT');
      expect(await exited).toBe(0);

      const out = stack.output();
      const shutdown = out.slice(out.indexOf('SIGINT: stopping'));
      // The purchase was answered (by the worker process) after Ctrl-C, and before the worker process exited.
      const workerExited = `worker process ${workerPid} exited (0)`;
      expect(shutdown.indexOf('vend purchase answered')).toBeGreaterThanOrEqual(0);
      expect(shutdown.indexOf('vend purchase answered')).toBeLessThan(shutdown.indexOf(workerExited));
      const order = [workerExited, 'worker and services stopped', 'Temporal dev server stopped', 'stopped.'].map(
        (line) => shutdown.indexOf(line),
      );
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(out).not.toContain('exited before the stack stopped it');
      // No warning or error line while stopping (before the fix: "gRPC call respond_activity_task_completed retried N times").
      expect(shutdown.split('\n').filter((l) => /"level":"?(warn|error|fatal|40|50|60)\b/.test(l))).toEqual([]);
      for (const port of Object.values(ports)) expect(await portOpen(port)).toBe(false);
      expect(() => process.kill(workerPid, 0)).toThrow();
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
