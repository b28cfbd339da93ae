// Load shapes: a closed loop (n flows, at most `concurrency` at once, as fast as they complete)
// and an open loop (arrivals at a fixed rate, whatever the latency), each timing every flow.

export interface LoadResult {
  /** Per-flow latency (ms) of the flows that succeeded. */
  latencies: number[];
  wallMs: number;
  errors: string[];
  /** Completion time (ms since the start) of each successful flow, with its latency. */
  timeline: { at: number; latency: number }[];
}

export async function closedLoop(
  n: number,
  concurrency: number,
  flow: (i: number) => Promise<unknown>,
): Promise<LoadResult> {
  const result: LoadResult = { latencies: [], wallMs: 0, errors: [], timeline: [] };
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const s = performance.now();
      try {
        await flow(i);
        const latency = performance.now() - s;
        result.latencies.push(latency);
        result.timeline.push({ at: performance.now() - t0, latency });
      } catch (err) {
        result.errors.push(err instanceof Error ? err.message : String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
  result.wallMs = performance.now() - t0;
  return result;
}

export async function openLoop(
  ratePerS: number,
  durationMs: number,
  flow: (i: number) => Promise<unknown>,
  onTick?: (elapsedMs: number) => void,
): Promise<LoadResult> {
  const result: LoadResult = { latencies: [], wallMs: 0, errors: [], timeline: [] };
  const t0 = performance.now();
  const inFlight = new Set<Promise<void>>();
  const gapMs = 1000 / ratePerS;
  let i = 0;
  let lastTick = 0;
  while (performance.now() - t0 < durationMs) {
    const due = t0 + i * gapMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const s = performance.now();
    const p: Promise<void> = flow(i++).then(
      () => {
        const latency = performance.now() - s;
        result.latencies.push(latency);
        result.timeline.push({ at: performance.now() - t0, latency });
      },
      (err: unknown) => {
        result.errors.push(err instanceof Error ? err.message : String(err));
      },
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (onTick && performance.now() - t0 - lastTick >= 1000) {
      lastTick = performance.now() - t0;
      onTick(lastTick);
    }
  }
  await Promise.all(inFlight);
  result.wallMs = performance.now() - t0;
  return result;
}

/** The most common error messages, for the report. */
export function topErrors(errors: string[], max = 3): string[] {
  const counts = new Map<string, number>();
  for (const e of errors) counts.set(e.slice(0, 160), (counts.get(e.slice(0, 160)) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, max)
    .map(([e, c]) => `${c}× ${e}`);
}
