// `npm start` stopped the way a terminal stops it: Ctrl-C sends SIGINT to the whole foreground
// process group. The worker process, the dev server and the claim-check PostgreSQL run in groups of
// their own, so only the stack receives it, and it stops the worker process first (and waits for it to
// exit) and the dev server last: no warning that the dev server went away under a running worker,
// nothing left listening or running. A vend purchase in flight at that moment (the sandbox answers it
// 4 s late) is answered and reported by the worker process before anything else stops.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/stack/temporal-dev-server';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { loadConfig } from '../../src/config/config';
import { closeStarters, connectStarters } from '../../src/starters/connect';
import { startVend } from '../../src/starters/vending';
import { vendStateQuery } from '../../src/shared/vending';
import { SandboxAdmin } from '../support/sandbox-admin';

jest.setTimeout(120_000);

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const socket = require('node:net').connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('`npm start` stopped the way a terminal stops it', () => {
  it('Ctrl-C (SIGINT to the process group) lets an in-flight money call finish, then stops the worker and services, PostgreSQL and the dev server, in that order, without warnings', async () => {
    const ports = {
      temporal: await freePort(),
      ui: await freePort(),
      sandbox: await freePort(),
      webhook: await freePort(),
      codec: await freePort(),
      pg: await freePort(),
      metrics: await freePort(),
      workerMetrics: await freePort(),
      health: await freePort(),
    };
    const dataDir = mkdtempSync(join(tmpdir(), 'payflow-ctrl-c-'));
    const env: Record<string, string> = {
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
      TEMPORAL_UI_PORT: String(ports.ui),
      SANDBOX_PORT: String(ports.sandbox),
      WEBHOOK_PORT: String(ports.webhook),
      CODEC_PORT: String(ports.codec),
      METRICS_PORT: String(ports.metrics),
      WORKER_METRICS_PORT: String(ports.workerMetrics),
      HEALTH_PORT: String(ports.health),
      CLAIM_CHECK_DATABASE_URL: `postgres://postgres:dev-claim-check@127.0.0.1:${ports.pg}/claimcheck`,
      TEMPORAL_DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
    };
    const child = spawn(process.execPath, [join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), 'src/stack/start.ts'], {
      cwd: PROJECT_ROOT,
      // A process group of its own, as a shell gives a foreground job.
      detached: true,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setInterval(
          () => out.includes('Press Ctrl-C to stop.') && (clearInterval(timer), resolve()),
          100,
        );
        void exited.then((code) => (clearInterval(timer), reject(new Error(`stack exited early (${code}):\n${out}`))));
      });
      expect(await portOpen(ports.temporal)).toBe(true);
      expect(await portOpen(ports.pg)).toBe(true);
      // The worker is a process of its own, in a process group of its own (not the stack's, which Ctrl-C reaches).
      const workerPid = Number(/Worker +pid (\d+) \(a process of its own\)/.exec(out)?.[1]);
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
        const handle = await startVend(starters, {
          order_ref: 'ctrl-c-1',
          provider: 'EKEDC',
          meter_no: '45067198783',
          meter_type: 'prepaid',
          amount: 5000,
          phone_number: '08012345678',
          email: 'ada@example.com',
          options: { checkSettleDelay: '200ms', retryBackoff: '300ms' },
        });
        for (let i = 0; (await handle.query(vendStateQuery)).status !== 'purchasing'; i++) {
          if (i > 200) throw new Error('the vend never reached purchasing');
          await new Promise((r) => setTimeout(r, 50));
        }
        await new Promise((r) => setTimeout(r, 500));
      } finally {
        await closeStarters(starters);
      }

      process.kill(-child.pid!, 'SIGINT');
      expect(await exited).toBe(0);

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
