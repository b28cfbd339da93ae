// A flow writing a search attribute its namespace no longer has (registered, then removed): the server
// rejects the worker's workflow task completion (BadSearchAttributes) and fails the task, again at every
// attempt, and the flow sits. The SDK counts it as temporal_request_failure_total
// {operation="RespondWorkflowTaskCompleted"} (status_code INVALID_ARGUMENT), not as
// temporal_workflow_task_execution_failed (the WorkflowTaskFailures alert's): the WorkflowTaskRejected
// alert (deploy/prometheus/alerts.yml, mirrored in deploy/k8s/prometheusrule.yaml) watches that series.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, makeTelemetryFilterString, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { freePort } from '../../src/http/free-port';
import { startDevServer, type DevServer } from '../../src/stack/temporal-dev-server';
import { temporalBinaries } from '../../src/stack/temporal-binaries';
import { scrapeUntil, sumOf } from '../support/prometheus';
import { eventually } from '../support/polling';

jest.setTimeout(180_000);

const root = join(__dirname, '..', '..');
interface Rule {
  alert: string;
  expr: string;
  labels: { severity: string };
}
const rulesOf = (groups: { rules: Rule[] }[]) => groups.flatMap((g) => g.rules);
const alerts = rulesOf(
  (parse(readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups,
);
const prometheusRule = rulesOf(
  (
    parse(readFileSync(join(root, 'deploy/k8s/prometheusrule.yaml'), 'utf8')) as {
      spec: { groups: { rules: Rule[] }[] };
    }
  ).spec.groups,
);

/** The metric name and label matchers of the rule's (one) selector `name{a="x",b="y"}`. */
function selectorOf(expr: string): { name: string; labels: Record<string, string> } {
  const m = /\b(temporal_[a-z_]+)\{([^}]*)\}/.exec(expr);
  if (!m) throw new Error(`no selector in ${expr}`);
  return { name: m[1], labels: Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]])) };
}

describe('the alert on workflow tasks the server rejects', () => {
  const rule = alerts.find((r) => r.alert === 'WorkflowTaskRejected');

  it('is a paging rule on the SDK series of rejected workflow task completions, the same in the PrometheusRule', () => {
    expect(rule).toBeDefined();
    expect(rule!.labels.severity).toBe('page');
    expect(selectorOf(rule!.expr)).toEqual({
      name: 'temporal_request_failure_total',
      labels: { operation: 'RespondWorkflowTaskCompleted' },
    });
    expect(prometheusRule.find((r) => r.alert === 'WorkflowTaskRejected')).toEqual(rule);
  });

  describe('against a namespace whose PaymentServiceReference was registered, then removed', () => {
    let server: DevServer;
    let metricsUrl: string;
    beforeAll(async () => {
      server = await startDevServer({ uiPort: null, searchAttributesRefreshOnRead: true });
      const removed = spawnSync(
        temporalBinaries().cli!,
        [
          'operator',
          'search-attribute',
          'remove',
          '--address',
          server.address,
          '--name',
          'PaymentServiceReference',
          '--yes',
        ],
        { encoding: 'utf8' },
      );
      expect(removed.stderr).toBe('');
      expect(removed.status).toBe(0);
      // What the alert's description has an operator run: the attribute is no longer listed.
      const listed = spawnSync(
        temporalBinaries().cli!,
        ['operator', 'search-attribute', 'list', '--address', server.address, '--namespace', 'default'],
        { encoding: 'utf8' },
      );
      expect(listed.status).toBe(0);
      expect(listed.stdout).toContain('PaymentReference');
      expect(listed.stdout).not.toContain('PaymentServiceReference');
      const port = await freePort();
      // Quiet: Core warns at every rejected completion, which is what the test brings about.
      Runtime.install({
        logger: new DefaultLogger('ERROR'),
        telemetryOptions: {
          logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) },
          metrics: { prometheus: { bindAddress: `127.0.0.1:${port}`, countersTotalSuffix: true } },
        },
      });
      metricsUrl = `http://127.0.0.1:${port}/metrics`;
    });
    afterAll(() => server?.stop());

    it("fails the flow's workflow tasks with BadSearchAttributes and moves the rule's series, not the workflow task failure metric", async () => {
      const connection = await NativeConnection.connect({ address: server.address });
      const client = new Client({ connection: await Connection.connect({ address: server.address }) });
      const worker = await Worker.create({
        connection,
        taskQueue: 'rejected',
        workflowsPath: require.resolve('./fixtures/writes-service-reference'),
      });
      const selector = selectorOf(rule!.expr);
      await worker.runUntil(async () => {
        const handle = await client.workflow.start('writesServiceReference', {
          taskQueue: 'rejected',
          workflowId: 'writes-service-reference',
          args: ['request-ref-1'],
        });
        const { samples } = await scrapeUntil(metricsUrl, (s) => sumOf(s, selector.name, selector.labels) > 0, 60_000);
        expect(sumOf(samples, selector.name, { ...selector.labels, status_code: 'INVALID_ARGUMENT' })).toBeGreaterThan(
          0,
        );
        expect(sumOf(samples, 'temporal_workflow_task_execution_failed_total')).toBe(0);
        const causes = await eventually(
          async () =>
            ((await handle.fetchHistory()).events ?? []).flatMap((e) =>
              e.workflowTaskFailedEventAttributes ? [e.workflowTaskFailedEventAttributes.cause] : [],
            ),
          (c) => c.length > 0,
          { timeoutMs: 10_000, intervalMs: 200, description: 'a WorkflowTaskFailed event' },
        );
        expect(causes).toContain(
          temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_BAD_SEARCH_ATTRIBUTES,
        );
        await handle.terminate('test over');
      });
      await connection.close();
    });
  });
});
