// `npm run bench:capacity`: issue #28 §5's measurements on the local multi-service cluster
// (docs/capacity.md). Two parts, on one stack (chaos/stack.ts with --cluster: frontend, two history
// processes, matching, worker on PostgreSQL, mTLS; sandbox, receiver, merchant endpoint; 4 worker
// processes of ours, started and stopped as the run needs them):
//
//   kinds — a few flows of every kind the chaos harness drives (chaos/kinds), no faults, one worker:
//           each kind's CPU per flow by process (ours, the Temporal services, Temporal's PostgreSQL,
//           the rest) with the idle rate taken off, and every execution started meanwhile read back
//           from the cluster: events, history bytes, payload bytes, Temporal Cloud Actions.
//   scale — vend and card payments in a closed loop at rising flows in flight, with 1, 2 and 4
//           worker processes, until throughput stops growing: flows/s, p50, CPU by process, load.
//
//   npm run bench:capacity                               # both parts, quick sizes (~10 min)
//   npm run bench:capacity -- --skip-scale --per-kind 2  # only the per-kind figures
//   npm run bench:capacity -- --workers 1,2 --levels 4,8,16 --step-s 15
import { rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../src/config/config';
import {
  closeStarters,
  connectStarters,
  openPaymentsClient,
  openPosTerminalSession,
  type StarterContext,
} from '../src/starters';
import { newNotifySecret } from '../src/notify';
import { SandboxAdmin } from '../chaos/admin';
import { ChaosMerchantEndpoint } from '../chaos/merchant-endpoint';
import { DRIVERS, type FlowRecord, type KindDriver } from '../chaos/kinds';
import { flowDeadline } from '../chaos/deadlines';
import { startChaosStack, type ChaosStack } from '../chaos/stack';
import { CLUSTER_HISTORY_SHARDS } from '../src/stack/temporal-cluster';
import { Rng, sleep } from '../chaos/util';
import { procCpuMs, ROOT, treeCpuMs } from './lib/processes';
import { addCosts, historyCost, type HistoryCost } from './lib/history-cost';
import { lineChartSvg } from './lib/svg';
import { percentile } from './lib/stats';

const program = new Command('bench:capacity')
  .option('--per-kind <n>', 'flows of each kind in the kinds part', (v) => Number.parseInt(v, 10), 4)
  .option('--workers <list>', 'worker process counts of the scale part', '1,2,4')
  .option('--levels <list>', 'flows in flight, rising', '2,4,8,16,32,64')
  .option('--step-s <n>', 'seconds measured at each level', (v) => Number.parseInt(v, 10), 20)
  .option('--skip-kinds', 'only the scale part')
  .option('--skip-scale', 'only the kinds part')
  .option('--out <file>', 'JSON report (an SVG of the scale run beside it)');

/** The processes whose CPU the bench reads, grouped the way docs/capacity.md reports them. */
export const GROUPS = {
  worker: 'our worker processes',
  server: 'Temporal services',
  postgres: "Temporal's PostgreSQL",
  other: 'sandbox, receiver, this client',
} as const;
type Group = keyof typeof GROUPS;
type Cpu = Record<string, number>;

function cpuNow(stack: ChaosStack): Cpu {
  const read = (pid: number | undefined, tree = false) => {
    if (!pid) return 0;
    try {
      return tree ? treeCpuMs(pid) : procCpuMs(pid);
    } catch {
      return 0; // stopped meanwhile
    }
  };
  const cpu: Cpu = {};
  stack.workers.forEach((w, i) => (cpu[`worker-${i + 1}`] = w.running ? read(w.child?.pid) : 0));
  for (const [name, p] of Object.entries(stack.cluster!.processes)) cpu[`temporal-${name}`] = read(p.pid);
  cpu['temporal-postgres'] = read(stack.cluster!.postgres.pid, true);
  cpu.sandbox = read(stack.services.sandbox.child?.pid);
  cpu.receiver = read(stack.services.receiver.child?.pid);
  const self = process.cpuUsage();
  cpu.client = (self.user + self.system) / 1000;
  return cpu;
}

const groupOf = (part: string): Group =>
  part.startsWith('worker-')
    ? 'worker'
    : part === 'temporal-postgres'
      ? 'postgres'
      : part.startsWith('temporal-')
        ? 'server'
        : 'other';

/** CPU spent between two snapshots, by process, less `idlePerMs` × the elapsed time (never below 0). */
export function cpuSpent(before: Cpu, after: Cpu, elapsedMs = 0, idlePerMs: Cpu = {}): Cpu {
  const out: Cpu = {};
  for (const k of Object.keys(after))
    out[k] = Math.max(0, after[k] - (before[k] ?? 0) - (idlePerMs[k] ?? 0) * elapsedMs);
  return out;
}

export function byGroup(cpu: Cpu): Record<Group, number> {
  const g: Record<Group, number> = { worker: 0, server: 0, postgres: 0, other: 0 };
  for (const [k, v] of Object.entries(cpu)) g[groupOf(k)] += v;
  return g;
}

interface Harness {
  stack: ChaosStack;
  starters: StarterContext;
  ctx: Omit<Parameters<KindDriver['run']>[0], 'rng' | 'deadline'>;
  say: (l: string) => void;
}

async function runFlow(h: Harness, driver: KindDriver, i: number, seed: number): Promise<FlowRecord> {
  const flow: FlowRecord = {
    kind: driver.kind,
    ref: `CAP${seed.toString(36)}${driver.kind.replace(/[^a-z]/g, '').slice(0, 4)}${i}`,
    variant: '',
    closed: false,
    expectations: [],
    resolvedByRequery: false,
  };
  const t = Date.now();
  try {
    await driver.run({ ...h.ctx, rng: new Rng(seed + i), deadline: flowDeadline(driver.kind, t, 120_000) }, flow, i);
  } catch (err) {
    flow.error = (err as Error).message;
  }
  flow.ms = Date.now() - t;
  return flow;
}

/** Every execution started since `since` (the flows and what they started), once all are closed, as costs. */
async function historiesSince(h: Harness, since: Date): Promise<{ executions: number; cost: HistoryCost }> {
  const client = h.starters.client;
  const query = `StartTime >= '${since.toISOString()}' AND WorkflowType != 'virtualAccountErrorLogSweepWorkflow'`;
  for (let i = 0; i < 30; i++) {
    const open = await client.workflow.count(`${query} AND ExecutionStatus = 'Running'`);
    if (open.count === 0) break;
    await sleep(2_000);
  }
  const costs: HistoryCost[] = [];
  for await (const wf of client.workflow.list({ query }))
    costs.push(historyCost(await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()));
  return { executions: costs.length, cost: addCosts(costs) };
}

async function kindsPart(h: Harness, perKind: number, seed: number) {
  // Warm-up: the worker's first flows load the workflow bundle's modules and fill its caches.
  await Promise.all(
    DRIVERS.filter((d) => d.kind === 'card' || d.kind === 'vend').map((d) => runFlow(h, d, 0, seed - 1)),
  );
  const idleBefore = cpuNow(h.stack);
  await sleep(10_000);
  const idlePerMs = cpuSpent(idleBefore, cpuNow(h.stack));
  for (const k of Object.keys(idlePerMs)) idlePerMs[k] /= 10_000;
  const rows = [];
  for (const driver of DRIVERS) {
    const since = new Date(Date.now() - 1_000);
    const before = cpuNow(h.stack);
    const t = Date.now();
    const flows = await Promise.all(
      Array.from({ length: perKind }, (_, i) => runFlow(h, driver, i, seed + rows.length * 1000)),
    );
    const elapsedMs = Date.now() - t;
    const cpu = cpuSpent(before, cpuNow(h.stack), elapsedMs, idlePerMs);
    const { executions, cost } = await historiesSince(h, since);
    const g = byGroup(cpu);
    const per = (v: number) => v / perKind;
    const row = {
      kind: driver.kind,
      flows: perKind,
      closed: flows.filter((f) => f.closed).length,
      statuses: flows.map((f) => f.status ?? f.error ?? '?'),
      executionsPerFlow: per(executions),
      eventsPerFlow: per(cost.events),
      historyBytesPerFlow: per(cost.historyBytes),
      payloadBytesPerFlow: per(cost.payloadBytes),
      actionsPerFlow: per(cost.actions),
      actionsByRulePerFlow: Object.fromEntries(Object.entries(cost.actionsBy).map(([r, n]) => [r, per(n)])),
      cpuMsPerFlow: Object.fromEntries(Object.entries(g).map(([k, v]) => [k, Math.round(per(v) * 10) / 10])),
      cpuMsPerFlowByProcess: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Math.round(per(v) * 10) / 10])),
      flowsPerSecondPerWorkerCore: g.worker > 0 ? 1000 / per(g.worker) : null,
      wallMs: elapsedMs,
    };
    h.say(
      `${row.kind}: ${row.closed}/${perKind} closed, ${row.eventsPerFlow.toFixed(1)} events, ${row.actionsPerFlow.toFixed(1)} actions, ${Math.round(row.historyBytesPerFlow)} B history per flow; CPU ms/flow ${JSON.stringify(row.cpuMsPerFlow)}`,
    );
    rows.push(row);
  }
  return { idleCpuMsPerSecond: Object.fromEntries(Object.entries(idlePerMs).map(([k, v]) => [k, v * 1000])), rows };
}

