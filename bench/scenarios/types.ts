import type { Row } from '../lib/stats';

export interface ScenarioResult {
  rows: Row[];
  /** Latency samples (ms) for the chart: one series per side. */
  distributions: { label: string; latencies: number[] }[];
  /** Extra figures for the JSON (RSS samples, history shape…). */
  details?: Record<string, unknown>;
}
