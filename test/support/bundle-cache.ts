// The workflow bundle tests run, kept on disk between test files. Jest gives every test file a
// fresh module registry, so the in-memory cache of `workflowBundle()` (test/support/stack.ts) lives
// for one file only, and webpack took about 5 s of CPU for each of the 58 files that start a worker.
// A bundle is stored under a name made of what it was built from: the bundle's key (workflows
// module and interceptor modules) and the contents of every file that can reach it (src/, the
// workflows module's own folder, package-lock.json). Any edit to one of those files gives another
// name, so a stale bundle is never served; the entry of the same key built from older sources is
// removed when its successor is written. Workers that need the same missing bundle at once wait for
// the one that builds it.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';

export const BUNDLE_CACHE_DIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'payflow-workflow-bundles');

function addTree(hash: ReturnType<typeof createHash>, dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) addTree(hash, path);
    else if (entry.isFile()) hash.update(relative(PROJECT_ROOT, path)).update('\0').update(readFileSync(path));
  }
}

/** A digest of every file the bundle of `workflowsPath` can be built from. */
export function bundleSourcesDigest(workflowsPath: string): string {
  const hash = createHash('sha256');
  addTree(hash, join(PROJECT_ROOT, 'src'));
  const ownFolder = dirname(workflowsPath);
  if (relative(join(PROJECT_ROOT, 'src'), ownFolder).startsWith('..')) addTree(hash, ownFolder);
  hash.update(readFileSync(join(PROJECT_ROOT, 'package-lock.json')));
  return hash.digest('hex').slice(0, 32);
}

/** The bundle of `key` built from the current sources: read from disk, or built by `build()` and written. */
export async function diskCachedBundle(
  key: string,
  workflowsPath: string,
  build: () => Promise<WorkflowBundleWithSourceMap>,
): Promise<WorkflowBundleWithSourceMap> {
  // `npm run mutation` keeps its own copy in each Stryker sandbox (mutation-bundle.ts).
  if (process.env.MUTATION_GROUP !== undefined) return build();
  const keyName = createHash('sha256').update(key).digest('hex').slice(0, 16);
  const file = join(BUNDLE_CACHE_DIR, `${keyName}-${bundleSourcesDigest(workflowsPath)}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap;
  mkdirSync(BUNDLE_CACHE_DIR, { recursive: true });
  // Jest's workers start together and would each build the same missing bundle: one builds it, the
  // others wait for its file (or build it themselves if that one died or is taking too long).
  const lock = `${file}.lock`;
  const mine = takeLock(lock);
  if (!mine) {
    const built = await builtByAnother(file, lock);
    if (built) return built;
  }
  try {
    return writeBundle(keyName, file, await build());
  } finally {
    if (mine) rmSync(lock, { force: true });
  }
}

function takeLock(lock: string): boolean {
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}

const ownerAlive = (lock: string): boolean => {
  try {
    process.kill(Number(readFileSync(lock, 'utf8')), 0);
    return true;
  } catch {
    return false; // the owner is gone, or so is the lock
  }
};

/** The bundle another worker is building, once it is on disk; undefined if it did not come within 2 minutes. */
async function builtByAnother(file: string, lock: string): Promise<WorkflowBundleWithSourceMap | undefined> {
  const read = () => JSON.parse(readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap;
  for (const until = Date.now() + 120_000; Date.now() < until;) {
    if (existsSync(file)) return read();
    // The lock is released after the file is in place: gone without a file, the builder failed.
    if (!existsSync(lock) || !ownerAlive(lock)) return existsSync(file) ? read() : undefined;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

function writeBundle(keyName: string, file: string, bundle: WorkflowBundleWithSourceMap): WorkflowBundleWithSourceMap {
  // Two builders may still meet (a waiter gave up): each writes its own file, then renames it.
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify(bundle));
  renameSync(partial, file);
  for (const name of readdirSync(BUNDLE_CACHE_DIR))
    if (name.startsWith(`${keyName}-`) && name.endsWith('.json') && join(BUNDLE_CACHE_DIR, name) !== file)
      rmSync(join(BUNDLE_CACHE_DIR, name), { force: true });
  return bundle;
}
