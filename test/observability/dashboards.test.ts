// The Grafana dashboards (deploy/grafana: payflow's and the Temporal SDK's) and the Prometheus alert
// rules (deploy/prometheus) use only metrics the processes export: the business metrics of
// src/shared/flow-metrics.ts (counters with _total, histograms with _bucket/_sum/_count) and the
// Temporal SDK's own (durations in seconds, `_seconds`). The payflow dashboard shows every business
// metric; the alerts cover the ones worth waking someone for, and each group notices a vanished target.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DURATION_BUCKETS_S, METRICS } from '../../src/shared/flow-metrics';
import { SDK_WORKER_METRICS } from '../support/prometheus';

const root = join(__dirname, '..', '..');
const HISTOGRAMS = new Set<string>([METRICS.httpRequestDuration, METRICS.serviceCallDuration]);
const business = Object.values(METRICS).flatMap((name) =>
  HISTOGRAMS.has(name) ? ['_bucket', '_sum', '_count'].map((s) => name + s) : [`${name}_total`],
);
// The SDK's (Core's Prometheus exporter, countersTotalSuffix on); SDK_WORKER_METRICS is asserted by metrics-e2e.test.ts.
const sdk = [
  ...SDK_WORKER_METRICS,
  'temporal_activity_schedule_to_start_latency_seconds_bucket',
  'temporal_workflow_task_replay_latency_seconds_bucket',
  'temporal_request_latency_seconds_bucket',
  'temporal_request_total',
  'temporal_num_pollers',
  'temporal_worker_task_slots_used',
  'temporal_workflow_task_queue_poll_succeed_total',
  'temporal_workflow_task_queue_poll_empty_total',
  'temporal_activity_poll_no_task_total',
  'temporal_sticky_cache_hit_total',
  'temporal_sticky_cache_miss_total',
  'temporal_workflow_failed_total',
  'temporal_workflow_task_execution_failed_total',
  'temporal_request_failure_total',
  'temporal_workflow_endtoend_latency_seconds_bucket',
];
const known = new Set([...business, ...sdk, 'up']);
const metricsIn = (expr: string) =>
  [...expr.matchAll(/\b((?:payflow|temporal)_[a-z_]+|up)\b(?=\s*[{[(]|\s*$|\s*\)|\s*[<>=!])/g)].map((m) => m[1]);

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
  fieldConfig?: { defaults?: { unit?: string } };
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: { query: unknown }[] };
}
const readDashboard = (file: string) =>
  JSON.parse(readFileSync(join(root, 'deploy/grafana', file), 'utf8')) as Dashboard;
const dashboard = readDashboard('payflow-dashboard.json');
const sdkDashboard = readDashboard('temporal-sdk-dashboard.json');
const alerts = parse(readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
  groups: {
    name: string;
    rules: { alert: string; expr: string; labels: { severity: string }; annotations: { summary: string } }[];
  }[];
};
const rules = alerts.groups.flatMap((g) => g.rules);
const exprsOf = (d: Dashboard) => d.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
const panelExprs = exprsOf(dashboard);
const everyExpr = [...panelExprs, ...exprsOf(sdkDashboard), ...rules.map((r) => r.expr)];

describe('the Grafana dashboard', () => {
  it('the dashboard queries only exported metrics, and shows every business metric', () => {
    for (const expr of panelExprs) expect(metricsIn(expr).length).toBeGreaterThan(0);
    const used = panelExprs.flatMap(metricsIn);
    expect(used.filter((m) => !known.has(m))).toEqual([]);
    for (const name of Object.values(METRICS)) expect(used.some((m) => m.startsWith(name))).toBe(true);
    expect(dashboard.panels.filter((p) => p.type !== 'row').every((p) => (p.targets ?? []).length > 0)).toBe(true);
  });

  it('has a Temporal SDK dashboard of the SDK’s own metrics only', () => {
    const used = exprsOf(sdkDashboard).flatMap(metricsIn);
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((m) => !sdk.includes(m))).toEqual([]);
    expect(sdkDashboard.panels.filter((p) => p.type !== 'row').every((p) => (p.targets ?? []).length > 0)).toBe(true);
    expect(sdkDashboard.uid).not.toBe(dashboard.uid);
  });

  it('names durations in seconds (`_seconds`), shows them in seconds, and never queries a millisecond histogram', () => {
    for (const name of HISTOGRAMS) expect(name).toMatch(/_seconds$/);
    expect(DURATION_BUCKETS_S.every((b) => b > 0 && b <= 60)).toBe(true);
    const histograms = everyExpr.flatMap(metricsIn).filter((m) => m.endsWith('_bucket'));
    expect(histograms.length).toBeGreaterThan(5);
    for (const m of histograms) expect(m).toMatch(/_seconds_bucket$/);
    for (const d of [dashboard, sdkDashboard])
      for (const p of d.panels) {
        const isLatency = (p.targets ?? []).some((t) => t.expr.includes('_seconds_bucket'));
        if (isLatency) expect(`${p.title}: ${p.fieldConfig?.defaults?.unit}`).toBe(`${p.title}: s`);
        expect(p.fieldConfig?.defaults?.unit).not.toBe('ms');
      }
    // Thresholds on durations are seconds too: none of the old millisecond figures.
    for (const r of rules.filter((r) => r.expr.includes('_seconds_bucket'))) expect(r.expr).toMatch(/> \d{1,2}$/);
  });

  it('uses one label name per meaning: status_code for HTTP, status for a flow’s PaymentStatus', () => {
    for (const expr of everyExpr) {
      if (expr.includes('payflow_http_requests_total')) {
        expect(expr).not.toMatch(/\bstatus\s*(=|!=|=~|!~)|by \([^)]*\bstatus\b/);
      }
      if (/\bstatus_code\b/.test(expr)) expect(expr).toContain('payflow_http_requests_total');
    }
    expect(everyExpr.some((e) => e.includes('status_code=~"5.."'))).toBe(true);
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
      'temporal_workflow_task_schedule_to_start_latency_seconds_bucket',
    );
  });

  it('has in every group an absent() rule on one of its scrape jobs, so a target that disappears alerts', () => {
    const jobs = ['payflow-worker', 'payflow-webhooks', 'payflow-codec-server'];
    for (const group of alerts.groups) {
      const absent = group.rules.filter((r) => /^absent\(up\{job="([^"]+)"\}/.test(r.expr));
      expect(`${group.name}: ${absent.length > 0}`).toBe(`${group.name}: true`);
      for (const r of absent) expect(jobs).toContain(/job="([^"]+)"/.exec(r.expr)![1]);
    }
    // Every job has one.
    const covered = rules.filter((r) => r.expr.startsWith('absent(')).map((r) => /job="([^"]+)"/.exec(r.expr)![1]);
    expect([...new Set(covered)].sort()).toEqual([...jobs].sort());
  });
});
