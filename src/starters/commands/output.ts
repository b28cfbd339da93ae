// What every CLI command prints and how it exits, in one place (docs/cli.md, "Exit codes").
// - Exit codes come from one mapping, outcome -> code: EXIT_CODES.
// - `--json` (on every command): exactly one JSON document on stdout (the command's result, or
//   {"error": …} when it failed); every progress line goes to stderr instead.
// - A PIN or OTP is read from stdin (first line) or, on a terminal, typed at a prompt that does not
//   echo: never from argv, which ends up in shell history and process lists.
import { StarterInputError } from '../../shared/input-error';
import { isPaymentsApiError } from '../../api/errors';
import type { ReadStream } from 'node:tty';
import { currentIo, type CliIo } from './context';

/** What a command's run came to, and its exit code. */
export const EXIT_CODES = {
  /** The command did what was asked; a payment it followed succeeded. */
  success: 0,
  /** Declined or failed: the payment (or the operation) ended without moving money as asked. */
  failed: 1,
  /** Bad input: a flag, a file or a value was refused (nothing was started). */
  badInput: 2,
  /** Needs a person: the outcome is unknown, or the flow is parked for an operator. */
  needsPerson: 3,
  /** Temporal, the claim-check database or the payments service could not be reached. */
  unreachable: 4,
} as const;
export type Outcome = keyof typeof EXIT_CODES;

// Statuses by what they mean for the caller; any other status (a step on the way, an SMS send
// partially_sent whose per-number results say which failed) is a success.
const FAILED = new Set([
  'failed',
  'declined',
  'rejected',
  'refused',
  'expired',
  'cancelled',
  'not_received',
  'not_vended',
  'not_sent',
  'not_found',
  'card_data_unavailable',
  'completion_declined',
  'completion_rejected',
  'completion_not_received',
]);
const NEEDS_PERSON = new Set([
  'unknown',
  'outcome_unknown',
  'create_outcome_unknown',
  'expired_unobserved',
  'poll_error',
  'success_after_cancel',
  'still_pending',
  'handoff_failed',
  'frozen',
  'parked',
  'needs_attention',
]);

/** A follow stops at a state that waits for a person (parked: `ops resolve` settles it), with exit 3. */
export const parkedForAPerson = (state: { status: string }): boolean => outcomeOfStatus(state.status) === 'needsPerson';

/** The outcome a flow's state means: declined/failed, needs a person, or success. */
export function outcomeOfStatus(status: string): Outcome {
  if (NEEDS_PERSON.has(status) || status.startsWith('mismatch')) return 'needsPerson';
  if (FAILED.has(status)) return 'failed';
  return 'success';
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
]);

/**
 * An Update the flow's validator refused: nothing ran and nothing is in history. Validators throw a
 * plain Error, which reaches the client as an ApplicationFailure of type 'Error'; a handler that ran
 * and failed throws an ApplicationFailure of its own type (OtpRejected, CancelFailed, ...).
 */
function isRefusedUpdate(err: unknown): boolean {
  const e = err as { name?: string; cause?: { name?: string; type?: string } } | undefined;
  return e?.name === 'WorkflowUpdateFailedError' && e.cause?.name === 'ApplicationFailure' && e.cause.type === 'Error';
}

/**
 * Commander's own errors (thrown through exitOverride: a bad flag, --help, --version) carry a
 * 'commander.*' code. Other errors' codes are not always strings: a gRPC error's is a number.
 */
export function isCommanderError(err: unknown): err is { code: string; exitCode?: number } {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('commander.');
}

/** The outcome of an error a command threw. */
export function outcomeOfError(err: unknown): Outcome {
  if (err instanceof StarterInputError || isRefusedUpdate(err) || isCommanderError(err)) return 'badInput';
  const e = err as { name?: string; code?: unknown; message?: string; cause?: unknown } | undefined;
  // The worker could not answer a flow's query (the server says INVALID_ARGUMENT, e.g. its history
  // would not replay): its state is unknown, which is neither success nor a decline.
  if (e?.name === 'QueryNotRegisteredError') return 'needsPerson';
  // A follow that ran out of --timeout: the flow goes on, its outcome is not known yet.
  if (e?.name === 'FollowTimeoutError') return 'needsPerson';
  // A reference already used (DuplicateReferenceError) or naming no flow is the caller's input too.
  if (['ZodError', 'WorkflowNotFoundError', 'SyntaxError', 'DuplicateReferenceError'].includes(e?.name ?? ''))
    return 'badInput';
  if (isPaymentsApiError(err)) {
    if (err.outcomeUnknown) return 'needsPerson';
    if (err.name === 'ConnectionError' || err.name === 'TimeoutError') return 'unreachable';
    return err.status !== undefined && err.status >= 400 && err.status < 500 ? 'badInput' : 'failed';
  }
  // Temporal's gRPC connection (TransportError; UNAVAILABLE = 14, DEADLINE_EXCEEDED = 4) and sockets (pg, undici).
  if (e?.name === 'TransportError' || e?.code === 14 || e?.code === 4) return 'unreachable';
  if (typeof e?.code === 'string' && UNREACHABLE_CODES.has(e.code)) return 'unreachable';
  if (e?.name === 'AggregateError' && /ECONNREFUSED/.test(String((err as AggregateError).errors?.[0])))
    return 'unreachable';
  if (e?.cause && e.cause !== err) {
    const inner = outcomeOfError(e.cause);
    if (inner !== 'failed') return inner;
  }
  if (/ECONNREFUSED|Failed to connect|UNAVAILABLE|connection refused/i.test(e?.message ?? '')) return 'unreachable';
  return 'failed';
}

