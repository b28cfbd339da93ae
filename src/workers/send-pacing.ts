// The money queue's rate, held by each process as well as by the server. The server's limit
// (maxTaskQueueActivitiesPerSecond) holds the deployment's rate over time, but its bucket lets one
// second of sends through at once, and the tasks its partitions held before the limit reached them
// too: after an outage the service would see bursts of two to three times the agreed rate
// (test/workers/task-queue-layout.test.ts measured them). So each money worker starts its sends one
// after the other, at least 1/rate apart, measured from when each one really started.
//
// The wait happens before the activity's code, so before anything is sent, and it is bounded: the
// queue's slots are at most one second of the rate (src/config/task-queues.ts), so no send waits
// longer than about a second, well inside the in-flight margin its start-to-close allows
// (src/shared/activity-timeouts.ts). A send that would wait longer is refused unsent.
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/** The longest a send may wait for its turn; past it the attempt fails before sending anything. */
export const MAX_PACING_WAIT_MS = 5_000;

/**
 * `pace()` resolves when the caller may send: at least `1000 / perSecond` ms after the previous send
 * began. Its value is that start (`performance.now()`), the instant the spacing is measured from.
 */
export function sendPacer(perSecond: number, maxWaitMs = MAX_PACING_WAIT_MS): () => Promise<number> {
  const spacingMs = 1000 / perSecond;
  let lastStart = -Infinity;
  let queued = 0;
  let turn: Promise<unknown> = Promise.resolve();
  return () => {
    // The sends queued ahead, each a spacing apart, say how long this one would wait.
    if ((queued + 1) * spacingMs > maxWaitMs + spacingMs)
      return Promise.reject(
        ApplicationFailure.retryable(
          `money send not started: ${queued} sends are waiting for the rate of ${perSecond}/s; nothing was sent`,
          'SendNotStarted',
        ),
      );
    queued += 1;
    const mine = turn.then(async () => {
      // A timer may fire a little early by the monotonic clock: wait again until the spacing is whole.
      for (
        let wait = lastStart + spacingMs - performance.now();
        wait > 0;
        wait = lastStart + spacingMs - performance.now()
      )
        await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
      lastStart = performance.now();
      queued -= 1;
      return lastStart;
    });
    turn = mine;
    return mine;
  };
}

/** The activity interceptor that paces every activity this worker starts (the money queue's). */
export function pacedActivities(perSecond: number): ActivityInterceptorsFactory {
  const pace = sendPacer(perSecond);
  return () => ({
    inbound: {
      async execute(input, next) {
        await pace();
        return next(input);
      },
    },
  });
}
