// chaos/deadlines.ts: how long the chaos harness waits for a flow of each kind. A deadline shorter
// than the flow's own requery ladder counts a flow that did the right thing slowly as lost (the
// cluster run of 2026-11-26: four card flows closed `failed` ~11 min after start, past a 300 s deadline).
import { BEYOND_LANE_MS, flowDeadline, ladderMs } from '../../chaos/deadlines';
import { DRIVERS } from '../../chaos/kinds';

describe('ladderMs', () => {
  it('sums the doubling waits up to and including the first capped one', () => {
    // 10 + 20 + 40 + 80 + 160 + 320 s, then 640 s capped to 600 s.
    expect(ladderMs(10_000, 600_000)).toBe(1_230_000);
    expect(ladderMs(1_000, 4_000)).toBe(1_000 + 2_000 + 4_000);
    expect(ladderMs(5_000, 5_000)).toBe(5_000);
  });

  it('refuses a ladder that never starts or is capped below its first wait', () => {
    expect(() => ladderMs(0, 1_000)).toThrow(/ladder/);
    expect(() => ladderMs(2_000, 1_000)).toThrow(/ladder/);
  });
});

describe('flowDeadline', () => {
  it('has a deadline for every kind the harness drives, and refuses an unknown kind', () => {
    for (const d of DRIVERS) expect(BEYOND_LANE_MS[d.kind]).toBeGreaterThanOrEqual(0);
    expect(() => flowDeadline('no-such-kind', 0, 1)).toThrow(/no deadline/);
  });

  it("outlasts the flows' own ladders: the card flows seen closing ~11 min after start, a lost POS remote E1's searches", () => {
    const lane = 300_000;
    expect(flowDeadline('card', 0, lane)).toBeGreaterThan(11 * 60_000 + 60_000);
    // Two 5-minute lifetimes, the driver's 20 s grace and the ladder after them.
    expect(flowDeadline('pos-remote', 0, lane)).toBe(lane + 2 * 300_000 + 20_000 + 1_230_000);
    // Each of the plan's two charges may climb its own ladder.
    expect(BEYOND_LANE_MS.recurring).toBe(2 * BEYOND_LANE_MS.card);
    expect(flowDeadline('va-credit', 1_000, lane)).toBe(1_000 + lane);
  });
});
