// What a command's run gives it: the starter context (connected on first use) and the run's own
// stdout, stderr, stdin and environment. The bin's run is the process's own (processIo); a caller
// may run commands inside its own process with streams of its own (runCli in ./index.ts, as the
// tests do). Each run sees only its own (AsyncLocalStorage): runs side by side share nothing.
// Its own module, so the commands and the index never import each other.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import type { ReadStream } from 'node:tty';
import type { PaymentsClient } from '../../api/client';
import { loadCliConfig } from '../../config/processes';
import { openPaymentsClient, type StarterContext } from '../connect';

export type ContextFactory = () => Promise<StarterContext>;

/** A run's stdin. */
export interface CliInput {
  /** All of it at once (a JSON file or a BVN given as '-'). */
  readAllSync(): string;
  /** All of it, as it comes (a PIN or OTP piped in). */
  readAll(): Promise<string>;
  /** stdin when it is a terminal: a secret is typed there, at a prompt that does not echo. */
  terminal(): ReadStream | undefined;
}

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: CliInput;
  /** Where the configuration is read from (connectStarters, the payments client, NOTIFY_SECRET). */
  env: NodeJS.ProcessEnv;
}

// As before the run had an io of its own: process.stdin is opened only when a secret is read from
// it, and a file given as '-' is read from fd 0 directly.
const processInput: CliInput = {
  readAllSync: () => readFileSync(0, 'utf8'),
  readAll: async () => {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  terminal: () => (process.stdin.isTTY ? process.stdin : undefined),
};

let processRun: CliIo | undefined;

/**
 * The process's own streams and environment (the bin). One object: its output state (./output.ts)
 * is the same whether a callback runs inside the bin's run or, its async context lost, outside any.
 */
export const processIo = (): CliIo =>
  (processRun ??= { stdout: process.stdout, stderr: process.stderr, stdin: processInput, env: process.env });

/** A stdin given as text up front (never a terminal). */
export const textInput = (text: string): CliInput => ({
  readAllSync: () => text,
  readAll: () => Promise.resolve(text),
  terminal: () => undefined,
});

const runs = new AsyncLocalStorage<CliIo>();

/** Runs `fn` with `io` as the current run's. */
export const withIo = <T>(io: CliIo, fn: () => Promise<T>): Promise<T> => runs.run(io, fn);

/** The current run's io; outside any run (a command's helper called directly), the process's own. */
export const currentIo = (): CliIo => runs.getStore() ?? processIo();

const envOverrides = new WeakMap<CliIo, NodeJS.ProcessEnv>();

/** The run's environment: its io's, with what the run's flags override on top (--address: ./run-options.ts). */
export const runEnv = (): NodeJS.ProcessEnv => ({ ...currentIo().env, ...envOverrides.get(currentIo()) });

/** Sets variables of the current run's environment (its flags win over the io's environment). */
export function overrideRunEnv(vars: Record<string, string>): void {
  const io = currentIo();
  envOverrides.set(io, { ...envOverrides.get(io), ...vars });
}

/** A payments client configured from the run's environment, for the commands that need no Temporal; close it after use. */
// The CLI's own configuration (loadCliConfig): the worker's settings, NOTIFY_* among them, are not its concern.
export const openRunPaymentsClient = (): PaymentsClient => openPaymentsClient(loadCliConfig(runEnv()));

/** One payments client for one command, closed afterwards. */
export async function withApi<T>(fn: (api: PaymentsClient) => Promise<T>): Promise<T> {
  const api = openRunPaymentsClient();
  try {
    return await fn(api);
  } finally {
    await api.close();
  }
}
