// Every local activity's retries end within its schedule-to-close by a count of attempts too: SDK
// 1.24.0 drops a local activity's schedule-to-close that ends while the next attempt waits in the
// worker (test/sdk-repro/local-activity-schedule-to-close.test.ts), so the count is what stops it.
import { msToNumber } from '@temporalio/common/lib/time';
import { LOCAL_EMIT, LOCAL_GATING_READ, LOCAL_READ, attemptsWithin } from '../../src/workflows/steps/activity-options';

const LOCAL_POLICIES = { LOCAL_EMIT, LOCAL_GATING_READ, LOCAL_READ };

describe('the local activity policies', () => {
  it.each(Object.entries(LOCAL_POLICIES))('%s has a finite number of attempts', (_name, options) => {
    expect(Number.isFinite(options.retry?.maximumAttempts)).toBe(true);
    expect(options.retry!.maximumAttempts).toBeGreaterThan(0);
  });

  it.each(Object.entries(LOCAL_POLICIES).filter(([, o]) => o.scheduleToCloseTimeout !== undefined))(
    '%s: its attempts are those that start within its schedule-to-close',
    (_name, options) => {
      const retry = options.retry!;
      const expected = attemptsWithin(msToNumber(options.scheduleToCloseTimeout!), {
        initialIntervalMs: msToNumber(retry.initialInterval!),
        backoffCoefficient: retry.backoffCoefficient ?? 2,
        maximumIntervalMs: msToNumber(retry.maximumInterval!),
      });
      expect(retry.maximumAttempts).toBe(expected);
    },
  );

  it("the meter listing's read is asked 14 times over its 5 minutes (0, 1, 3, 7, 15, 31, then every 30 s to 271 s)", () => {
    expect(LOCAL_GATING_READ.retry!.maximumAttempts).toBe(14);
  });
});
