// Issue #27 section 6, k8s: each process gets only the secrets it needs. deploy/k8s is rendered with
// `kubectl kustomize` (the pinned kubectl in .tools/, `node scripts/install-tools.mjs kubectl`), and
// each workload's secret keys are compared with what its process's config schema reads
// (src/config/processes.ts): no more (a key it does not read is a key it should not hold), no fewer
// (a secret its schema reads would fall back to a development value, refused in production).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { processSecretVariables, SECRET_VARIABLES } from '../../src/config/processes';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { K8S_PROCESS } from './k8s-processes';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const kubectl = join(PROJECT_ROOT, '.tools', 'kubectl', 'bin', 'kubectl');
const available = existsSync(kubectl);
if (!available && process.env.CI)
  throw new Error('kubectl is not installed: `npm test` runs `node scripts/install-tools.mjs kubectl` first');

function rendered(): Obj[] {
  const r = spawnSync(kubectl, ['kustomize', join(PROJECT_ROOT, 'deploy', 'k8s')], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
}

/** Every secret a workload's containers can see: key → the Secret it comes from. */
function secretsOf(workload: Obj): { keys: string[]; secretNames: Set<string>; envFromSecrets: string[] } {
  const containers = [
    ...(workload.spec.template.spec.containers ?? []),
    ...(workload.spec.template.spec.initContainers ?? []),
  ] as Obj[];
  const keys: string[] = [];
  const secretNames = new Set<string>();
  const envFromSecrets: string[] = [];
  for (const c of containers) {
    for (const e of c.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      if (ref) {
        keys.push(ref.key);
        secretNames.add(ref.name);
        expect(e.name).toBe(ref.key); // the variable is named as the key: nothing renamed on the way
      }
    }
    for (const f of c.envFrom ?? []) if (f.secretRef) envFromSecrets.push(f.secretRef.name);
  }
  for (const v of workload.spec.template.spec.volumes ?? []) if (v.secret) envFromSecrets.push(v.secret.secretName);
  return { keys: keys.sort(), secretNames, envFromSecrets };
}

(available ? describe : describe.skip)('k8s: each workload mounts only its own secrets', () => {
  const objects = available ? rendered() : [];
  const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');

  it('knows the process of every workload', () => {
    expect(workloads.map((w) => w.metadata.name).sort()).toEqual(Object.keys(K8S_PROCESS).sort());
  });

  it.each(Object.entries(K8S_PROCESS))("%s holds exactly the secret keys its process's schema reads", (name, kind) => {
    const workload = workloads.find((w) => w.metadata.name === name)!;
    const { keys, secretNames, envFromSecrets } = secretsOf(workload);
    expect(envFromSecrets).toEqual([]); // a whole Secret would hand over keys nobody listed
    expect(keys).toEqual(processSecretVariables(kind).sort());
    expect([...secretNames]).toEqual([`${name}-secrets`]);
  });

  it('gives no two workloads the same Secret, and the codec token and claim-check keys to one each', () => {
    const names = workloads.flatMap((w) => [...secretsOf(w).secretNames]);
    expect(new Set(names).size).toBe(names.length);
    const holders = (key: string) =>
      workloads.filter((w) => secretsOf(w).keys.includes(key)).map((w) => w.metadata.name);
    expect(holders('CODEC_SERVER_TOKEN')).toEqual(['payflow-codec-server']);
    expect(holders('CLAIM_CHECK_KEYS')).toEqual(['payflow-worker']);
    expect(holders('PAYMENTS_SECRET_KEY').sort()).toEqual(['payflow-webhooks', 'payflow-worker']);
    const configMapKeys = objects.filter((o) => o.kind === 'ConfigMap').flatMap((o) => Object.keys(o.data ?? {}));
    for (const secret of SECRET_VARIABLES) expect(configMapKeys).not.toContain(secret);
  });
});
