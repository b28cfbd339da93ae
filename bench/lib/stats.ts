// The bench's arithmetic, in one place and unit-tested (test/bench/stats.test.ts): percentiles,
// summaries, ratios of ours to the baseline measured in the same run, and whether a target is met.

/** The p-th percentile (0..100) of `values` by the nearest-rank method; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be between 0 and 100, got ${p}`);
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

export interface Summary {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): Summary {
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    count: values.length,
    min: values.length ? Math.min(...values) : NaN,
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : NaN,
    mean: values.length ? sum / values.length : NaN,
  };
}

/** ours ÷ baseline; NaN when the baseline is 0 or either side is not a number. */
export function ratio(ours: number, baseline: number): number {
  if (!Number.isFinite(ours) || !Number.isFinite(baseline) || baseline === 0) return NaN;
  return ours / baseline;
}

/** Flows per second over a window of `ms` milliseconds. */
export function throughput(flows: number, ms: number): number {
  return ms > 0 ? flows / (ms / 1000) : NaN;
}

/**
 * A target on a row's value (the ratio when the row has a baseline, the figure itself otherwise):
 * `>=` for "at least" (throughput), `<=` for "at most" (latency, memory, jitter).
 */
export interface Target {
  op: '>=' | '<=' | '<';
  value: number;
}

export function targetMet(value: number, target: Target | undefined): boolean | null {
  if (!target) return null;
  if (!Number.isFinite(value)) return false;
  if (target.op === '>=') return value >= target.value;
  if (target.op === '<=') return value <= target.value;
  return value < target.value;
}

export const describeTarget = (t: Target | undefined): string => (t ? `${t.op} ${t.value}` : '—');

/** One line of the bench's table and JSON: `ours`, `baseline`, `ratio`, `target`, `met`. */
export interface Row {
  scenario: string;
  metric: string;
  unit: string;
  ours: number;
  baseline: number | null;
  ratio: number | null;
  target: string;
  met: boolean | null;
  note?: string;
}

/**
 * Builds a row. With a baseline, the target applies to the ratio ours ÷ baseline; without one, to
 * `ours` itself (e.g. RSS in MiB, jitter in ms).
 */
export function row(
  scenario: string,
  metric: string,
  unit: string,
  ours: number,
  baseline: number | null,
  target?: Target,
  note?: string,
): Row {
  const r = baseline === null ? null : ratio(ours, baseline);
  const judged = r === null ? ours : r;
  return {
    scenario,
    metric,
    unit,
    ours,
    baseline,
    ratio: r,
    target: describeTarget(target),
    met: targetMet(judged, target),
    ...(note ? { note } : {}),
  };
}

/**
 * Interleaving: the order of the two sides in round `i` (ours first in even rounds, the baseline
 * first in odd ones), so warm-up, GC and a noisy neighbour fall on both sides alike.
 */
export function interleave<T>(round: number, ours: T, baseline: T): [T, T] {
  return round % 2 === 0 ? [ours, baseline] : [baseline, ours];
}

/** Gaps between consecutive timestamps (ms) minus the expected interval: how late each poll came. */
export function lateness(timestamps: readonly number[], expectedMs: number): number[] {
  const sorted = [...timestamps].sort((a, b) => a - b);
  const out: number[] = [];
  for (let i = 1; i < sorted.length; i++) out.push(sorted[i] - sorted[i - 1] - expectedMs);
  return out;
}
