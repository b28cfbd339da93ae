// `npm run bench`: whole flows against the real dev server and the sandbox over HTTP, each scenario
// measured against its baseline in the same run (interleaved), reported as ratios so a noisy
// machine does not decide the result. Prints one table; figures only, no assertions.
//
//   npm run bench                          the full run (docs/performance.md)
//   npm run bench -- --quick               a short run (under 5 minutes on 2 cores)
//   npm run bench -- --scenario overhead   one scenario (overhead, direct, waiting, pos-poll, ingress, soak)
//   npm run bench -- --json FILE           the figures as JSON (and FILE's name with .svg: the latency chart)
//   npm run bench -- --worker-env K=V      our worker with a setting changed (e.g. WORKER_WORKFLOW_POLLERS=auto)
//   npm run bench -- --production-config   our processes as `npm run start:prod` runs them: default config
//                                          (log level info, schedules on) instead of the bench's tuning
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { startBenchStack, type BenchStack } from './lib/stack';
import type { Row } from './lib/stats';
import { latencyChartSvg } from './lib/svg';
import type { ScenarioResult } from './scenarios/types';
import { overhead } from './scenarios/overhead';
import { direct } from './scenarios/direct';
import { waiting } from './scenarios/waiting';
import { posPoll } from './scenarios/pos-poll';
import { ingress } from './scenarios/ingress';
import { soak } from './scenarios/soak';

// The order matters. pos-poll runs first: every other scenario leaves card payments in the
// sandbox's transaction list (A6), and before E1 a POS remote request reads up to 20 pages of it as
// its baseline; after them, each of the 500 requests would read all 20, and the scenario would
// measure A6 reads rather than polling. ingress leaves thousands of webhook holder workflows open,
// and waiting leaves 2,000 flows waiting: they run last.
export const SCENARIOS = ['pos-poll', 'overhead', 'direct', 'soak', 'ingress', 'waiting'] as const;
type Scenario = (typeof SCENARIOS)[number];

export interface BenchArgs {
  quick: boolean;
  /** Production's default configuration for our processes (not the bench's tuning). */
  productionConfig: boolean;
  json?: string;
  scenarios: Scenario[];
  /** Environment for our worker processes (tuning experiments). */
  workerEnv: Record<string, string>;
}

export function parseBenchArgs(argv: string[]): BenchArgs {
  const args: BenchArgs = { quick: false, productionConfig: false, scenarios: [...SCENARIOS], workerEnv: {} };
  const picked: Scenario[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') args.quick = true;
    else if (a === '--production-config') args.productionConfig = true;
    else if (a === '--json') {
      const file = argv[++i];
      if (!file) throw new Error('--json needs a file name');
      args.json = file;
    } else if (a === '--scenario') {
      const name = argv[++i] as Scenario;
      if (!SCENARIOS.includes(name)) throw new Error(`--scenario must be one of ${SCENARIOS.join(', ')}`);
      picked.push(name);
    } else if (a === '--worker-env') {
      const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(argv[++i] ?? '');
      if (!m) throw new Error('--worker-env needs NAME=value');
      args.workerEnv[m[1]] = m[2];
    } else
      throw new Error(
        `unknown argument ${a} (--quick, --production-config, --json FILE, --scenario NAME, --worker-env K=V)`,
      );
  }
  if (picked.length) args.scenarios = picked;
  return args;
}

