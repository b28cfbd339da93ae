// The workers of one version from one value (scripts/render-worker-version.mjs, docs/operations.md
// "Deploy, ramp, make current, drain, sunset"): two versions rendered side by side and applied with
// the base through kustomize (which refuses two objects of one name), each Deployment, scaler and
// PodDisruptionBudget finding its own version's pods only; the worker controller's resource checked
// against the controller's own CRD schema; and one version value in every shipped manifest.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { crdSchema, schemaErrors } from './crd-schema';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const kubectl = join(PROJECT_ROOT, '.tools', 'kubectl', 'bin', 'kubectl');
const script = join(PROJECT_ROOT, 'scripts', 'render-worker-version.mjs');
const fixtures = join(PROJECT_ROOT, 'test', 'ship', 'fixtures', 'temporal-worker-controller');
const version = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function renderRun(args: string[]) {
  return spawnSync(process.execPath, [script, ...args], { cwd: PROJECT_ROOT, encoding: 'utf8' });
}

/** `node scripts/render-worker-version.mjs <args>`, parsed. */
function render(...args: string[]): Obj[] {
  const r = renderRun(args);
  if (r.status !== 0) throw new Error(`render-worker-version ${args.join(' ')}: ${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
}

/** The base and the rendered versions in one kustomization, rendered by `kubectl kustomize`. */
function kustomizeWithBase(versions: string[]): Obj[] {
  const dir = mkdtempSync(join(tmpdir(), 'payflow-versions-'));
  try {
    const files = versions.map((text, i) => {
      writeFileSync(join(dir, `version-${i}.yaml`), text);
      return `version-${i}.yaml`;
    });
    const base = relative(dir, join(PROJECT_ROOT, 'deploy', 'k8s'));
    writeFileSync(join(dir, 'kustomization.yaml'), `resources: [${[base, ...files].join(', ')}]\n`);
    const r = spawnSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`kubectl kustomize: ${r.stderr}`);
    return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);
const container = (d: Obj) => d.spec.template.spec.containers[0] as Obj;
const envValue = (d: Obj, name: string) => (container(d).env as Obj[]).find((e) => e.name === name)?.value as string;
const workerDeployments = (docs: Obj[]) =>
  docs.filter((d) => d.kind === 'Deployment' && d.metadata.labels['app.kubernetes.io/name'] === 'payflow-worker');

describe('one version, one set of workers', () => {
  if (!existsSync(kubectl))
    throw new Error('kubectl is not installed: `npm test` runs `node scripts/install-tools.mjs kubectl` first');
  const ids = ['1.0.0', '1.1.0'];

  it.each(['hpa', 'keda'])(
    'renders two build ids side by side (%s): unique names, each version finds its own pods',
    (scaler) => {
      const texts = ids.map((id) => renderRun(['--build-id', id, '--scaler', scaler]).stdout);
      const docs = texts.flatMap((t) => parseAllDocuments(t).map((d) => d.toJS() as Obj));
      const keys = docs.map((d) => `${d.kind}/${d.metadata.name}`);
      expect(new Set(keys).size).toBe(keys.length);
      const scalerKind = scaler === 'keda' ? 'ScaledObject' : 'HorizontalPodAutoscaler';
      expect(keys.sort()).toEqual(
        ids
          .flatMap((id) => [
            `Deployment/payflow-worker-${id}`,
            `${scalerKind}/payflow-worker-${id}`,
            `PodDisruptionBudget/payflow-worker-${id}`,
          ])
          .sort(),
      );
      // With the base, through kustomize: no clash with the base's objects or each other's.
      const applied = kustomizeWithBase(texts);
      const deployments = workerDeployments(applied);
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
        'payflow-worker',
        ...ids.map((id) => `payflow-worker-${id}`),
      ]);
      for (const id of ids) {
        const d = applied.find((x) => x.kind === 'Deployment' && x.metadata.name === `payflow-worker-${id}`)!;
        const podsOf = (selector: Record<string, string>) =>
          deployments.filter((x) => matches(selector, x.spec.template.metadata.labels)).map((x) => x.metadata.name);
        // Its selector, its PDB's: its own pods only (not the other version's, nor the base's).
        expect(podsOf(d.spec.selector.matchLabels)).toEqual([`payflow-worker-${id}`]);
        expect(d.spec.template.metadata.labels['app.kubernetes.io/version']).toBe(id);
        const pdb = applied.find(
          (x) => x.kind === 'PodDisruptionBudget' && x.metadata.name === `payflow-worker-${id}`,
        )!;
        expect(podsOf(pdb.spec.selector.matchLabels)).toEqual([`payflow-worker-${id}`]);
        const scale = applied.find((x) => x.kind === scalerKind && x.metadata.name === `payflow-worker-${id}`)!;
        expect(scale.spec.scaleTargetRef.name).toBe(`payflow-worker-${id}`);
        // The image tag, WORKER_BUILD_ID and KEDA's build id: the one value.
        expect(container(d).image).toBe(`payflow-app:${id}`);
        expect(envValue(d, 'WORKER_BUILD_ID')).toBe(id);
        expect(envValue(d, 'WORKER_DEPLOYMENT_NAME')).toBe('payflow');
        if (scaler === 'keda') {
          const temporal = (scale.spec.triggers as Obj[]).filter((t) => t.type === 'temporal');
          expect(temporal.map((t) => t.metadata.workerDeploymentBuildId)).toEqual([id, id]);
        }
        // The metrics keep one job name across versions (the PodMonitor and the alerts select it).
        expect(d.spec.template.metadata.labels['app.kubernetes.io/name']).toBe('payflow-worker');
      }
    },
  );

  it('takes the image repository from --image, and by default the package version as the build id', () => {
    const [d] = render('--image', 'registry.example.com/payflow-app');
    expect(d.metadata.name).toBe(`payflow-worker-${version}`);
    expect(container(d).image).toBe(`registry.example.com/payflow-app:${version}`);
    expect(envValue(d, 'WORKER_BUILD_ID')).toBe(version);
    // As docs/deployment.md runs it.
    const [documented] = render('--build-id', '1.1.0', '--image', 'registry.example.com/payflow-app');
    expect(container(documented).image).toBe('registry.example.com/payflow-app:1.1.0');
  });

  it('refuses a build id that cannot name a Kubernetes object or tag an image, in one line', () => {
    for (const bad of ['1.0.0+3f2c1ab09e41', 'Release_1', '-1']) {
      const r = renderRun([`--build-id=${bad}`]);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining(`--build-id must be`)]);
    }
    expect(renderRun(['--scaler', 'cpu']).stderr.trim()).toBe('--scaler must be hpa or keda: got "cpu"');
  });
});

describe('the worker controller alternative', () => {
  const crd = (name: string) => parse(readFileSync(join(fixtures, `temporal.io_${name}.yaml`), 'utf8'));
  const crds: Record<string, Obj> = {
    WorkerDeployment: crd('workerdeployments'),
    TemporalWorkerDeployment: crd('temporalworkerdeployments'),
    Connection: crd('connections'),
  };
  const validate = (resource: Obj) =>
    schemaErrors(crdSchema(crds[resource.kind] as never, resource.apiVersion), resource);

  it.each(['WorkerDeployment', 'TemporalWorkerDeployment'])(
    'renders a %s the controller’s CRD schema accepts',
    (kind) => {
      const docs = render('--build-id', '1.1.0', '--controller-kind', kind);
      const resource = docs.find((d) => d.kind === kind)!;
      expect(crds[kind].spec.names.kind).toBe(kind);
      expect(validate(resource)).toEqual([]);
      expect(resource.spec.workerOptions.unsafeCustomBuildID).toBe('1.1.0');
      expect(container(resource).image).toBe('payflow-app:1.1.0');
      // The controller's rules in CEL, checked here: Progressive has steps, each pause at least 30 s.
      expect(resource.spec.rollout.steps.length).toBeGreaterThan(0);
      for (const s of resource.spec.rollout.steps) expect(s.pauseDuration).toMatch(/^([3-9]\d+s|\d+[mh])$/);
      // The controller's variables become the worker's: one deployment name and build id, the controller's.
      expect(envValue(resource, 'WORKER_BUILD_ID')).toBeUndefined();
      expect(container(resource).command.slice(0, 2)).toEqual(['/bin/sh', '-c']);
      expect(container(resource).command[2]).toContain('WORKER_DEPLOYMENT_NAME="$TEMPORAL_DEPLOYMENT_NAME"');
      expect(container(resource).command[2]).toContain('WORKER_BUILD_ID="$TEMPORAL_WORKER_BUILD_ID"');
    },
  );

  it('renders the Connection it refers to, valid too', () => {
    const docs = render('--controller', '--build-id', '1.1.0');
    const conn = docs.find((d) => d.kind === 'Connection')!;
    expect(docs.find((d) => d.kind === 'WorkerDeployment')!.spec.workerOptions.connectionRef.name).toBe(
      conn.metadata.name,
    );
    expect(validate(conn)).toEqual([]);
  });

  it('the schema check fails what the API server would refuse', () => {
    const resource = render('--controller').find((d) => d.kind === 'WorkerDeployment')!;
    resource.spec.rollout.strategy = 'Canary';
    resource.spec.rollout.steps[0].rampPercentage = 100;
    resource.spec.workerOptions.unsafeCustomBuildID = '1.0.0+abc';
    delete resource.spec.sunset;
    resource.spec.replicas = '2';
    resource.spec.template.spec.containers[0].imagePullPolicy = 7;
    resource.spec.surprise = true;
    expect(validate(resource).sort()).toEqual(
      [
        '.spec.rollout.strategy: must be one of Manual, AllAtOnce, Progressive',
        '.spec.rollout.steps[0].rampPercentage: must be at most 99',
        `.spec.workerOptions.unsafeCustomBuildID: must match ${crdSchema(crds.WorkerDeployment as never, 'temporal.io/v1alpha1').properties!.spec.properties!.workerOptions.properties!.unsafeCustomBuildID.pattern}`,
        '.spec.sunset: is required',
        '.spec.replicas: must be an integer',
        '.spec.template.spec.containers[0].imagePullPolicy: must be a string',
        '.spec.surprise: is not a field of the schema',
      ].sort(),
    );
  });
});

describe('one version value in every shipped deployment', () => {
  it('package.json "version" is the image tag, the build id and KEDA’s build id everywhere', () => {
    const read = (...p: string[]) => readFileSync(join(PROJECT_ROOT, ...p), 'utf8');
    const found: Record<string, string[]> = {};
    const add = (where: string, value: unknown) => (found[where] ??= []).push(String(value));
    add(
      'deploy/k8s/kustomization.yaml images[payflow-app].newTag',
      parse(read('deploy', 'k8s', 'kustomization.yaml')).images[0].newTag,
    );
    add(
      'deploy/k8s/worker-deployment.yaml WORKER_BUILD_ID',
      envValue(parse(read('deploy', 'k8s', 'worker-deployment.yaml')), 'WORKER_BUILD_ID'),
    );
    for (const t of parse(read('deploy', 'k8s', 'components', 'keda-backlog', 'scaledobject.yaml')).spec
      .triggers as Obj[])
      if (t.type === 'temporal') add('scaledobject.yaml workerDeploymentBuildId', t.metadata.workerDeploymentBuildId);
    const compose = parse(read('docker-compose.yml'), { merge: true }) as Obj;
    for (const [name, service] of Object.entries(compose.services as Record<string, Obj>)) {
      const image = String(service.image ?? '');
      if (image.startsWith('payflow-app')) add(`docker-compose.yml ${name} image tag`, image.split(':')[1]);
    }
    add('docker-compose.yml worker WORKER_BUILD_ID', compose.services.worker.environment.WORKER_BUILD_ID);
    // Labels in the Dockerfile, if it ever gets a version label.
    for (const m of read('Dockerfile').matchAll(/^LABEL .*version="?([^"\s]+)/gim))
      add('Dockerfile LABEL version', m[1]);
    expect(Object.keys(found).length).toBeGreaterThanOrEqual(5);
    const differing = Object.entries(found).filter(([, values]) => values.some((v) => v !== version));
    expect(differing).toEqual([]);
  });
});
