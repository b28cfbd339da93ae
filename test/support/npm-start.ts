// `npm start` (src/stack/start.ts) as its own process on free ports, as a user runs it.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from '../../src/http/free-port';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';

/** The ports the stack listens on, each free when taken. */
export interface StackPorts {
  temporal: number;
  ui: number;
  sandbox: number;
  webhook: number;
  codec: number;
  metrics: number;
  workerMetrics: number;
  health: number;
}

export async function freeStackPorts(): Promise<StackPorts> {
  return {
    temporal: await freePort(),
    ui: await freePort(),
    sandbox: await freePort(),
    webhook: await freePort(),
    codec: await freePort(),
    metrics: await freePort(),
    workerMetrics: await freePort(),
    health: await freePort(),
  };
}

/** The environment that puts the stack on `ports` with its dev server's data in `dataDir`, `extra` on top. */
export function stackEnvironment(
  ports: StackPorts,
  dataDir: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
    TEMPORAL_UI_PORT: String(ports.ui),
    SANDBOX_PORT: String(ports.sandbox),
    WEBHOOK_PORT: String(ports.webhook),
    CODEC_PORT: String(ports.codec),
    METRICS_PORT: String(ports.metrics),
    WORKER_METRICS_PORT: String(ports.workerMetrics),
    HEALTH_PORT: String(ports.health),
    TEMPORAL_DATA_DIR: dataDir,
    ...extra,
  };
}

export interface StackProcess {
  child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves at its `Press Ctrl-C to stop.` banner; rejects if it exits first. */
  ready: Promise<void>;
  /** Its exit code. */
  exited: Promise<number | null>;
}

/**
 * Runs `npm start` (`node --import tsx src/stack/start.ts`) with `env` over this process's environment; `detached` gives it a
 * process group of its own, as a shell gives a foreground job.
 */
export function startStackProcess(env: Record<string, string>, options: { detached?: boolean } = {}): StackProcess {
  // As `npm start` runs it: tsx as a loader in the one process (tsx's CLI, a parent process, would
  // SIGKILL the stack when it does not confirm a Ctrl-C within 60 ms, as happens on a loaded machine).
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/stack/start.ts'], {
    cwd: PROJECT_ROOT,
    detached: options.detached ?? false,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (out.includes('Press Ctrl-C to stop.')) {
        clearInterval(timer);
        resolve();
      }
    }, 100);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`stack exited early (${code}):\n${out}`));
    });
  });
  ready.catch(() => undefined);
  return { child, output: () => out, ready, exited };
}

/** Whether something accepts a TCP connection on the local `port`. */
export const portOpen = (port: number): Promise<boolean> =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
