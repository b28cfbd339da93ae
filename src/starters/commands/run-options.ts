// The options that shape a run rather than its command (issue #39 §4), named as the Temporal CLI
// names them:
// - on every command: `--profile`, `--address`, `--namespace`, the Temporal connection. Each
//   overrides its environment variable (TEMPORAL_PROFILE, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE);
//   what neither sets comes from the envconfig profile, as before (src/config/temporal-profile.ts).
// - on every command that starts a flow: `--no-follow` (print the workflow id and return, exit 0)
//   and `--timeout <duration>` (stop following after it, exit 3: the flow goes on, its outcome is
//   not known yet).
// The values are the run's own (keyed by its io, as ./output.ts keeps --json): runs side by side
// share nothing.
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import type { Command } from 'commander';
import { durationMs } from '../../shared/duration';
import { StarterInputError } from '../../shared/input-error';
import { followUntilDone } from '../progress';
import { currentIo, overrideRunEnv, type CliIo } from './context';
import { jsonOutput, printResult, progress, settleState } from './output';

/** Flag → the environment variable it overrides. */
export const CONNECTION_FLAGS = {
  profile: 'TEMPORAL_PROFILE',
  address: 'TEMPORAL_ADDRESS',
  namespace: 'TEMPORAL_NAMESPACE',
} as const;
type ConnectionFlag = keyof typeof CONNECTION_FLAGS;

interface RunOptions {
  follow: boolean;
  /** --timeout, as given and in milliseconds. */
  timeout?: { text: string; ms: number };
}

const runs = new WeakMap<CliIo, RunOptions>();

function current(): RunOptions {
  const io = currentIo();
  let options = runs.get(io);
  if (!options) runs.set(io, (options = { follow: true }));
  return options;
}

/** Commands whose `--address` is the Temporal address (`va create` has an `--address` of its own: the customer's). */
const connectionAddress = new WeakSet<Command>();
/** Commands that start a flow, and whether each follows it unless told (mandate start follows only with --follow). */
const flowStarters = new WeakMap<Command, { followByDefault: boolean }>();

/** `--profile`, `--namespace` and (where the command has none of its own) `--address`, on every leaf command. */
export function addConnectionOptions(command: Command): void {
  if (command.commands.length > 0) {
    for (const sub of command.commands) addConnectionOptions(sub);
    return;
  }
  command
    .option('--profile <name>', 'Temporal envconfig profile (over TEMPORAL_PROFILE)')
    .option('--namespace <namespace>', 'Temporal namespace (over TEMPORAL_NAMESPACE)');
  if (command.options.some((o) => o.long === '--address')) return;
  command.option('--address <host:port>', 'Temporal frontend address (over TEMPORAL_ADDRESS)');
  connectionAddress.add(command);
}

/** Marks a command that starts a flow: `--no-follow` (unless it has one) and `--timeout <duration>`. */
export function startsFlow(command: Command, { followByDefault = true } = {}): Command {
  flowStarters.set(command, { followByDefault });
  if (!command.options.some((o) => o.long === '--no-follow'))
    command.option('--no-follow', 'print the workflow id once the flow has started and return (exit 0)');
  return command.option('--timeout <duration>', 'stop following after this long, e.g. 30s or 5m (exit 3)');
}

const ADDRESS = /^[^\s:/]+:\d{1,5}$|^\[[0-9a-fA-F:.]+\]:\d{1,5}$/;

/** Reads the run's options from the command about to run (commander's preAction); a bad value is refused by its flag. */
export function takeRunOptions(command: Command): void {
  const o = command.opts<{
    profile?: string;
    address?: string;
    namespace?: string;
    follow?: boolean;
    timeout?: string;
  }>();
  const options = current();
  const issues: { field: string; rule: string }[] = [];
  for (const flag of Object.keys(CONNECTION_FLAGS) as ConnectionFlag[]) {
    if (flag === 'address' && !connectionAddress.has(command)) continue;
    const value = o[flag];
    if (value === undefined) continue;
    if (value.trim() === '') issues.push({ field: `--${flag}`, rule: 'must not be empty' });
    else if (flag === 'address' && !ADDRESS.test(value)) issues.push({ field: '--address', rule: 'must be host:port' });
    else overrideRunEnv({ [CONNECTION_FLAGS[flag]]: value });
  }
  const starter = flowStarters.get(command);
  if (starter) {
    // With both --follow and --no-follow (mandate start) commander leaves it unset: the command's default.
    options.follow = o.follow ?? starter.followByDefault;
    if (o.timeout !== undefined) {
      const ms = timeoutMs(o.timeout);
      if (ms === undefined) issues.push({ field: '--timeout', rule: 'must be a duration such as 30s, 5m or 1h' });
      else options.timeout = { text: o.timeout, ms };
    }
  }
  if (issues.length > 0) throw new StarterInputError('command line', issues);
}

