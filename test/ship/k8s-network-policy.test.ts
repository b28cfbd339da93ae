// Issue #42 §5: deploy/k8s/network-policy.yaml, rendered with `kubectl kustomize` (the pinned kubectl
// in .tools/, `node scripts/install-tools.mjs kubectl`) and evaluated as a CNI would for ingress: for
// each port of each payflow pod, which peers the policies selecting that pod admit. Every pod is
// denied by default; the codec port admits only the Web UI's selector, the metrics ports only
// Prometheus, the receiver only the ingress controller; nothing admits a port from everywhere.
// The overlay docs/deployment.md shows for setting the selectors is rendered too.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { K8S_PROCESS } from './k8s-processes';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Selector = { matchLabels?: Record<string, string>; matchExpressions?: Obj[] };
type Port = { name?: string; containerPort: number };

const kubectl = join(PROJECT_ROOT, '.tools', 'kubectl', 'bin', 'kubectl');
const base = join(PROJECT_ROOT, 'deploy', 'k8s');
const deploymentDoc = join(PROJECT_ROOT, 'docs', 'deployment.md');

/** The base's default peers (docs/deployment.md, "Network policies", says which labels to set). */
const peer = (namespace: string, name: string) => ({
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
  podSelector: { matchLabels: { 'app.kubernetes.io/name': name } },
});
const UI_PEER = peer('temporal', 'temporal-ui');
const PROMETHEUS_PEER = peer('monitoring', 'prometheus');
const INGRESS_PEER = peer('ingress-nginx', 'ingress-nginx');
/** What a rule without `from` (or with an empty one) admits. */
const EVERYWHERE = 'everywhere';

