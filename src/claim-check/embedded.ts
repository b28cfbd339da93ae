// Starts a real PostgreSQL for the claim-check store next to `npm start` or the test suite
// (scripts/embedded-postgres.mjs in a child process). Production points CLAIM_CHECK_DATABASE_URL
// at its own PostgreSQL instead (docker-compose.yml runs one).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export interface EmbeddedPostgres {
  url: string;
  /** The wrapper process's pid: PostgreSQL's processes are its descendants (the bench counts their CPU). */
  pid: number;
  stop(): Promise<void>;
}

const SCRIPT = resolve(__dirname, '../../scripts/embedded-postgres.mjs');

/** `ownProcessGroup`: out of the terminal's Ctrl-C (npm start stops it after the worker); it still stops when this process ends (stdin). */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  password: string;
  database?: string;
  ephemeral?: boolean;
  startTimeoutMs?: number;
  ownProcessGroup?: boolean;
}): Promise<EmbeddedPostgres> {
  // As root, PostgreSQL runs as a `postgres` user: it must be able to enter the folder that holds
  // its data directory (ours: TEMPORAL_DATA_DIR or a test's temporary folder).
  if (process.getuid?.() === 0) {
    const parent = dirname(resolve(opts.dataDir));
    mkdirSync(parent, { recursive: true });
    const mode = statSync(parent).mode;
    if ((mode & 0o001) === 0) chmodSync(parent, (mode & 0o777) | 0o711);
  }
  const args = [
    SCRIPT,
    '--dir',
    resolve(opts.dataDir),
    '--port',
    String(opts.port),
    '--password',
    opts.password,
    '--database',
    opts.database ?? 'claimcheck',
  ];
  if (opts.ephemeral) args.push('--ephemeral');
  // stdin is a pipe the child watches: when this process ends, PostgreSQL stops too.
  const child: ChildProcess = spawn(process.execPath, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: opts.ownProcessGroup ?? false,
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString('utf8')));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`embedded PostgreSQL did not start within ${opts.startTimeoutMs ?? 60_000} ms`)),
      opts.startTimeoutMs ?? 60_000,
    );
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('READY ')) {
        clearTimeout(timer);
        done(line.slice('READY '.length).trim());
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`embedded PostgreSQL exited (${code}): ${stderr.join('').trim()}`));
    });
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.stdin!.end();
        setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
      }),
  };
}
