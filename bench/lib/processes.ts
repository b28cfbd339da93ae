// Processes the bench starts (our worker, the baseline worker, the sandbox, the webhook receiver):
// each a single node process (`node --import tsx …`), so its pid, CPU time and RSS are its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..', '..');
const CLOCK_TICKS_PER_S = 100; // Linux USER_HZ

export interface BenchProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** User + system CPU time so far, in ms (from /proc). */
  cpuMs(): number;
  /** Resident set size now, in MiB (from /proc). */
  rssMiB(): number;
  stop(): Promise<void>;
}

export function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / CLOCK_TICKS_PER_S;
}

/** ppid of every live process, from /proc. */
function parents(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      byPid.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  return byPid;
}

/**
 * CPU of a process and all its descendants, in ms: each live one's own time, plus the time of the
 * children each has reaped (cutime, cstime): PostgreSQL's backends come and go with connections.
 */
export function treeCpuMs(root: number): number {
  const ppid = parents();
  let total = 0;
  const visit = (pid: number) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
      total += ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / CLOCK_TICKS_PER_S;
    } catch {
      return;
    }
    for (const [child, parent] of ppid) if (parent === pid) visit(child);
  };
  visit(root);
  return total;
}

export function procRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * Starts `node --import tsx <script>` (or `node <script>` when compiled) with `env` and resolves once a line of its output matches
 * `ready`, or the `ready` probe answers true (its output is kept for the error message otherwise).
 */
export async function startNodeProcess(
  name: string,
  script: string,
  env: Record<string, string>,
  ready: RegExp | (() => Promise<boolean>),
  opts: { timeoutMs?: number; nodeArgs?: string[]; compiled?: boolean } = {},
): Promise<BenchProcess> {
  const loader = opts.compiled ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...loader, resolve(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(chunk.toString());
    if (tail.length > 40) tail.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} not ready within ${opts.timeoutMs ?? 120_000} ms:\n${tail.join('')}`)),
      opts.timeoutMs ?? 120_000,
    );
    const onData = (chunk: Buffer) => {
      if (ready instanceof RegExp && (ready.test(chunk.toString()) || ready.test(tail.join('')))) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        resolveReady();
      }
    };
    if (ready instanceof RegExp) {
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
    } else {
      const probe = async () => {
        if (await ready().catch(() => false)) {
          clearTimeout(timer);
          resolveReady();
        } else if (child.exitCode === null) setTimeout(() => void probe(), 200);
      };
      void probe();
    }
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${tail.join('')}`));
    });
  });
  child.removeAllListeners('exit');
  const pid = child.pid!;
  return {
    name,
    child,
    pid,
    cpuMs: () => procCpuMs(pid),
    rssMiB: () => procRssMiB(pid),
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak and the samples. */
export function sampleRss(p: BenchProcess, everyMs = 1000): { stop(): { peakMiB: number; samples: number[] } } {
  const samples: number[] = [];
  const take = () => {
    try {
      samples.push(p.rssMiB());
    } catch {
      /* the process ended */
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { peakMiB: Math.max(...samples), samples };
    },
  };
}
