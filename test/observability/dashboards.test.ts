// The Grafana dashboard (deploy/grafana) and the Prometheus alert rules (deploy/prometheus) use only
// metrics the processes export: the business metrics of src/shared/flow-metrics.ts (counters with
// _total, histograms with _bucket/_sum/_count) and the Temporal SDK's own. The dashboard shows every
// business metric; the alerts cover the ones worth waking someone for.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { METRICS } from '../../src/shared/flow-metrics';
import { SDK_WORKER_METRICS } from '../support/prometheus';

const root = join(__dirname, '..', '..');
const HISTOGRAMS = new Set<string>([METRICS.httpRequestDuration, METRICS.serviceCallDuration]);
const business = Object.values(METRICS).flatMap((name) =>
  HISTOGRAMS.has(name) ? ['_bucket', '_sum', '_count'].map((s) => name + s) : [`${name}_total`],
);
// The SDK's (Core's Prometheus exporter, countersTotalSuffix on); SDK_WORKER_METRICS is asserted by metrics-e2e.test.ts.
const sdk = [
  ...SDK_WORKER_METRICS,
  'temporal_activity_schedule_to_start_latency_bucket',
  'temporal_worker_task_slots_used',
  'temporal_workflow_task_queue_poll_succeed_total',
  'temporal_workflow_task_queue_poll_empty_total',
  'temporal_activity_poll_no_task_total',
  'temporal_sticky_cache_hit_total',
  'temporal_sticky_cache_miss_total',
  'temporal_workflow_failed_total',
  'temporal_workflow_task_execution_failed_total',
  'temporal_request_failure_total',
  'temporal_workflow_endtoend_latency_bucket',
];
const known = new Set([...business, ...sdk, 'up']);
const metricsIn = (expr: string) =>
  [...expr.matchAll(/\b((?:payflow|temporal)_[a-z_]+|up)\b(?=\s*[{[(]|\s*$|\s*\)|\s*[<>=!])/g)].map((m) => m[1]);

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(readFileSync(join(root, 'deploy/grafana/payflow-dashboard.json'), 'utf8')) as {
  panels: Panel[];
  templating: { list: { query: unknown }[] };
};
const alerts = parse(readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
  groups: {
    name: string;
    rules: { alert: string; expr: string; labels: { severity: string }; annotations: { summary: string } }[];
  }[];
};
const rules = alerts.groups.flatMap((g) => g.rules);
const panelExprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);

describe('the Grafana dashboard', () => {
  it('the dashboard queries only exported metrics, and shows every business metric', () => {
    for (const expr of panelExprs) expect(metricsIn(expr).length).toBeGreaterThan(0);
    const used = panelExprs.flatMap(metricsIn);
    expect(used.filter((m) => !known.has(m))).toEqual([]);
    for (const name of Object.values(METRICS)) expect(used.some((m) => m.startsWith(name))).toBe(true);
    expect(dashboard.panels.filter((p) => p.type !== 'row').every((p) => (p.targets ?? []).length > 0)).toBe(true);
  });

  it('every alert rule is complete and uses only exported metrics', () => {
    expect(rules.length).toBeGreaterThan(5);
    for (const r of rules) {
      expect(r).toMatchObject({
        alert: expect.stringMatching(/^[A-Z][A-Za-z]+$/),
        expr: expect.any(String),
        labels: { severity: expect.stringMatching(/^(page|ticket)$/) },
        annotations: { summary: expect.any(String) },
      });
      const used = metricsIn(r.expr);
      expect(used.length).toBeGreaterThan(0);
      expect(used.filter((m) => !known.has(m))).toEqual([]);
    }
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it('alerts on an unknown outcome, webhook rejections and schedule-to-start latency', () => {
    const expr = (name: string) => rules.find((r) => r.alert === name)?.expr ?? '';
    expect(expr('PaymentOutcomeUnknown')).toContain('outcome="outcome_unknown"');
    expect(expr('WebhookSignatureRejections')).toContain('result="rejected"');
    expect(expr('WorkflowTaskScheduleToStartHigh')).toContain(
      'temporal_workflow_task_schedule_to_start_latency_bucket',
    );
  });
});
