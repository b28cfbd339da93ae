// "Heartbeat while this promise is pending": a money-moving activity keeps its HTTP call open for
// up to the client's timeout; with a short heartbeatTimeout on the activity and a heartbeat every
// third of it, a killed worker is noticed in seconds instead of at start-to-close.
// Outside an activity (a unit test calling the function directly) there is no Context: the
// promise is awaited without heartbeats.
import { Context } from '@temporalio/activity';

/** The current activity's Context, or undefined when the code does not run inside an activity. */
export function currentActivityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Default beat when the activity has no heartbeatTimeout (ms). */
const DEFAULT_BEAT_MS = 3_000;

/**
 * Awaits `work`, heartbeating (with `details`) every third of the activity's heartbeat timeout (at
 * least every 100 ms) until it settles. Not at once: the server counts the heartbeat timeout from
 * the attempt's start, so a first beat at a third of it detects a lost worker just as soon, and a
 * call that answers sooner (most calls) costs no heartbeat round trip at all (docs/performance.md).
 * The heartbeat only says "this worker is alive": the details are informational, a retry is never
 * resumed from them.
 */
export async function heartbeatWhile<T>(work: Promise<T> | (() => Promise<T>), details?: unknown): Promise<T> {
  const ctx = currentActivityContext();
  const promise = typeof work === 'function' ? work() : work;
  if (!ctx) return promise;
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  const everyMs = timeoutMs ? Math.max(100, Math.floor(timeoutMs / 3)) : DEFAULT_BEAT_MS;
  const beat = setInterval(() => ctx.heartbeat(details), everyMs);
  try {
    return await promise;
  } finally {
    clearInterval(beat);
  }
}
