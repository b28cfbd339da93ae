// Reads a Prometheus text exposition (what /metrics answers) into samples, for assertions on metric
// names, labels and values.
import { eventually } from './polling';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line.trim());
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\(.)/g, '$1');
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sumOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}

export async function scrape(url: string): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  const text = await res.text();
  return { text, samples: parsePrometheus(text) };
}

/** Scrapes until `ready(samples)` holds (metrics are exported as activations and requests finish), or the deadline passes. */
export function scrapeUntil(
  url: string,
  ready: (samples: Sample[]) => boolean,
  deadlineMs = 20_000,
): Promise<{ text: string; samples: Sample[] }> {
  return eventually(
    () => scrape(url),
    (got) => ready(got.samples),
    { timeoutMs: deadlineMs, intervalMs: 250, returnLastOnTimeout: true },
  );
}

/** The SDK's worker metrics (Core's Prometheus exporter, countersTotalSuffix on) every worker exports once it ran a flow. */
export const SDK_WORKER_METRICS: readonly string[] = [
  'temporal_workflow_task_schedule_to_start_latency_seconds_bucket',
  'temporal_workflow_task_execution_latency_seconds_bucket',
  'temporal_activity_execution_latency_seconds_bucket',
  'temporal_worker_task_slots_available',
  'temporal_sticky_cache_size',
  'temporal_workflow_completed_total',
  'temporal_request_total',
];
