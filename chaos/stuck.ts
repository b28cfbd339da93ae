// When a flow can no longer finish: its state query keeps failing for a reason of its own, or its
// workflow task keeps failing (a nondeterminism error, a workflow bug). Such a flow is reported
// `stuck` with the reason at once, instead of holding the run until its deadline (up to 40 min for
// a mandate, chaos/deadlines.ts). A stack that is restarting, down or slow is not the flow's fault:
// those failures never count (the worker kills and service kills would otherwise make flows stuck).
// The evidence must be the flow's own: a query error that names its failure, or a workflow task
// whose last try failed (recorded in history). Queries that fail without saying why (the SDK's
// "Failed to query Workflow", a child not started yet) and workflow tasks that only time out (a
// worker killed, or too loaded to finish them in time) count only once they have lasted minutes: a
// full run beside a CI run (load 15-20 on 2 cores) had 16 flows called stuck that way, and every one
// of them finished.
import { isGrpcServiceError, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { TemporalUnavailableError } from '../src/starters/temporal-retry';
import { isOutsideTaskRefusal } from '../src/shared/task-boundary';
import { DeadlineError } from './util';

export interface StuckPolicy {
  /** Consecutive failed state queries (each already retried by the starter) that make a flow stuck… */
  maxQueryFailures: number;
  /** …when they span at least this long (one refusal to answer outside a workflow task is retried). */
  minStreakMs: number;
  /** A pending workflow task past this attempt is failing, not merely timed out by a worker kill. */
  maxWorkflowTaskAttempts: number;
  /** How often a flow's workflow is described while the harness waits on it. */
  probeEveryMs: number;
  /** A streak of failed queries that do not name the flow's own failure makes it stuck only this long. */
  unexplainedStreakMs: number;
}

export const STUCK_POLICY: StuckPolicy = {
  maxQueryFailures: 5,
  minStreakMs: 10_000,
  maxWorkflowTaskAttempts: 5,
  probeEveryMs: 20_000,
  unexplainedStreakMs: 5 * 60_000,
};

export class StuckError extends Error {
  constructor(readonly reason: string) {
    super(`stuck: ${reason}`);
    this.name = 'StuckError';
  }
}

/** gRPC codes that say the server was busy or away: CANCELLED 1, DEADLINE_EXCEEDED 4, RESOURCE_EXHAUSTED 8, ABORTED 10, UNAVAILABLE 14. */
const STACK_CODES = new Set([1, 4, 8, 10, 14]);

/** The first line of an error's message (a replay error's details, a gRPC error's text). */
export function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return (text.split('\n', 1)[0] ?? '').trim().slice(0, 300);
}

/** The gRPC status code of `err` or of an error it wraps (the client's ServiceError wraps the gRPC error). */
function grpcCodeOf(err: unknown): number | undefined {
  for (let e = err, depth = 0; e !== undefined && depth < 5; depth++) {
    if (isGrpcServiceError(e)) return e.code;
    e = (e as { cause?: unknown } | null)?.cause;
  }
  return undefined;
}

/**
 * True for failures of the stack, not of the flow: the harness's own read timeout, the server away
 * or restarting, or the workflow's first task not run yet (its worker was being restarted). A
 * starter's "try again later" counts only when what it retried was the stack, not a refusal.
 */
export function isStackFailure(err: unknown): boolean {
  if (err instanceof DeadlineError) return true;
  if (isOutsideTaskRefusal(err)) return false;
  if (err instanceof TemporalUnavailableError) return true;
  if (STACK_CODES.has(grpcCodeOf(err) ?? -1)) return true;
  return /workflow (?:task )?(?:is )?not (?:ready|completed|scheduled)/i.test(firstLine(err));
}

/** The messages of `err` and of the errors it wraps (the client's "Failed to query Workflow" wraps the server's). */
function messages(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    parts.push(e instanceof Error ? e.message : String(e));
    e = (e as { cause?: unknown }).cause;
  }
  return parts.join('\n');
}

/** True when a query's error names the workflow's own failure: its code cannot run (nondeterminism, a panic, a failed activation). */
export function namesFlowFailure(err: unknown): boolean {
  return /TMPRL1100|nondetermini|activation completion failed|panicked|WorkflowTaskFailed/i.test(messages(err));
}

/** Consecutive failed state queries of one flow. */
export class QueryFailureStreak {
  private failures = 0;
  private since = 0;
  constructor(
    private readonly policy: StuckPolicy = STUCK_POLICY,
    private readonly now: () => number = Date.now,
  ) {}

