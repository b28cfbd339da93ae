// Heartbeats while a long call (a money-moving HTTP request) is open, so that a worker that dies
// mid-call is noticed within the activity's heartbeat timeout (seconds) instead of its
// start-to-close timeout (src/shared/activity-timeouts.ts), and the workflow can requery at once.
//
// Outside an activity (a unit test calling the function directly) there is no context: the work
// is simply awaited.
import { Context } from '@temporalio/activity';
import { HEARTBEAT_EVERY_MS } from '../shared/activity-timeouts';

/** Heartbeat every `everyMs` while `work` is pending; resolves or rejects as `work` does. */
export async function heartbeatWhile<T>(work: Promise<T>, everyMs: number = HEARTBEAT_EVERY_MS): Promise<T> {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return work;
  }
  const beat = () => {
    try {
      ctx.heartbeat();
    } catch {
      // A heartbeat that cannot be recorded must not fail the call it accompanies.
    }
  };
  beat();
  const timer = setInterval(beat, Math.max(10, everyMs));
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
