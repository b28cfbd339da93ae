// The bench's arithmetic (bench/lib/stats.ts): the figures in docs/performance.md are only as
// right as these. No timing here: the bench measures, tests check the maths.
import { interleave, lateness, percentile, ratio, row, summarize, targetMet, throughput } from '../../bench/lib/stats';
import { parseBenchArgs, plan, renderTable, SCENARIOS } from '../../bench/run';
import { latencyChartSvg } from '../../bench/lib/svg';

describe('percentiles by the nearest-rank method', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it('picks the smallest value with at least p% of the values at or below it', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0)).toBe(1);
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 51)).toBe(30);
  });

  it('does not depend on the order of the samples and does not reorder them', () => {
    const shuffled = [5, 1, 4, 2, 3];
    expect(percentile(shuffled, 60)).toBe(3);
    expect(shuffled).toEqual([5, 1, 4, 2, 3]);
  });

  it('is NaN for no samples and refuses a percentile outside 0..100', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], -1)).toThrow(RangeError);
  });

  it('summarizes count, min, p50, p90, p99, max and mean', () => {
    expect(summarize(hundred)).toEqual({ count: 100, min: 1, p50: 50, p90: 90, p99: 99, max: 100, mean: 50.5 });
  });
});

describe('ratios against the baseline and targets', () => {
  it('divides ours by the baseline, NaN when the baseline is 0 or missing', () => {
    expect(ratio(15.4, 26.1)).toBeCloseTo(0.59, 2);
    expect(ratio(1.86, 1.01)).toBeCloseTo(1.84, 2);
    expect(ratio(1, 0)).toBeNaN();
    expect(ratio(NaN, 1)).toBeNaN();
  });

  it('counts throughput as flows per second of the window', () => {
    expect(throughput(150, 10_000)).toBe(15);
    expect(throughput(1, 0)).toBeNaN();
  });

  it('judges "at least" and "at most" targets, and a NaN as not met', () => {
    expect(targetMet(0.9, { op: '>=', value: 0.9 })).toBe(true);
    expect(targetMet(0.89, { op: '>=', value: 0.9 })).toBe(false);
    expect(targetMet(1.1, { op: '<=', value: 1.1 })).toBe(true);
    expect(targetMet(499, { op: '<', value: 500 })).toBe(true);
    expect(targetMet(500, { op: '<', value: 500 })).toBe(false);
    expect(targetMet(NaN, { op: '<=', value: 1 })).toBe(false);
    expect(targetMet(1, undefined)).toBeNull();
  });

  it('a row with a baseline is judged on the ratio; one without on its own figure', () => {
    const withBaseline = row('overhead', 'vend throughput', 'flows/s', 15.4, 26.1, { op: '>=', value: 0.9 });
    expect(withBaseline).toMatchObject({ ours: 15.4, baseline: 26.1, target: '>= 0.9', met: false });
    expect(withBaseline.ratio).toBeCloseTo(0.59, 2);
    const alone = row('waiting', 'peak RSS', 'MiB', 900, null, { op: '<=', value: 1024 });
    expect(alone).toMatchObject({ ours: 900, baseline: null, ratio: null, target: '<= 1024', met: true });
    expect(row('soak', 'completed', 'flows', 10, null)).toMatchObject({ target: '—', met: null });
  });
});

describe('interleaving and poll lateness', () => {
  it('puts ours first in even rounds and the baseline first in odd ones', () => {
    expect(interleave(0, 'ours', 'base')).toEqual(['ours', 'base']);
    expect(interleave(1, 'ours', 'base')).toEqual(['base', 'ours']);
    expect(interleave(4, 'ours', 'base')).toEqual(['ours', 'base']);
  });

  it('measures each gap between consecutive polls against the interval, in time order', () => {
    expect(lateness([5000, 0, 2600, 7500], 2500)).toEqual([100, -100, 0]);
    expect(lateness([1000], 2500)).toEqual([]);
  });
});

describe('the bench command line and its report', () => {
  it('reads --quick, --json FILE and --scenario NAME, and refuses anything else', () => {
    expect(parseBenchArgs([])).toEqual({
      quick: false,
      productionConfig: false,
      scenarios: [...SCENARIOS],
      workerEnv: {},
    });
    expect(parseBenchArgs(['--production-config'])).toMatchObject({ productionConfig: true });
    expect(
      parseBenchArgs(['--quick', '--json', 'out.json', '--scenario', 'ingress', '--worker-env', 'WORKER_TUNER=fixed']),
    ).toEqual({
      quick: true,
      productionConfig: false,
      json: 'out.json',
      scenarios: ['ingress'],
      workerEnv: { WORKER_TUNER: 'fixed' },
    });
    expect(() => parseBenchArgs(['--worker-env', 'lower=1'])).toThrow(/NAME=value/);
    expect(() => parseBenchArgs(['--scenario', 'nope'])).toThrow(/must be one of/);
    expect(() => parseBenchArgs(['--json'])).toThrow(/needs a file/);
    expect(() => parseBenchArgs(['--fast'])).toThrow(/unknown argument/);
  });

  it('sizes the quick run below the full one in every scenario', () => {
    const quick = plan(true);
    const full = plan(false);
    expect(quick.overhead.rounds * quick.overhead.flowsPerRound).toBeLessThan(
      full.overhead.rounds * full.overhead.flowsPerRound,
    );
    expect(quick.waiting.flows).toBeLessThan(full.waiting.flows);
    expect(full.waiting.flows).toBe(2_000); // as issue #25's outside harness measured
    expect(full.posPoll.requests).toBe(500);
    expect(full.soak.durationMs).toBe(600_000);
  });

  it('prints one line per row with ours, baseline, ratio, target and whether it was met', () => {
    const text = renderTable([
      row('overhead', 'vend throughput', 'flows/s', 15.4, 26.1, { op: '>=', value: 0.9 }),
      row('waiting', 'peak RSS', 'MiB', 900, null, { op: '<=', value: 1024 }),
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/scenario\s+metric\s+ours\s+baseline\s+ratio\s+target\s+met/);
    expect(lines[2]).toMatch(/overhead\s+vend throughput \(flows\/s\)\s+15\.40\s+26\.10\s+0\.59\s+>= 0\.9\s+NO/);
    expect(lines[3]).toMatch(/waiting\s+peak RSS \(MiB\)\s+900\.00\s+—\s+—\s+<= 1024\s+yes/);
  });

  it('draws one line per latency series, baselines dashed, with each p50 in the legend', () => {
    const svg = latencyChartSvg(
      [
        { label: 'vend: ours', latencies: [100, 200, 300] },
        { label: 'vend: baseline', latencies: [50, 100, 150] },
      ],
      'chart',
    );
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain('vend: ours (p50 200 ms)');
    expect(svg).toContain('vend: baseline (p50 100 ms)');
    expect(svg.match(/stroke-dasharray/g)).toHaveLength(2); // the baseline's line and its legend
  });
});
