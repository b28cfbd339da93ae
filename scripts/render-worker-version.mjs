#!/usr/bin/env node
// The workers of one version, from one value: the build id (docs/operations.md, "Deploy, ramp, make
// current, drain, sunset"). Each version runs in its own Deployment `payflow-worker-<build id>`, next to
// the versions still draining, never as a rolling update of one Deployment (that would stop the old
// version's workers while flows are pinned to it).
//
//   node scripts/render-worker-version.mjs                          the package version's workers (HPA on CPU)
//   node scripts/render-worker-version.mjs --build-id 1.1.0 --scaler keda --image registry.example.com/payflow-app
//   node scripts/render-worker-version.mjs --controller             a WorkerDeployment for Temporal's worker controller
//   node scripts/render-worker-version.mjs --controller-kind TemporalWorkerDeployment   (controllers before v1.7)
//
// The templates are the base's own manifests (deploy/k8s/worker-*.yaml and the KEDA component's
// ScaledObject): the render changes names, labels, selectors, the image tag, WORKER_BUILD_ID and
// KEDA's workerDeploymentBuildId, nothing else. Prints multi-document YAML on stdout.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const k8s = join(root, 'deploy', 'k8s');
const WORKER = 'payflow-worker';
const VERSION_LABEL = 'app.kubernetes.io/version';
// A build id here names a Kubernetes object (DNS subdomain), is a label value and an image tag, and
// is the controller's unsafeCustomBuildID: lowercase letters, digits, "." and "-"; at most 47 so
// `payflow-worker-<build id>` stays within 63 characters.
const BUILD_ID = /^[a-z0-9]([a-z0-9.-]{0,45}[a-z0-9])?$/;

/** The package version: the one value the image tag, the build id and KEDA's build id come from. */
export function packageVersion() {
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
}

const readManifest = (...path) => parse(readFileSync(join(k8s, ...path), 'utf8'));

function versionLabels(buildId) {
  return { 'app.kubernetes.io/part-of': 'payflow', 'app.kubernetes.io/name': WORKER, [VERSION_LABEL]: buildId };
}

const selector = (buildId) => ({ 'app.kubernetes.io/name': WORKER, [VERSION_LABEL]: buildId });

/** The base Deployment as version `buildId`: its name, labels, selector, image tag and WORKER_BUILD_ID. */
function deploymentOf(buildId, image) {
  const d = readManifest('worker-deployment.yaml');
  d.metadata.name = `${WORKER}-${buildId}`;
  d.metadata.labels = { ...d.metadata.labels, ...versionLabels(buildId) };
  d.spec.selector.matchLabels = selector(buildId);
  d.spec.template.metadata.labels = { ...d.spec.template.metadata.labels, ...versionLabels(buildId) };
  const container = d.spec.template.spec.containers[0];
  container.image = `${image}:${buildId}`;
  const buildIdVar = container.env.find((e) => e.name === 'WORKER_BUILD_ID');
  if (!buildIdVar) throw new Error('deploy/k8s/worker-deployment.yaml: the worker container has no WORKER_BUILD_ID');
  buildIdVar.value = buildId;
  return d;
}

/** A scaler or budget of the base, aimed at version `buildId`'s Deployment. */
function retarget(manifest, buildId) {
  manifest.metadata.name = `${WORKER}-${buildId}`;
  manifest.metadata.labels = { ...manifest.metadata.labels, ...versionLabels(buildId) };
  if (manifest.spec.scaleTargetRef) manifest.spec.scaleTargetRef.name = `${WORKER}-${buildId}`;
  if (manifest.spec.selector) manifest.spec.selector.matchLabels = selector(buildId);
  return manifest;
}

/** KEDA's ScaledObject counting this version's backlog only (each version scales on its own). */
function scaledObjectOf(buildId) {
  const so = retarget(readManifest('components', 'keda-backlog', 'scaledobject.yaml'), buildId);
  for (const t of so.spec.triggers) if (t.type === 'temporal') t.metadata.workerDeploymentBuildId = buildId;
  return so;
}

/** Deployment, its scaler (CPU HPA or KEDA ScaledObject) and its PodDisruptionBudget. */
export function renderVersion({ buildId, image = 'payflow-app', scaler = 'hpa' }) {
  const scale = scaler === 'keda' ? scaledObjectOf(buildId) : retarget(readManifest('worker-hpa.yaml'), buildId);
  return [deploymentOf(buildId, image), scale, retarget(readManifest('worker-pdb.yaml'), buildId)];
}

