// The compiled project (`npm run build`: dist/ and dist/workflow-bundle.js) for the tests that run
// what ships: the production worker, the package's public exports, the CLI bin. `npm test` builds
// before jest; a developer running one file gets a build here when dist/ is missing or older than
// a source file (one build at a time across jest workers, by a lock directory).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { sleep } from '../support/polling';

export const DIST = join(PROJECT_ROOT, 'dist');
export const BUILT = {
  workerMain: join(DIST, 'workers', 'main.js'),
  workflowStackTracesPreload: join(DIST, 'workers', 'workflow-stack-traces.js'),
  workflowBundle: join(DIST, 'workflow-bundle.js'),
  tracedWorkflowBundle: join(DIST, 'workflow-bundle-traced.js'),
  startersIndex: join(DIST, 'starters', 'index.js'),
  startersTypes: join(DIST, 'starters', 'index.d.ts'),
  cli: join(DIST, 'starters', 'cli.js'),
};

function newestSourceMtime(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  walk(join(PROJECT_ROOT, 'src'));
  for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json'])
    newest = Math.max(newest, statSync(join(PROJECT_ROOT, f)).mtimeMs);
  return newest;
}

/** Fresh: every output exists and the bundle (written last by the build) is newer than every source. */
export function buildIsFresh(): boolean {
  if (!Object.values(BUILT).every((f) => existsSync(f))) return false;
  return statSync(BUILT.workflowBundle).mtimeMs >= newestSourceMtime();
}

export async function ensureBuilt(): Promise<void> {
  if (buildIsFresh()) return;
  const lock = join(
    tmpdir(),
    `payflow-build-${createHash('sha256').update(PROJECT_ROOT).digest('hex').slice(0, 12)}.lock`,
  );
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another jest worker builds; a lock older than 5 minutes is left over from a killed run.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 300_000) rmdirSync(lock);
      await sleep(500);
      if (buildIsFresh()) return;
    }
  }
  try {
    if (buildIsFresh()) return;
    const tsc = spawnSync(
      process.execPath,
      [join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      { cwd: PROJECT_ROOT, encoding: 'utf8' },
    );
    if (tsc.status !== 0) throw new Error(`npm run build (tsc) failed:\n${tsc.stdout}${tsc.stderr}`);
    const bundle = spawnSync(process.execPath, [join(DIST, 'workers', 'build-workflow-bundle.js')], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    });
    if (bundle.status !== 0)
      throw new Error(`npm run build (workflow bundle) failed:\n${bundle.stdout}${bundle.stderr}`);
  } finally {
    rmdirSync(lock);
  }
}
