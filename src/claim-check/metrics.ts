// The claim-check's alert signal: a delete of used records (card data, a CVV, a PIN) that failed.
// On the process's meter (src/telemetry/metrics.ts): a no-op without an installed Runtime.
import type { MetricCounter, MetricMeter } from '@temporalio/common';
import { processMetricMeter } from '../telemetry/metrics';

/** {result}: records whose delete failed: `retrying` (queued again) or `gave_up` (left to their TTL). Alert on any. */
export const DISCARD_FAILURES_METRIC = 'payflow_claim_check_discard_failures';

export type DiscardFailureResult = 'retrying' | 'gave_up';

// Creating a metric calls into the native runtime: one counter per meter.
const counters = new WeakMap<MetricMeter, MetricCounter>();

export function countDiscardFailure(result: DiscardFailureResult, records: number): void {
  try {
    const meter = processMetricMeter();
    let counter = counters.get(meter);
    if (!counter) {
      counter = meter.createCounter(DISCARD_FAILURES_METRIC, undefined, 'Used claim-check records whose delete failed');
      counters.set(meter, counter);
    }
    counter.add(records, { result });
  } catch {
    // metrics never break the code they observe
  }
}
