// chaos/service-kills.ts: how the cluster run measures the stall around a service kill, from the
// times flows finished (docs/cluster.md). A wrong window would hide a stall or invent one.
import { stallsAround } from '../../chaos/service-kills';

describe('stallsAround', () => {
  const kill = 1_000_000;
  const restart = kill + 4_000;

  it('measures the first finishes after the kill and the restart, and the longest gap between', () => {
    const finishes = [kill - 500, kill + 300, kill + 9_000, kill + 9_500, restart + 70_000];
    expect(stallsAround(kill, restart, finishes)).toEqual({
      firstFinishAfterKillMs: 300,
      firstFinishAfterRestartMs: 5_000,
      // kill+300 → kill+9000 is 8.7 s; kill+9500 → the window's end (restart + 60 s) is 54.5 s.
      longestGapMs: restart + 60_000 - (kill + 9_500),
    });
  });

  it('a window without any finish stalls for its whole length; none after it: no first finish', () => {
    expect(stallsAround(kill, restart, [kill - 10])).toEqual({ longestGapMs: restart + 60_000 - kill });
  });

  it('ignores the order the finishes were recorded in', () => {
    const a = [kill + 2_000, kill + 30_000, kill + 100];
    expect(stallsAround(kill, restart, a)).toEqual(stallsAround(kill, restart, [...a].reverse()));
    expect(stallsAround(kill, restart, a).longestGapMs).toBe(restart + 60_000 - (kill + 30_000));
  });
});
