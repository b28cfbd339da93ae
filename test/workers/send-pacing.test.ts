// The money worker's own pace (src/workers/send-pacing.ts): sends start at least 1/rate apart,
// measured from when each really started, and one that would wait too long fails before sending.
import { sendPacer } from '../../src/workers/send-pacing';

describe('the money sends pace', () => {
  it('starts a burst of sends one after the other, at least 1/rate apart', async () => {
    const pace = sendPacer(50); // 20 ms apart
    // The starts the pacer gave, in call order: measured when each send was let through, not when
    // this test's callback got to run (a busy machine can delay that by more than the spacing).
    const starts = await Promise.all(Array.from({ length: 25 }, () => pace()));
    expect(starts).toHaveLength(25);
    const gaps = starts.slice(1).map((t, i) => t - starts[i]);
    // Timers may fire late, never early: the pacer waits again if one does.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(20);
    // So no second holds more than the rate's sends.
    expect(starts.filter((t) => t < starts[0] + 1000)).toHaveLength(25);
    expect(starts[24] - starts[0]).toBeGreaterThanOrEqual(24 * 20);
  });

  it('lets a send through at once when the last began more than 1/rate ago', async () => {
    const pace = sendPacer(100);
    await pace();
    await new Promise((r) => setTimeout(r, 30));
    // At once: before the event loop's next turn, so with no timer in between.
    const nextTurn = new Promise((r) => setImmediate(() => r('after a timer')));
    expect(await Promise.race([pace().then(() => 'at once'), nextTurn])).toBe('at once');
  });

  it('refuses, unsent, a send that would wait longer than the bound, and keeps pacing the others', async () => {
    const pace = sendPacer(10, 250); // 100 ms apart, at most 250 ms of waiting
    const waiting = [pace(), pace(), pace(), pace()]; // waits 0, 100, 200, 300 ms
    const [first, second, third, fourth] = await Promise.allSettled(waiting);
    expect([first.status, second.status, third.status]).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(fourth).toMatchObject({
      status: 'rejected',
      reason: { type: 'SendNotStarted', nonRetryable: false, message: expect.stringMatching(/nothing was sent/) },
    });
  });
});
