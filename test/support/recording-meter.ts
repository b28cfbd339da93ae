// A MetricMeter that keeps what counters were given, so a test reads the process's business metrics
// (src/telemetry/metrics.ts) without a Temporal Runtime or a Prometheus scrape.
import { noopMetricMeter, type MetricCounter, type MetricMeter, type MetricTags } from '@temporalio/common';
import { setProcessMetricMeterSource } from '../../src/telemetry/metrics';

export interface RecordingMeter {
  /** The sum added to counter `name` under exactly these label values (others may be present). */
  count(name: string, tags: MetricTags): number;
}

/** Makes a recording meter the process's meter (for the rest of the file) and returns it. */
export function useRecordingMeter(): RecordingMeter {
  const adds: { name: string; value: number; tags: MetricTags }[] = [];
  const counter = (name: string, base: MetricTags): MetricCounter => ({
    name,
    kind: 'counter',
    valueType: 'int',
    add: (value, extra) => adds.push({ name, value, tags: { ...base, ...extra } }),
    withTags: (tags) => counter(name, { ...base, ...tags }),
  });
  const meter: MetricMeter = {
    createCounter: (name) => counter(name, {}),
    createHistogram: (...args) => noopMetricMeter.createHistogram(...args),
    createGauge: (...args) => noopMetricMeter.createGauge(...args),
    withTags: () => meter,
  };
  setProcessMetricMeterSource(() => meter);
  return {
    count: (name, tags) =>
      adds
        .filter((a) => a.name === name && Object.entries(tags).every(([k, v]) => a.tags[k] === v))
        .reduce((sum, a) => sum + a.value, 0),
  };
}