/** `n` worker processes running: the first n started, the rest stopped. */
async function setWorkers(h: Harness, n: number): Promise<void> {
  for (const [i, w] of h.stack.workers.entries()) {
    if (i < n && !w.running) await w.start();
    if (i >= n && w.running) await w.kill('SIGTERM');
  }
}

async function scaleStep(h: Harness, inFlight: number, stepMs: number, seed: number) {
  const drivers = [DRIVERS.find((d) => d.kind === 'vend')!, DRIVERS.find((d) => d.kind === 'card')!];
  const load = loadavg();
  const before = cpuNow(h.stack);
  const start = Date.now();
  const end = start + stepMs;
  const done: { at: number; ms: number; closed: boolean }[] = [];
  let n = 0;
  let cpuAtEnd: Cpu | undefined;
  const timer = setTimeout(() => (cpuAtEnd = cpuNow(h.stack)), stepMs);
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < end) {
        const i = n++;
        const f = await runFlow(h, drivers[i % 2], i, seed);
        done.push({ at: Date.now(), ms: f.ms!, closed: f.closed });
      }
    }),
  );
  clearTimeout(timer);
  const cpu = cpuSpent(before, cpuAtEnd ?? cpuNow(h.stack));
  const inWindow = done.filter((d) => d.at <= end && d.closed);
  const g = byGroup(cpu);
  return {
    inFlight,
    flowsPerSecond: inWindow.length / (stepMs / 1000),
    p50Ms: inWindow.length
      ? Math.round(
          percentile(
            inWindow.map((d) => d.ms),
            50,
          ),
        )
      : null,
    notClosed: done.filter((d) => !d.closed).length,
    coresUsed: Object.fromEntries(Object.entries(g).map(([k, v]) => [k, Math.round((v / stepMs) * 100) / 100])),
    coresUsedByProcess: Object.fromEntries(
      Object.entries(cpu).map(([k, v]) => [k, Math.round((v / stepMs) * 100) / 100]),
    ),
    loadAverageAtStart: load.map((l) => Math.round(l * 100) / 100),
    loadAverageAtEnd: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

async function scalePart(h: Harness, workerCounts: number[], levels: number[], stepMs: number, seed: number) {
  const runs = [];
  for (const workers of workerCounts) {
    await setWorkers(h, workers);
    await sleep(3_000);
    const steps = [];
    let best = 0;
    for (const level of levels) {
      const step = await scaleStep(h, level, stepMs, seed + workers * 100_000 + level * 1000);
      steps.push(step);
      h.say(
        `scale: ${workers} worker(s), ${level} in flight: ${step.flowsPerSecond.toFixed(2)} flows/s, p50 ${step.p50Ms} ms, cores ${JSON.stringify(step.coresUsed)}, load ${step.loadAverageAtEnd.join(' ')}`,
      );
      // Stops once a doubling of the load adds less than 5 %: throughput has stopped growing.
      if (steps.length >= 3 && step.flowsPerSecond < best * 1.05) break;
      best = Math.max(best, step.flowsPerSecond);
    }
    runs.push({ workers, steps, peakFlowsPerSecond: Math.max(...steps.map((s) => s.flowsPerSecond)) });
  }
  return runs;
}

async function main(): Promise<void> {
  const o = program.parse(process.argv).opts<{
    perKind: number;
    workers: string;
    levels: string;
    stepS: number;
    skipKinds?: boolean;
    skipScale?: boolean;
    out?: string;
  }>();
  const list = (s: string) => s.split(',').map((v) => Number.parseInt(v, 10));
  const workerCounts = list(o.workers);
  const say = (l: string) => process.stdout.write(`[capacity ${new Date().toISOString().slice(11, 19)}] ${l}\n`);
  const seed = Math.floor(Math.random() * 2 ** 31);
  const notifySecret = newNotifySecret();
  const merchant = new ChaosMerchantEndpoint(notifySecret, new Rng(seed));
  merchant.calm(); // a well-behaved merchant: the events cost what they cost, no redeliveries
  const merchantUrl = await merchant.start();
  const stack = await startChaosStack({
    log: say,
    env: { NOTIFY_URL: merchantUrl, NOTIFY_SECRET: notifySecret },
    cluster: true,
    workers: Math.max(...workerCounts, 1),
  });
  const config = loadConfig(stack.env);
  const starters = await connectStarters(config);
  const api = openPaymentsClient(config, stack.sandboxUrl);
  const admin = new SandboxAdmin(stack.sandboxUrl, stack.adminToken);
  const h: Harness = { stack, starters, say, ctx: { starters, api, admin, runId: seed.toString(36), posSessions: [] } };
  try {
    for (const serial_no of ['SN-0001', 'SN-0002'])
      h.ctx.posSessions.push(await openPosTerminalSession({ api }, { serial_no }));
    await setWorkers(h, 1);
    const started = new Date();
    const kinds = o.skipKinds ? undefined : await kindsPart(h, o.perKind, seed);
    const scale = o.skipScale ? undefined : await scalePart(h, workerCounts, list(o.levels), o.stepS * 1000, seed);
    const report = {
      when: started.toISOString(),
      temporal: `cluster: frontend, 2 history, matching, worker; ${CLUSTER_HISTORY_SHARDS} history shards; PostgreSQL; mTLS`,
      machine: { cpus: cpus().length, node: process.version },
      groups: GROUPS,
      kinds,
      scale,
    };
    const out = o.out ?? join(ROOT, 'bench', 'results', `capacity-${started.toISOString().slice(0, 10)}.json`);
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    if (scale)
      writeFileSync(
        out.replace(/\.json$/, '.svg'),
        lineChartSvg(
          scale.map((r) => ({
            label: `${r.workers} worker process(es)`,
            points: r.steps.map((s) => [s.inFlight, s.flowsPerSecond]),
          })),
          'Scale run on the local cluster (vend + card, 2 cores shared)',
          { x: 'payments in flight (closed loop)', y: 'payments completed per second' },
        ),
      );
    say(`report: ${out}`);
  } finally {
    await closeStarters(starters).catch(() => undefined);
    await api.close().catch(() => undefined);
    merchant.close();
    await stack.stop();
    rmSync(stack.dir, { recursive: true, force: true });
  }
}

if (require.main === module)
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(2);
    },
  );
