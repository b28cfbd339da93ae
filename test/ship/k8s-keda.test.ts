// deploy/k8s/components/keda-backlog: the optional KEDA component, rendered with `kubectl kustomize`
// through an overlay (as a user's would be) and checked against the base it patches: the backlog
// ScaledObject replaces the CPU HPA only when the component is used, and scales the worker of the
// namespace, task queue and Worker Deployment the base configures.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { activityTaskQueue } from '../../src/shared/task-queues';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const kubectl = join(PROJECT_ROOT, '.tools', 'kubectl', 'bin', 'kubectl');
const base = join(PROJECT_ROOT, 'deploy', 'k8s');
const component = join(base, 'components', 'keda-backlog');

function render(dir: string): Obj[] {
  const r = spawnSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
}

/** An overlay in a temporary folder: kustomize takes only relative paths to the base and the component. */
function renderWithComponent(): Obj[] {
  const dir = mkdtempSync(join(tmpdir(), 'payflow-keda-'));
  try {
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      `resources: [${relative(dir, base)}]\ncomponents: [${relative(dir, component)}]\n`,
    );
    return render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const find = (docs: Obj[], kind: string, name: string) =>
  docs.find((d) => d.kind === kind && d.metadata?.name === name);

describe('the KEDA backlog component, rendered', () => {
  if (!existsSync(kubectl))
    throw new Error('kubectl is not installed: `npm test` runs `node scripts/install-tools.mjs kubectl` first');
  const plain = render(base);
  const keda = renderWithComponent();

  it('leaves the base as it is: the CPU HPA scales the worker, no KEDA object', () => {
    expect(find(plain, 'HorizontalPodAutoscaler', 'payflow-worker')).toBeDefined();
    expect(plain.filter((d) => String(d.apiVersion).startsWith('keda.sh/'))).toEqual([]);
  });

  it('with the component: a ScaledObject on the worker Deployment replaces the CPU HPA, CPU kept as a trigger', () => {
    expect(find(keda, 'HorizontalPodAutoscaler', 'payflow-worker')).toBeUndefined();
    const so = find(keda, 'ScaledObject', 'payflow-worker')!;
    expect(so.apiVersion).toBe('keda.sh/v1alpha1');
    const target = so.spec.scaleTargetRef;
    expect(find(keda, target.kind, target.name)).toBeDefined();
    expect(target.name).toBe('payflow-worker');
    const hpa = find(plain, 'HorizontalPodAutoscaler', 'payflow-worker')!;
    expect(so.spec.minReplicaCount).toBe(hpa.spec.minReplicas);
    expect(so.spec.maxReplicaCount).toBe(hpa.spec.maxReplicas);
    expect(so.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown).toEqual(hpa.spec.behavior.scaleDown);
    // The main queue's backlog and the reads queue's (docs/deployment.md, "Task queues"), then CPU.
    expect(so.spec.triggers.map((t: Obj) => t.type)).toEqual(['temporal', 'temporal', 'cpu']);
    // Every object keeps the base's part-of label.
    expect(so.metadata.labels['app.kubernetes.io/part-of']).toBe('payflow');
  });

  it('watches the namespace, task queue and Worker Deployment version the worker itself uses', () => {
    const config = find(keda, 'ConfigMap', 'payflow-config')!.data as Record<string, string>;
    const worker = find(keda, 'Deployment', 'payflow-worker')!;
    const env = Object.fromEntries(
      (worker.spec.template.spec.containers[0].env as Obj[]).filter((e) => 'value' in e).map((e) => [e.name, e.value]),
    );
    const trigger = find(keda, 'ScaledObject', 'payflow-worker')!.spec.triggers[0];
    expect(trigger.metadata).toMatchObject({
      endpoint: config.TEMPORAL_ADDRESS,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      workerDeploymentName: env.WORKER_DEPLOYMENT_NAME,
      workerDeploymentBuildId: env.WORKER_BUILD_ID,
    });
    expect(Number(trigger.metadata.targetQueueSize)).toBeGreaterThan(0);
    // The reads queue is named after the main one (src/shared/task-queues.ts), on the same version.
    const reads = find(keda, 'ScaledObject', 'payflow-worker')!.spec.triggers[1];
    expect(reads.metadata).toMatchObject({
      ...trigger.metadata,
      taskQueue: activityTaskQueue(config.TEMPORAL_TASK_QUEUE, 'reads'),
      queueTypes: 'activity',
    });
  });

  it('authenticates through a TriggerAuthentication that reads the key the worker reads, from the worker Secret', () => {
    const so = find(keda, 'ScaledObject', 'payflow-worker')!;
    const auth = find(keda, 'TriggerAuthentication', so.spec.triggers[0].authenticationRef.name)!;
    expect(auth).toBeDefined();
    const worker = find(keda, 'Deployment', 'payflow-worker')!;
    const secretRefs = (worker.spec.template.spec.containers[0].env as Obj[])
      .filter((e) => e.valueFrom?.secretKeyRef)
      .map((e) => `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`);
    for (const ref of auth.spec.secretTargetRef as Obj[]) expect(secretRefs).toContain(`${ref.name}/${ref.key}`);
  });
});
