// soak: mixed flows (vend and card, alternating) arriving at 70% of the capacity the overhead
// scenario measured, for a fixed time. Reported per window: p99 latency and the worker's RSS; the
// drift is the last window against the first (a leak shows as growth that does not level off).
import { openLoop, topErrors } from '../lib/load';
import { row, summarize } from '../lib/stats';
import type { BenchStack } from '../lib/stack';
import { meterStackCpu, noCpu, stackCpuRows } from '../lib/stack-cpu';
import { oursCard, oursVend } from './flows';
import type { ScenarioResult } from './types';

export async function soak(
  stack: BenchStack,
  o: { durationMs: number; windowMs: number; capacityShare: number; capacity?: number },
  log: (s: string) => void,
): Promise<ScenarioResult> {
  // Without an overhead run first, a conservative rate (what 2 cores sustained in earlier runs).
  const capacity = o.capacity && Number.isFinite(o.capacity) ? o.capacity : 10;
  const rate = Math.max(1, capacity * o.capacityShare);
  const rssByWindow: number[] = [];
  let nextWindow = 0;
  log(`  soak: ${rate.toFixed(1)} flows/s for ${o.durationMs / 1000} s`);
  const cpu = noCpu();
  const r = await meterStackCpu(stack, { worker: stack.ours, receiver: stack.receiver }, cpu, () =>
    openLoop(
      rate,
      o.durationMs,
      (i) => (i % 2 === 0 ? oursVend(stack) : oursCard(stack)),
      (elapsed) => {
        if (elapsed >= nextWindow) {
          rssByWindow.push(stack.ours.rssMiB());
          nextWindow += o.windowMs;
        }
      },
    ),
  );
  rssByWindow.push(stack.ours.rssMiB());
  const windows: { window: number; p99: number; p50: number; flows: number }[] = [];
  for (let w = 0; w * o.windowMs < o.durationMs; w++) {
    const lat = r.timeline.filter((t) => t.at >= w * o.windowMs && t.at < (w + 1) * o.windowMs).map((t) => t.latency);
    const s = summarize(lat);
    windows.push({ window: w + 1, p99: s.p99, p50: s.p50, flows: lat.length });
  }
  const first = windows[0];
  const last = windows[windows.length - 1];
  const note = topErrors(r.errors).join(' | ') || undefined;
  return {
    rows: [
      row(
        'soak',
        `p99 latency, last window ÷ first (${o.windowMs / 1000} s windows)`,
        'ms',
        last.p99,
        first.p99,
        undefined,
        note,
      ),
      row('soak', 'worker RSS, end ÷ start', 'MiB', rssByWindow[rssByWindow.length - 1], rssByWindow[0]),
      row('soak', 'completed flows', 'flows', r.latencies.length, null),
      row('soak', 'failed flows', 'flows', r.errors.length, null, { op: '<=', value: 0 }),
      // No baseline side: ours alone, per flow of the vend/card mix.
      ...stackCpuRows('soak', 'vend/card mix', { cpu, flows: r.latencies.length }),
    ],
    distributions: [],
    details: { ratePerS: rate, windows, rssByWindow },
  };
}