/** Sizes per mode: --quick keeps the whole run under 5 minutes on 2 cores. */
export function plan(quick: boolean) {
  return quick
    ? {
        overhead: { rounds: 2, flowsPerRound: 30, concurrency: 15 },
        direct: { rounds: 2, flowsPerRound: 6, concurrency: 3, latencyMs: 200 },
        waiting: { flows: 600, resumeSample: 100, concurrency: 30 },
        posPoll: { requests: 100, holdMs: 30_000, pollIntervalMs: 2_500 },
        ingress: { rounds: 2, perRound: 150, concurrency: 20 },
        soak: { durationMs: 60_000, windowMs: 15_000, capacityShare: 0.7 },
      }
    : {
        overhead: { rounds: 6, flowsPerRound: 150, concurrency: 30 },
        direct: { rounds: 4, flowsPerRound: 15, concurrency: 5, latencyMs: 200 },
        waiting: { flows: 2_000, resumeSample: 300, concurrency: 50 },
        posPoll: { requests: 500, holdMs: 90_000, pollIntervalMs: 2_500 },
        ingress: { rounds: 6, perRound: 500, concurrency: 30 },
        soak: { durationMs: 600_000, windowMs: 60_000, capacityShare: 0.7 },
      };
}

const fmt = (n: number | null, digits = 2) =>
  n === null ? '—' : !Number.isFinite(n) ? 'n/a' : Math.abs(n) >= 1000 ? n.toFixed(0) : n.toFixed(digits);

export function renderTable(rows: Row[]): string {
  const head = ['scenario', 'metric', 'ours', 'baseline', 'ratio', 'target', 'met'];
  const lines = rows.map((r) => [
    r.scenario,
    `${r.metric} (${r.unit})`,
    fmt(r.ours),
    fmt(r.baseline),
    fmt(r.ratio),
    r.target,
    r.met === null ? '' : r.met ? 'yes' : 'NO',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(line)].join('\n');
}

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const sizes = plan(args.quick);
  const started = Date.now();
  const log = (s: string) => console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}`);
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
  log(`${args.quick ? 'quick' : 'full'} run: ${args.scenarios.join(', ')} on ${machine.cpus} × ${machine.cpuModel}`);
  const stack: BenchStack = await startBenchStack({
    log,
    posRemoteCompleteAfterMs: sizes.posPoll.holdMs,
    workerEnv: args.workerEnv,
    productionConfig: args.productionConfig,
  });
  const results: Record<string, ScenarioResult> = {};
  try {
    for (const s of args.scenarios) {
      log(`scenario ${s}…`);
      const t0 = Date.now();
      if (s === 'overhead') results[s] = await overhead(stack, sizes.overhead, log);
      else if (s === 'direct') results[s] = await direct(stack, sizes.direct, log);
      else if (s === 'waiting') results[s] = await waiting(stack, sizes.waiting, log);
      else if (s === 'pos-poll') results[s] = await posPoll(stack, sizes.posPoll, log);
      else if (s === 'ingress') results[s] = await ingress(stack, sizes.ingress, log);
      else {
        // The mix alternates vend and card: its capacity is the harmonic mean of the two.
        const of = (m: string) => results.overhead?.rows.find((r) => r.metric === m)?.ours;
        const [vend, card] = [of('vend throughput'), of('card throughput')];
        const capacity = vend && card ? 2 / (1 / vend + 1 / card) : undefined;
        results[s] = await soak(stack, { ...sizes.soak, capacity }, log);
      }
      log(`scenario ${s} done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  } finally {
    await stack.stop();
  }
  const rows = Object.values(results).flatMap((r) => r.rows);
  console.log(`\n${renderTable(rows)}\n`);
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (args.json) {
    await mkdir(dirname(args.json), { recursive: true });
    const report = {
      when: new Date().toISOString(),
      mode: args.quick ? 'quick' : 'full',
      config: args.productionConfig ? 'production defaults' : 'bench tuning',
      machine,
      workerEnv: args.workerEnv,
      sizes,
      durationS: Math.round((Date.now() - started) / 1000),
      rows,
      details: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.details ?? {}])),
    };
    await writeFile(args.json, `${JSON.stringify(report, null, 2)}\n`);
    const series = Object.values(results).flatMap((r) => r.distributions);
    const svgFile = args.json.replace(/\.json$/, '') + '.svg';
    if (series.length) await writeFile(svgFile, latencyChartSvg(series, `Latency distributions (${report.mode} run)`));
    log(`wrote ${args.json}${series.length ? ` and ${svgFile}` : ''}`);
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
