// The workflow of test/sdk-repro/local-activity-schedule-to-close.test.ts: one local activity with a
// schedule-to-close and an unlimited retry whose backoff stays in the worker (below the 1-minute
// localRetryThreshold), as LOCAL_EMIT was before the cap.
import { ActivityFailure, TimeoutFailure, proxyLocalActivities } from '@temporalio/workflow';

const { flaky } = proxyLocalActivities<{ flaky(): Promise<void> }>({
  scheduleToCloseTimeout: '2500ms',
  retry: { initialInterval: '1s', backoffCoefficient: 1, maximumInterval: '1s' },
});

/** 'completed', or how the local activity failed (its timeout's type, or 'failed'). */
export async function localActivityUntilScheduleToClose(): Promise<string> {
  try {
    await flaky();
    return 'completed';
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure)
      return `timed out: ${String(err.cause.timeoutType)}`;
    return 'failed';
  }
}
