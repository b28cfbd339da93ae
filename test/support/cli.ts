// The CLI (`npm run cli -- …`, src/starters/cli.ts) as a user runs it against a test's running
// stack, configured only through the environment, the sandbox as the service.
// - runCli (and cliAgainst's `cli`) runs one command inside the test's own process (runCli of
//   src/starters/commands/index.ts, with its own streams, stdin and environment): the same
//   parsing, output and exit codes as the bin, without a Node process to start and load for each
//   of the suites' ninety-odd commands (about 0.6 s of CPU each).
// - runCliProcess, spawnCli and cliCommand start the real bin: for what only a process shows
//   (signals, a terminal, the bin's own start). It runs the compiled CLI (dist/starters/cli.js, the
//   package's `payflow` bin) when dist/ is newer than every file in src/ (`npm test` builds before
//   jest), under tsx otherwise (about twice the CPU).
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AppConfig } from '../../src/config/config';
import type { RunningServices } from '../../src/stack/services';
import { runCli as runCliInProcess } from '../../src/starters/commands';
import { textInput } from '../../src/starters/commands/context';

export const CLI_ENTRY = join(__dirname, '..', '..', 'src', 'starters', 'cli.ts');
const COMPILED_CLI = join(__dirname, '..', '..', 'dist', 'starters', 'cli.js');
const SOURCES = join(__dirname, '..', '..', 'src');

function newestChange(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestChange(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The node arguments that start the CLI: the compiled one when it is up to date with src/, else the source under tsx. */
export function cliCommand(): string[] {
  const compiledIsCurrent = existsSync(COMPILED_CLI) && statSync(COMPILED_CLI).mtimeMs >= newestChange(SOURCES);
  return compiledIsCurrent ? [COMPILED_CLI] : ['--import', 'tsx', CLI_ENTRY];
}

export interface CliResult {
  /** The exit code (1 when it was killed or could not start). */
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment that points the CLI at `config`'s dev server, task queue and claim-check store, and at the sandbox. */
export function cliEnvironment(
  config: AppConfig,
  sandboxUrl: string,
  overrides: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: config.temporal.address,
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    CLAIM_CHECK_DATABASE_URL: config.claimCheck.databaseUrl,
    PAYMENTS_BASE_URL: sandboxUrl,
    SANDBOX_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    ...overrides,
  };
}

/**
 * The CLI against a test file's running stack (what `useServices` returns): `cli(args, stdin)` runs
 * one command to its end (in this process: runCli), `cliEnv()` is the environment it runs in (for `spawnCli`).
 */
export function cliAgainst(config: AppConfig, stack: { readonly services: RunningServices }) {
  const cliEnv = () => cliEnvironment(config, stack.services.sandboxUrl!);
  return { cliEnv, cli: (args: string[], stdin?: string) => runCli(args, { env: cliEnv(), stdin }) };
}

export interface RunCliOptions {
  env: NodeJS.ProcessEnv;
  /** What the command reads on stdin (closed after it; empty by default). */
  stdin?: string;
  /** Killed after this long. Default 60 s. */
  timeoutMs?: number;
}

/** A stream that keeps what is written to it. */
function captured(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/**
 * Runs one CLI command to its end inside this process; a non-zero exit is a result (`code`), not a
 * rejection. Past `timeoutMs` it resolves as a killed process would (code 1, with the output so
 * far); the run itself cannot be killed and ends on its own.
 */
export async function runCli(
  args: string[],
  { env, stdin = '', timeoutMs = 60_000 }: RunCliOptions,
): Promise<CliResult> {
  const stdout = captured();
  const stderr = captured();
  const result = (code: number): CliResult => ({ code, stdout: stdout.text(), stderr: stderr.text() });
  const run = runCliInProcess(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: textInput(stdin),
    env,
  }).then(
    result,
    // What would crash the bin (exit 1, the error on stderr).
    (err: unknown) => (stderr.stream.write(`${String(err)}\n`), result(1)),
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CliResult>((resolve) => {
    timer = setTimeout(() => {
      stderr.stream.write(`(cli ${args.join(' ')}: still running after ${timeoutMs} ms)\n`);
      resolve(result(1));
    }, timeoutMs);
  });
  try {
    return await Promise.race([run, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs one command to its end in a process of its own, the real bin (see cliCommand); a non-zero exit is a result. */
export function runCliProcess(
  args: string[],
  { env, stdin = '', timeoutMs = 60_000 }: RunCliOptions,
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...cliCommand(), ...args],
      { env, timeout: timeoutMs },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: unknown }).code : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
    child.stdin!.end(stdin);
  });
}

/**
 * Like runCli, but a non-zero exit rejects (for commands that must succeed), with an Error that
 * carries `code`, `stdout` and `stderr` as node's execFile error does.
 */
export async function runCliOk(args: string[], options: RunCliOptions): Promise<{ stdout: string; stderr: string }> {
  const r = await runCli(args, options);
  if (r.code !== 0) throw Object.assign(new Error(`cli ${args.join(' ')} exited ${r.code}\n${r.stderr}`), r);
  return { stdout: r.stdout, stderr: r.stderr };
}

/** A CLI command left running (e.g. one that follows a flow), with its output as it comes and its exit code. */
export function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcessWithoutNullStreams; output: () => string; exited: Promise<number> } {
  const child = spawn(process.execPath, [...cliCommand(), ...args], { env });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number>((r) => child.on('exit', (code) => r(code ?? 1)));
  return { child, output: () => out, exited };
}

/**
 * Writes the file `pay card --file` reads: card payment `ref` of 1,000.00 NGN with card `number`
 * (the sandbox's expiry and CVV), `over` on top, in a temporary folder; returns its path.
 */
export function cardPaymentFile(ref: string, number: string, over: Record<string, unknown> = {}): string {
  const file = join(mkdtempSync(join(tmpdir(), 'pay-cli-')), `${ref}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      transactionRef: ref,
      amount: 100_000,
      currency: 'NGN',
      card: { number, cvv: '123', expiryMonth: '12', expiryYear: '29' },
      customer: { name: 'Ada', email: 'ada@example.com' },
      ...over,
    }),
  );
  return file;
}