function render(dir: string): Obj[] {
  const r = spawnSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
  if (r.status !== 0 || r.stderr) throw new Error(`kubectl kustomize ${dir}: ${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
}

/** The overlay of docs/deployment.md (the yaml block after its marker), on this base. */
function renderDocumentedOverlay(): Obj[] {
  const text = readFileSync(deploymentDoc, 'utf8');
  const block = /<!-- network-policy-overlay -->\s*```yaml\n([\s\S]*?)```/.exec(text)?.[1];
  if (!block) throw new Error('docs/deployment.md: no yaml block after <!-- network-policy-overlay -->');
  const dir = mkdtempSync(join(tmpdir(), 'payflow-netpol-'));
  try {
    writeFileSync(join(dir, 'kustomization.yaml'), block.replace('../../deploy/k8s', relative(dir, base)));
    return render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Label selector semantics: every matchLabels pair and every In/NotIn/Exists/DoesNotExist expression. */
function selects(selector: Selector, labels: Record<string, string>): boolean {
  const pairs = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const expressions = (selector.matchExpressions ?? []).every((e) => {
    const has = e.key in labels;
    if (e.operator === 'In') return has && e.values.includes(labels[e.key]);
    if (e.operator === 'NotIn') return !has || !e.values.includes(labels[e.key]);
    if (e.operator === 'Exists') return has;
    if (e.operator === 'DoesNotExist') return !has;
    throw new Error(`unknown selector operator ${e.operator}`);
  });
  return pairs && expressions;
}

const emptySelector = (s: Selector | undefined) =>
  s !== undefined && !Object.keys(s.matchLabels ?? {}).length && !(s.matchExpressions ?? []).length;

/** A peer that stands for every source: an empty selector (all pods / all namespaces) or a /0 block. */
const isEverywhere = (p: Obj) =>
  (p.ipBlock && /\/0$/.test(p.ipBlock.cidr)) ||
  (emptySelector(p.namespaceSelector) && (!p.podSelector || emptySelector(p.podSelector))) ||
  (emptySelector(p.podSelector) && !p.namespaceSelector);

const coversPort = (rule: Obj, port: Port) =>
  !rule.ports?.length ||
  (rule.ports as Obj[]).some(
    (p) =>
      p.port === undefined ||
      p.port === port.name ||
      (p.port <= port.containerPort && port.containerPort <= (p.endPort ?? p.port)),
  );

const ingressPolicies = (objects: Obj[]) =>
  objects.filter((o) => o.kind === 'NetworkPolicy' && (o.spec.policyTypes ?? ['Ingress']).includes('Ingress'));

const workloads = (objects: Obj[]) => objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
const podLabels = (w: Obj) => w.spec.template.metadata.labels as Record<string, string>;
const portsOf = (w: Obj) => w.spec.template.spec.containers.flatMap((c: Obj) => c.ports ?? []) as Port[];
const portNamed = (w: Obj, name: string) => portsOf(w).find((p) => p.name === name)!;
const workload = (objects: Obj[], name: string) => workloads(objects).find((w) => w.metadata.name === name)!;

/** The peers the policies selecting `w`'s pods admit on `port` (EVERYWHERE for a rule without sources). */
function admitted(objects: Obj[], w: Obj, port: Port): unknown[] {
  const peers: unknown[] = [];
  for (const policy of ingressPolicies(objects)) {
    if (!selects(policy.spec.podSelector, podLabels(w))) continue;
    for (const rule of policy.spec.ingress ?? []) {
      if (!coversPort(rule, port)) continue;
      const from = (rule.from ?? []) as Obj[];
      if (!from.length) peers.push(EVERYWHERE);
      for (const p of from) peers.push(isEverywhere(p) ? EVERYWHERE : p);
    }
  }
  return peers;
}

const available = existsSync(kubectl);
if (!available && process.env.CI)
  throw new Error('kubectl is not installed: `npm test` runs `node scripts/install-tools.mjs kubectl` first');

(available ? describe : describe.skip)('k8s: network policies admit each port from the one peer that needs it', () => {
  const objects = available ? render(base) : [];
  const codec = () => workload(objects, 'payflow-codec-server');

  it('selects every payflow pod with a deny-by-default ingress policy (no rules)', () => {
    expect(
      workloads(objects)
        .map((w) => w.metadata.name)
        .sort(),
    ).toEqual(Object.keys(K8S_PROCESS).sort());
    const denyAll = ingressPolicies(objects).filter((p) => !(p.spec.ingress ?? []).length);
    for (const w of workloads(objects)) {
      const selected = denyAll.some((p) => selects(p.spec.podSelector, podLabels(w)));
      expect(`${w.metadata.name}: ${selected ? 'denied by default' : 'open'}`).toBe(
        `${w.metadata.name}: denied by default`,
      );
    }
  });

  it("admits the codec server's HTTP port from the Web UI's selector only", () => {
    expect(admitted(objects, codec(), portNamed(codec(), 'http'))).toEqual([UI_PEER]);
  });

  it('admits every metrics port from the Prometheus selector only', () => {
    const scraped = workloads(objects).filter((w) => portNamed(w, 'metrics'));
    expect(scraped.map((w) => w.metadata.name).sort()).toEqual([
      'payflow-codec-server',
      'payflow-webhooks',
      'payflow-worker',
    ]);
    for (const w of scraped) expect(admitted(objects, w, portNamed(w, 'metrics'))).toEqual([PROMETHEUS_PEER]);
  });

  it("admits the webhook receiver's HTTP port from the ingress controller's selector only", () => {
    const receiver = workload(objects, 'payflow-webhooks');
    expect(admitted(objects, receiver, portNamed(receiver, 'http'))).toEqual([INGRESS_PEER]);
  });

  it("leaves the worker's health port to the kubelet (the node, which no policy selects): no pod admitted", () => {
    const worker = workload(objects, 'payflow-worker');
    expect(admitted(objects, worker, portNamed(worker, 'health'))).toEqual([]);
  });

  it('admits no port of any payflow pod from everywhere, and the codec port from nothing but the UI', () => {
    for (const w of workloads(objects))
      for (const port of portsOf(w))
        expect(`${w.metadata.name}:${port.name}: ${admitted(objects, w, port).includes(EVERYWHERE)}`).toBe(
          `${w.metadata.name}:${port.name}: false`,
        );
    // A rule may name the port or its number (4030): coversPort matches either.
    expect(admitted(objects, codec(), portNamed(codec(), 'http'))).toEqual([UI_PEER]);
  });

  it('leaves egress open (no Egress policy type): the worker reaches DNS, Temporal, PostgreSQL and the service', () => {
    const egress = objects.filter((o) => o.kind === 'NetworkPolicy' && (o.spec.policyTypes ?? []).includes('Egress'));
    expect(egress).toEqual([]);
  });

  it('takes the selectors the overlay in docs/deployment.md sets, and still admits nothing else', () => {
    const overlaid = renderDocumentedOverlay();
    const c = workload(overlaid, 'payflow-codec-server');
    const peers = admitted(overlaid, c, portNamed(c, 'http'));
    expect(peers).toHaveLength(1);
    expect(peers).not.toEqual([UI_PEER]);
    const metrics = workloads(overlaid).flatMap((w) => (portNamed(w, 'metrics') ? [w] : []));
    for (const w of metrics) {
      const p = admitted(overlaid, w, portNamed(w, 'metrics'));
      expect(p).toHaveLength(1);
      expect(p).not.toEqual([PROMETHEUS_PEER]);
    }
  });
});