function timeoutMs(text: string): number | undefined {
  try {
    const ms = durationMs(text);
    return ms > 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A flow has started: the `started <id>` line (or `line`). Under --no-follow that line is the
 * command's result ({workflowId, runId} under --json) and the answer is false: do not follow.
 */
export function startedFlow(
  handle: Pick<WorkflowHandle, 'workflowId'> & { firstExecutionRunId?: string },
  line?: string,
): boolean {
  const text = line ?? `started ${handle.workflowId}`;
  if (current().follow) {
    progress(text);
    return true;
  }
  printResult({ workflowId: handle.workflowId, runId: handle.firstExecutionRunId ?? null, followed: false }, text);
  return false;
}

/** The follow ran out of --timeout: the flow goes on; exit 3 (its outcome is not known yet). */
export class FollowTimeoutError extends Error {
  override readonly name = 'FollowTimeoutError';
  constructor(
    readonly workflowId: string,
    timeout: string,
  ) {
    super(`still running after --timeout ${timeout}: ${workflowId} goes on; its outcome is not known yet`);
  }
}

/**
 * `work` (a follow of flow `workflowId`) within the run's --timeout: past it, FollowTimeoutError
 * (exit 3) and `onTimeout` tells the follow to stop at its next look. No --timeout: `work` as is.
 */
export async function withinTimeout<T>(workflowId: string, work: Promise<T>, onTimeout?: () => void): Promise<T> {
  const limit = current().timeout;
  if (limit === undefined) return work;
  work.catch(() => undefined); // a flow that fails after the deadline is no unhandled rejection
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new FollowTimeoutError(workflowId, limit.text));
    }, limit.ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** followUntilDone within the run's --timeout (none: until the flow ends, as before). */
export function followFlow<S>(
  handle: WorkflowHandle,
  stateQuery: QueryDefinition<S>,
  render: (state: S) => string,
  opts: { intervalMs?: number; out?: (line: string) => void; until?: (state: S) => boolean } = {},
): Promise<unknown> {
  let timedOut = false;
  const followed = followUntilDone(handle, stateQuery, render, {
    ...opts,
    until: (s) => timedOut || (opts.until?.(s) ?? false),
  });
  return withinTimeout(handle.workflowId, followed, () => (timedOut = true));
}

/** A result's text: its line, then the value as indented JSON. */
export const lineAndJson = (line: string, value: unknown): string[] => [line, JSON.stringify(value, null, 2)];
/** A result's text: none, so its JSON only. */
export const asJson = (): undefined => undefined;

/**
 * Follows a flow (within --timeout) until it ends or `until` holds, printing each new state, then
 * prints where it stopped as the command's result (`text`; by default its line and its JSON) and
 * settles the exit code by its status.
 */
export async function followToResult<S extends { status: string }, R extends S = S>(
  handle: WorkflowHandle,
  stateQuery: QueryDefinition<S>,
  render: (state: S) => string,
  opts: {
    until?: (state: S) => boolean;
    /** The result's text without --json; one that answers undefined prints the JSON only. */
    text?: (result: R) => string | string[] | undefined;
    /** Under --json, the last line goes to progress (stderr) too, as the `pay` commands print it. */
    echoLast?: boolean;
  } = {},
): Promise<R> {
  const result = (await followFlow(handle, stateQuery, render, {
    intervalMs: 250,
    out: progress,
    until: opts.until,
  })) as R;
  if (opts.echoLast && jsonOutput()) progress(render(result));
  printResult(result, opts.text ? opts.text(result) : lineAndJson(render(result), result));
  settleState(result);
  return result;
}