// The controller names the Temporal Worker Deployment `<Kubernetes namespace>/<resource name>` and hands
// it and the build id to the pod as TEMPORAL_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID: the worker
// reads its own variables, so the container starts through a shell that copies them.
const CONTROLLER_ENV_BRIDGE =
  'export WORKER_DEPLOYMENT_NAME="$TEMPORAL_DEPLOYMENT_NAME" WORKER_BUILD_ID="$TEMPORAL_WORKER_BUILD_ID"; exec "$@"';

/**
 * A WorkerDeployment (or the deprecated TemporalWorkerDeployment) for Temporal's worker controller:
 * the same pod template; the controller makes one Deployment per build id, ramps, promotes and sunsets.
 */
export function renderControllerResource({ buildId, image = 'payflow-app', kind = 'WorkerDeployment' }) {
  const base = deploymentOf(buildId, image);
  const config = readManifest('configmap.yaml').data;
  const template = base.spec.template;
  template.metadata.labels = { 'app.kubernetes.io/name': WORKER, 'app.kubernetes.io/component': 'worker' };
  const container = template.spec.containers[0];
  container.command = ['/bin/sh', '-c', CONTROLLER_ENV_BRIDGE, 'worker', ...container.command];
  container.env = container.env.filter((e) => !['WORKER_BUILD_ID', 'WORKER_DEPLOYMENT_NAME'].includes(e.name));
  const connection = kind === 'WorkerDeployment' ? 'Connection' : 'TemporalConnection';
  const resource = {
    apiVersion: 'temporal.io/v1alpha1',
    kind,
    metadata: { name: WORKER, labels: { 'app.kubernetes.io/part-of': 'payflow', [VERSION_LABEL]: buildId } },
    spec: {
      replicas: base.spec.replicas,
      rollout: {
        strategy: 'Progressive',
        steps: [
          { rampPercentage: 10, pauseDuration: '5m' },
          { rampPercentage: 50, pauseDuration: '10m' },
        ],
      },
      // Scaled down an hour after it drained, deleted a day after: the queries on closed flows go on.
      sunset: { scaledownDelay: '1h', deleteDelay: '24h' },
      workerOptions: {
        connectionRef: { name: 'payflow-temporal' },
        temporalNamespace: config.TEMPORAL_NAMESPACE,
        unsafeCustomBuildID: buildId,
      },
      template,
    },
  };
  const conn = {
    apiVersion: 'temporal.io/v1alpha1',
    kind: connection,
    metadata: { name: 'payflow-temporal', labels: { 'app.kubernetes.io/part-of': 'payflow' } },
    spec: {
      hostPort: config.TEMPORAL_ADDRESS,
      apiKeySecretRef: { name: 'payflow-worker-secrets', key: 'TEMPORAL_API_KEY' },
    },
  };
  return [conn, resource];
}

function options(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      'build-id': { type: 'string' },
      image: { type: 'string', default: 'payflow-app' },
      scaler: { type: 'string', default: 'hpa' },
      controller: { type: 'boolean', default: false },
      'controller-kind': { type: 'string' },
    },
  });
  const buildId = values['build-id'] ?? packageVersion();
  if (!BUILD_ID.test(buildId))
    throw new Error(
      `--build-id must be lowercase letters, digits, "." or "-" (at most 47; a Kubernetes name, a label and an image tag): got "${buildId}"`,
    );
  if (!['hpa', 'keda'].includes(values.scaler)) throw new Error(`--scaler must be hpa or keda: got "${values.scaler}"`);
  const kind = values['controller-kind'];
  if (kind && !['WorkerDeployment', 'TemporalWorkerDeployment'].includes(kind))
    throw new Error(`--controller-kind must be WorkerDeployment or TemporalWorkerDeployment: got "${kind}"`);
  return { buildId, image: values.image, scaler: values.scaler, controller: values.controller || !!kind, kind };
}

function main() {
  const o = options(process.argv.slice(2));
  const docs = o.controller ? renderControllerResource({ ...o, kind: o.kind ?? 'WorkerDeployment' }) : renderVersion(o);
  process.stdout.write(docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n'));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(2);
  }
}