interface OutputState {
  json: boolean;
  outcome: Outcome;
  document?: { value: unknown };
  /** Under --json, the lines printed so far (the document of a command that has no structured result). */
  lines: string[];
  /** A command that streams JSON lines (notify listen --json) has no closing document. */
  streamed?: boolean;
}
// One state per run (its io, ./io.ts): a run's --json and outcome never reach another run.
const states = new WeakMap<CliIo, OutputState>();

function current(): { io: CliIo; state: OutputState } {
  const io = currentIo();
  let state = states.get(io);
  if (!state) states.set(io, (state = { json: false, outcome: 'success', lines: [] }));
  return { io, state };
}
const write = (stream: NodeJS.WritableStream, line: string): void => void stream.write(`${line}\n`);

/** `--json`: progress to stderr, one document to stdout at the end (writeDocument). */
export function setJsonOutput(on: boolean): void {
  current().state.json = on;
}
export const jsonOutput = (): boolean => current().state.json;

/** A progress line: stdout for a person, stderr under --json (stdout holds only the document). */
export function progress(line: string): void {
  const { io, state } = current();
  if (state.json) {
    state.lines.push(line);
    write(io.stderr, line);
  } else write(io.stdout, line);
}

/**
 * The command's result. Without --json: `text` (lines) if given, else the value as indented JSON;
 * under --json it becomes the one document printed at the end (the last result wins).
 */
export function printResult(value: unknown, text?: string | string[]): void {
  const { io, state } = current();
  if (state.json) {
    state.document = { value };
    return;
  }
  const lines = text === undefined ? [JSON.stringify(value, null, 2)] : Array.isArray(text) ? text : [text];
  for (const l of lines) write(io.stdout, l);
}

/** One JSON line on stdout now, for a command that streams (it then prints no closing document). */
export function streamJson(value: unknown): void {
  const { io, state } = current();
  state.streamed = true;
  write(io.stdout, JSON.stringify(value));
}

/** Records what the run came to; the most serious outcome so far decides the exit code (exitCode). */
export function settle(outcome: Outcome): void {
  const { state } = current();
  if (EXIT_CODES[outcome] > EXIT_CODES[state.outcome]) state.outcome = outcome;
}

/** The run's exit code: its most serious outcome. */
export const exitCode = (): number => EXIT_CODES[current().state.outcome];

/** A flow's final (or current) state as the result: the exit code follows its status. */
export function settleState(s: { status: string }): void {
  settle(outcomeOfStatus(s.status));
}

/** A command that threw: the message on stderr, the exit code from the error; under --json an error document. */
export function fail(err: unknown, opts: { printed?: boolean } = {}): void {
  const { io, state } = current();
  const outcome = outcomeOfError(err);
  const message = err instanceof Error ? err.message : String(err);
  if (!opts.printed) write(io.stderr, message);
  settle(outcome);
  if (state.json) {
    const issues = err instanceof StarterInputError ? err.issues : undefined;
    state.document = {
      value: { error: { outcome, exitCode: EXIT_CODES[outcome], message, ...(issues ? { issues } : {}) } },
    };
  }
}

/** Under --json, the one document on stdout: the result, or {exitCode, lines} for a command that printed only lines. */
export function writeDocument(): void {
  const { io, state } = current();
  if (!state.json || state.streamed) return;
  const value = state.document ? state.document.value : { exitCode: EXIT_CODES[state.outcome], lines: state.lines };
  write(io.stdout, JSON.stringify(value, null, 2));
}

/**
 * A PIN or OTP: refused from argv (`given`, the value of --pin/--otp), read from stdin's first line
 * when it is not a terminal, typed at a prompt that does not echo when it is.
 */
export async function readSecret(what: 'PIN' | 'OTP' | 'code', given: string | undefined): Promise<string> {
  const flag = `--${what.toLowerCase()}`;
  if (given !== undefined)
    throw new StarterInputError('payment step', [
      {
        field: flag,
        rule: `is not accepted: a ${what} on the command line stays in shell history and process lists; pipe it on stdin (printf '%s\\n' "$${what}" | …) or type it at the prompt`,
      },
    ]);
  const stdin = currentIo().stdin;
  const terminal = stdin.terminal();
  const value = terminal ? await promptHidden(what, terminal) : firstLine(await stdin.readAll());
  if (!value)
    throw new StarterInputError('payment step', [
      { field: what, rule: 'is required (on stdin, or typed at the prompt)' },
    ]);
  return value;
}

const firstLine = (text: string): string => text.split(/\r?\n/)[0].trim();

/** Raw mode: each key is read as typed and nothing is echoed; Enter ends, Backspace erases, Ctrl-C cancels. */
function promptHidden(what: string, stdin: ReadStream): Promise<string> {
  const { stderr } = currentIo();
  // Echo off before the prompt shows: what is typed once the prompt is on screen is never echoed.
  stdin.setRawMode(true);
  stderr.write(`${what} (not shown): `);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const done = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          done();
          return resolve(value.trim());
        }
        if (ch === '\u0003') {
          done();
          return reject(new StarterInputError('payment step', [{ field: what, rule: 'was not given (cancelled)' }]));
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