  succeeded(): void {
    this.failures = 0;
  }

  /**
   * Records a failed query; answers why the flow is stuck once the streak is long enough: 10 s when
   * the error names the flow's own failure, unexplainedStreakMs otherwise (the probe meanwhile looks
   * for a failing workflow task).
   */
  failed(err: unknown): string | undefined {
    if (isStackFailure(err)) return undefined;
    if (this.failures++ === 0) this.since = this.now();
    const spanMs = this.now() - this.since;
    if (this.failures < this.policy.maxQueryFailures || spanMs < this.policy.minStreakMs) return undefined;
    if (!namesFlowFailure(err) && spanMs < this.policy.unexplainedStreakMs) return undefined;
    return `state query failed ${this.failures} times in a row over ${Math.round(spanMs / 1000)} s: ${firstLine(err)}`;
  }
}

type WorkflowTaskFailedAttributes = temporal.api.history.v1.IWorkflowTaskFailedEventAttributes;

/**
 * The cause and message of the history's last failed workflow task (later attempts are not written to
 * history), its message decoded with the client's data converter (the worker encodes and encrypts it).
 */
async function lastWorkflowTaskFailure(handle: WorkflowHandle): Promise<string | undefined> {
  const history = await handle.fetchHistory();
  // The last try that ended: failed, or timed out / completed (then the attempts are no failure's).
  let last: WorkflowTaskFailedAttributes | undefined;
  for (const e of history.events ?? []) {
    if (e.workflowTaskFailedEventAttributes) last = e.workflowTaskFailedEventAttributes;
    else if (e.workflowTaskTimedOutEventAttributes || e.workflowTaskCompletedEventAttributes) last = undefined;
  }
  if (!last) return undefined;
  const cause = temporal.api.enums.v1.WorkflowTaskFailedCause[last.cause ?? 0] ?? String(last.cause);
  const converter = handle.client?.options.loadedDataConverter;
  const decoded = converter
    ? await decodeOptionalFailureToOptionalError(converter, last.failure).catch(() => undefined)
    : undefined;
  return `${cause.replace(/^WORKFLOW_TASK_FAILED_CAUSE_/, '')}: ${firstLine(decoded ?? last.failure?.message ?? '')}`;
}

/**
 * Why the workflow is not making progress (its workflow task failing over and over), or undefined.
 * Attempts that only timed out (a killed or overloaded worker) are the stack's, not a failure.
 */
export async function workflowTaskFailing(
  handle: WorkflowHandle,
  policy: StuckPolicy = STUCK_POLICY,
): Promise<string | undefined> {
  const description = await handle.describe();
  const attempt = description.raw.pendingWorkflowTask?.attempt ?? 0;
  if (attempt <= policy.maxWorkflowTaskAttempts) return undefined;
  const failure = await lastWorkflowTaskFailure(handle);
  if (!failure) return undefined;
  return `workflow task failing (attempt ${attempt}), last recorded failure ${failure}`;
}

/**
 * Describes one flow's workflow at most every `probeEveryMs` while the harness waits on it; check()
 * throws StuckError when its workflow task keeps failing. A describe that fails (the stack restarting) is
 * no finding.
 */
export class ProgressProbe {
  private lastAt = 0;
  constructor(
    private readonly handle: () => WorkflowHandle | undefined,
    readonly policy: StuckPolicy = STUCK_POLICY,
    private readonly now: () => number = Date.now,
  ) {}

  async check(): Promise<void> {
    if (this.now() - this.lastAt < this.policy.probeEveryMs) return;
    this.lastAt = this.now();
    const handle = this.handle();
    if (!handle) return;
    const reason = await workflowTaskFailing(handle, this.policy).catch(() => undefined);
    if (reason) throw new StuckError(reason);
  }

  /** `p`, unless the workflow is found stuck first (checked every probeEveryMs while p runs). */
  async watch<T>(p: Promise<T>): Promise<T> {
    let settled = false;
    p.catch(() => undefined).finally(() => (settled = true));
    const probing = (async (): Promise<never> => {
      for (;;) {
        await new Promise((r) => setTimeout(r, Math.min(1_000, this.policy.probeEveryMs)).unref());
        if (settled) return new Promise<never>(() => undefined);
        await this.check();
      }
    })();
    return Promise.race([p, probing]);
  }
}
