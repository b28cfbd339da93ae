// `npm start` stopped the way a terminal stops it: Ctrl-C sends SIGINT to the whole foreground
// process group. The worker process, the dev server and the claim-check PostgreSQL run in groups of
// their own, so only the stack receives it, and it stops the worker process first (and waits for it to
// exit) and the dev server last: no warning that the dev server went away under a running worker,
// nothing left listening or running. A vend purchase in flight at that moment (the sandbox answers it
// 4 s late) is answered and reported by the worker process before anything else stops.
// Ctrl-C during the start-up (right after the spawn, as the dev server, PostgreSQL, the sandbox and the
// worker process come up) skips the steps left and stops what started: the process exits and every
// process of the run is gone within seconds, no banner printed (src/stack/startup.ts).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/http/free-port';
import { loadConfig } from '../../src/config/config';
import { closeStarters, connectStarters } from '../../src/starters/connect';
import { startVend } from '../../src/starters/vending';
import { vendStateQuery } from '../../src/shared/vending';
import { SandboxAdmin } from '../support/sandbox-admin';
import { electricityVend } from '../support/flow-inputs';
import { freeStackPorts, portOpen, stackEnvironment, startStackProcess, type StackPorts } from '../support/npm-start';
import { eventually, sleep } from '../support/polling';

jest.setTimeout(120_000);

/** The pids of every process of one `npm start` run: its environment or command line names the run's data folder. */
function processesOf(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8');
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (env.includes(`TEMPORAL_DATA_DIR=${dataDir}\0`) || cmdline.includes(dataDir)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** How long `npm start` may take, from Ctrl-C, to have exited with nothing of it left running. */
const STOPPED_WITHIN_MS = 10_000;

/** `npm start` on free ports with its own PostgreSQL, in a process group of its own, as a shell gives a foreground job. */
async function startInItsOwnGroup(dataDirPrefix: string) {
  const ports = { ...(await freeStackPorts()), pg: await freePort() };
  const dataDir = mkdtempSync(join(tmpdir(), dataDirPrefix));
  const env = stackEnvironment(ports, dataDir, {
    CLAIM_CHECK_DATABASE_URL: `postgres://postgres:dev-claim-check@127.0.0.1:${ports.pg}/claimcheck`,
    LOG_LEVEL: 'info',
  });
  return { ports, dataDir, env, stack: startStackProcess(env, { detached: true }) };
}

describe('`npm start` stopped the way a terminal stops it', () => {
  it('Ctrl-C (SIGINT to the process group) lets an in-flight money call finish, then stops the worker and services, PostgreSQL and the dev server, in that order, without warnings', async () => {
    const { ports, dataDir, env, stack } = await startInItsOwnGroup('payflow-ctrl-c-');
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

/** The moments of the start-up a Ctrl-C comes at: what has just happened. */
const START_UP_POINTS: [string, (ports: StackPorts & { pg: number }) => Promise<boolean>][] = [
  ['right after the spawn (before anything started)', async () => true],
  ['when the Temporal port opens', (ports) => portOpen(ports.temporal)],
  ['when the claim-check PostgreSQL port opens', (ports) => portOpen(ports.pg)],
  ['when the sandbox port opens', (ports) => portOpen(ports.sandbox)],
  ['while the worker process starts (its health port opens)', (ports) => portOpen(ports.health)],
];

describe("Ctrl-C during `npm start`'s start-up", () => {
  it.each(START_UP_POINTS)(
    'Ctrl-C %s: the steps left are skipped, everything started stops and the process exits within seconds',
    async (_point, reached) => {
      const { ports, dataDir, stack } = await startInItsOwnGroup('payflow-ctrl-c-start-');
      const { child, exited } = stack;
      try {
        await eventually(() => reached(ports), {
          timeoutMs: 90_000,
          intervalMs: 50,
          description: _point,
        });
        expect(stack.output()).not.toContain('Press Ctrl-C to stop.');
        process.kill(-child.pid!, 'SIGINT');
        const signalled = Date.now();
        const code = await Promise.race([exited, sleep(STOPPED_WITHIN_MS).then(() => 'still running')]);
        expect(code).not.toBe('still running');
        await eventually(
          () => processesOf(dataDir),
          (pids) => pids.length === 0,
          {
            timeoutMs: Math.max(1_000, STOPPED_WITHIN_MS - (Date.now() - signalled)),
            intervalMs: 100,
            description: 'every process of the run gone',
            returnLastOnTimeout: true,
          },
        ).then((left) => expect(left).toEqual([]));
        expect(stack.output()).not.toContain('Press Ctrl-C to stop.');
        for (const port of Object.values(ports)) expect(await portOpen(port)).toBe(false);
      } finally {
        for (const pid of processesOf(dataDir)) process.kill(pid, 'SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
