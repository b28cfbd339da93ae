// `npm start`'s worker: src/workers/main.ts as a process of its own (one node process, so its pid,
// memory and CPU are the worker's alone), configured by the environment like any worker process, with
// an IPC channel over which it reports that it runs. It has a process group of its own: a terminal's
// Ctrl-C reaches only `npm start`, which stops it first (SIGTERM, then waits for it to exit). If
// `npm start` dies, however it dies, the channel closes and the worker stops gracefully by itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { WorkerStartedMessage } from '../workers/main';
import { PROJECT_ROOT } from './temporal-binaries';

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** Its `worker-started` report (metrics and health addresses, Schedules, tuning); rejects if it exits first. */
  started: Promise<WorkerStartedMessage>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL if it has not exited after `killAfterMs`; resolves when it has exited. */
  stop(killAfterMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Under tsx (`npm start`): the TypeScript entry through tsx; compiled: dist/workers/main.js. Either
 * way with the stack-capture preload, as production starts it (src/shared/workflow-stack-traces.ts):
 * under tsx, tsx's require hook comes first so that the preload's TypeScript loads, in the worker
 * threads too.
 */
function workerEntry(): string[] {
  const workers = resolve(__dirname, '..', 'workers');
  return __filename.endsWith('.ts')
    ? [
        '--require',
        'tsx/cjs',
        '--require',
        resolve(workers, 'workflow-stack-traces.ts'),
        '--import',
        'tsx',
        resolve(workers, 'main.ts'),
      ]
    : ['--require', resolve(workers, 'workflow-stack-traces.js'), resolve(workers, 'main.js')];
}

export function spawnWorkerProcess(env: NodeJS.ProcessEnv): WorkerProcess {
  const child = spawn(process.execPath, workerEntry(), {
    cwd: PROJECT_ROOT,
    env,
    // Its log lines go to the stack's stdout/stderr as they are (pino JSON, "name":"worker").
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  if (child.pid === undefined) throw new Error('the worker process could not be spawned');
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const started = new Promise<WorkerStartedMessage>((done, fail) => {
    child.on('message', (message: WorkerStartedMessage) => {
      if (message?.type === 'worker-started') done(message);
    });
    void exited.then(({ code, signal }) =>
      fail(new Error(`the worker process exited (${code ?? signal}) before it started`)),
    );
  });
  started.catch(() => undefined);
  return {
    child,
    pid: child.pid,
    started,
    exited,
    stop: async (killAfterMs) => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}
