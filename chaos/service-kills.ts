// The cluster's own chaos (`npm run test:cluster`, docs/cluster.md): kill -9, mid-run, of one history
// process, the matching process and the frontend, each `perService` times in turn, each started again on
// its ports after a short outage. Each kill is recorded with how long the flows stalled around it,
// measured from the times flows finished (the harness's only view: it cannot see inside the server).
import type { ClusterProcessName, TemporalCluster } from '../src/stack/temporal-cluster';
import { sleep, type Rng } from './util';

/** The process of each service the chaos kills: history-1 of the two history processes. */
const TARGETS: Record<'history' | 'matching' | 'frontend', ClusterProcessName> = {
  history: 'history-1',
  matching: 'matching',
  frontend: 'frontend',
};
type Service = keyof typeof TARGETS;

export interface ServiceKill {
  service: Service;
  process: ClusterProcessName;
  pid?: number;
  /** ISO time of the SIGKILL. */
  at: string;
  /** Flows finished when it was killed. */
  flowsFinished: number;
  /** SIGKILL → the new process listening on the same port. */
  downMs: number;
  /** SIGKILL → the first flow that finished after it (any flow: the other history process keeps its shards). */
  firstFinishAfterKillMs?: number;
  /** Restart → the first flow that finished after it. */
  firstFinishAfterRestartMs?: number;
  /** The longest time without a finished flow from the kill to 60 s past the restart. */
  longestGapMs?: number;
}

export class ServiceKiller {
  readonly kills: ServiceKill[] = [];
  private readonly killAtMs: number[] = [];
  private readonly restartAtMs: number[] = [];
  private stopped = false;
  private loop?: Promise<void>;
  constructor(
    private readonly cluster: TemporalCluster,
    private readonly rng: Rng,
    private readonly opts: {
      totalFlows: number;
      perService: number;
      finished: () => number;
      log: (l: string) => void;
    },
  ) {}

  start(): void {
    const order = Array.from({ length: this.opts.perService }, () => Object.keys(TARGETS) as Service[]).flat();
    // Half a step off the worker kills' marks (chaos.ts), inside the run, never in its drained tail.
    const marks = order.map((_, i) => Math.floor(((i + 0.5) * this.opts.totalFlows * 0.9) / order.length));
    this.loop = (async () => {
      for (let i = 0; i < order.length && !this.stopped;) {
        if (this.opts.finished() < marks[i]) {
          await sleep(250);
          continue;
        }
        await sleep(this.rng.int(0, 3_000));
        await this.killOne(order[i]);
        i++;
      }
    })();
  }

  private async killOne(service: Service): Promise<void> {
    const proc = this.cluster.processes[TARGETS[service]];
    const t = Date.now();
    const pid = proc.pid;
    const flowsFinished = this.opts.finished();
    await proc.kill('SIGKILL');
    this.opts.log(`kill -9 ${proc.name} (pid ${pid}, flows finished: ${flowsFinished})`);
    // Long enough for the ring and the clients to notice it gone; short enough to come back mid-run.
    await sleep(this.rng.int(1_000, 5_000));
    for (let attempt = 0; ; attempt++) {
      try {
        await proc.start();
        break;
      } catch (err) {
        this.opts.log(`${proc.name} restart failed (${(err as Error).message}); again`);
        await proc.kill('SIGKILL');
        if (attempt > 5) throw err;
        await sleep(2_000);
      }
    }
    const downMs = Date.now() - t;
    this.opts.log(`${proc.name} is back (pid ${proc.pid}) after ${downMs} ms`);
    this.killAtMs.push(t);
    this.restartAtMs.push(t + downMs);
    this.kills.push({ service, process: proc.name, pid, at: new Date(t).toISOString(), flowsFinished, downMs });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    for (const p of Object.values(this.cluster.processes)) if (!p.running) await p.start();
  }

  /** Kills per service, for the report. */
  counts(): Record<Service, number> {
    const out = { history: 0, matching: 0, frontend: 0 };
    for (const k of this.kills) out[k.service]++;
    return out;
  }

  /** The kills with their stalls, from the epoch-ms times at which flows finished. */
  withStalls(finishTimes: readonly number[]): ServiceKill[] {
    return this.kills.map((k, i) => ({ ...k, ...stallsAround(this.killAtMs[i], this.restartAtMs[i], finishTimes) }));
  }
}

/**
 * How long flows stalled around one kill, from the epoch-ms times at which flows finished: the first
 * finish after the kill and after the restart, and the longest time without a finish from the kill
 * to 60 s past the restart (the window's edges count as finishes, so a window without any gives its length).
 */
export function stallsAround(
  killAt: number,
  restartAt: number,
  finishTimes: readonly number[],
): Pick<ServiceKill, 'firstFinishAfterKillMs' | 'firstFinishAfterRestartMs' | 'longestGapMs'> {
  const sorted = [...finishTimes].sort((a, b) => a - b);
  const firstAfterKill = sorted.find((f) => f >= killAt);
  const firstAfterRestart = sorted.find((f) => f >= restartAt);
  const windowEnd = restartAt + 60_000;
  const edges = [killAt, ...sorted.filter((f) => f > killAt && f < windowEnd), windowEnd];
  let longestGapMs = 0;
  for (let j = 1; j < edges.length; j++) longestGapMs = Math.max(longestGapMs, edges[j] - edges[j - 1]);
  return {
    ...(firstAfterKill !== undefined ? { firstFinishAfterKillMs: firstAfterKill - killAt } : {}),
    ...(firstAfterRestart !== undefined ? { firstFinishAfterRestartMs: firstAfterRestart - restartAt } : {}),
    longestGapMs,
  };
}
