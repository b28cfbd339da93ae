// Starters survive a Temporal server restart: a query or an Update that fails transiently (the
// server restarting or unreachable, an RPC deadline) is retried with backoff for a while, and a
// failure that outlasts it reaches the caller as TemporalUnavailableError, never a bare SDK error.
// Updates are retried with one update id for all attempts, so the server runs the Update once.
import {
  isGrpcServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { isOutsideTaskRefusal } from '../shared/task-boundary';

/** The server could not be reached (or kept failing transiently) for the whole retry window. */
export class TemporalUnavailableError extends Error {
  constructor(
    readonly operation: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`${operation}: the Temporal server did not answer after ${attempts} attempt(s); try again later`, { cause });
    this.name = 'TemporalUnavailableError';
  }
}

export interface TransientRetryOptions {
  /** How long to keep retrying, on top of the SDK's own gRPC retries (about 20 s) (default 60 s). */
  withinMs?: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

/** gRPC status codes (grpc.status): DEADLINE_EXCEEDED 4, RESOURCE_EXHAUSTED 8, ABORTED 10, UNAVAILABLE 14. */
const TRANSIENT_CODES = new Set<number>([4, 8, 10, 14]);

/**
 * True for failures that say nothing about the call itself: the server was restarting or unreachable,
 * or a worker refused to answer a query outside a workflow task (it answers once the task ran).
 */
export function isTransientTemporalError(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  if (isOutsideTaskRefusal(err)) return true;
  if (isGrpcServiceError(err)) return TRANSIENT_CODES.has(err.code);
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  return cause !== undefined && cause !== err && isTransientTemporalError(cause);
}

export async function retryTransient<T>(
  operation: string,
  call: () => Promise<T>,
  opts: TransientRetryOptions = {},
): Promise<T> {
  const until = Date.now() + (opts.withinMs ?? 60_000);
  let delay = opts.firstDelayMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!isTransientTemporalError(err)) throw err;
      if (Date.now() + delay > until) throw new TemporalUnavailableError(operation, attempt, err);
      // Jittered (half to all of the delay): many starters retrying after one server restart do not come back in step.
      await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)));
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 5_000);
    }
  }
}

/**
 * Starts a workflow, retrying through transient failures like retryTransient. A start refused as
 * "already started" on a retry is the earlier attempt's own start that landed while its answer was
 * lost: `existing()` answers it. On the first attempt it is a real duplicate and is thrown.
 */
export async function startRetrying<H>(
  operation: string,
  start: () => Promise<H>,
  existing: () => H,
  opts: TransientRetryOptions = {},
): Promise<H> {
  let attempt = 0;
  return retryTransient(
    operation,
    async () => {
      attempt += 1;
      try {
        return await start();
      } catch (err) {
        if (attempt > 1 && err instanceof WorkflowExecutionAlreadyStartedError) return existing();
        throw err;
      }
    },
    opts,
  );
}
