// Heartbeats while a service call is open, so that a worker killed mid-call is noticed within the
// activity's heartbeat timeout (seconds) rather than its start-to-close (src/shared/activity-timeouts.ts).
import { Context } from '@temporalio/activity';
import { HEARTBEAT_EVERY_MS } from '../shared/activity-timeouts';

/** Awaits `work`, heartbeating every `everyMs` meanwhile; outside an activity it just awaits. */
export async function heartbeatWhile<T>(work: Promise<T>, everyMs: number = HEARTBEAT_EVERY_MS): Promise<T> {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return work; // called outside an activity (a unit test, a script)
  }
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
