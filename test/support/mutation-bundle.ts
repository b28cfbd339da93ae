// Mutation testing of workflow code (docs/testing.md). Stryker instruments every mutant into the
// source at once and picks the active one at run time from `globalThis.__stryker__.activeMutant`,
// or from the __STRYKER_ACTIVE_MUTANT__ environment variable it sets for each mutant run. Workflow
// code runs from a webpack bundle in the worker's own V8 context (on worker threads), which has
// neither: without help every workflow mutant would run unmutated and survive. So, only under
// `npm run mutation` (MUTATION_GROUP is set):
// - the bundle's instrumented modules are told the active mutant (`withActiveMutant`);
// - the bundle, the same for every mutant, is built once per Stryker sandbox and kept on disk
//   (`mutationBundleCache`): jest starts afresh for each mutant, and webpack takes seconds.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';

const ACTIVE_MUTANT_VARIABLE = '__STRYKER_ACTIVE_MUTANT__';

const underMutation = (): boolean => process.env.MUTATION_GROUP !== undefined;

/**
 * Where Stryker's instrumentation (10.0.0) takes its namespace object in each instrumented module
 * of the bundle; the active mutant is set on that object right there. A global set before the
 * bundle runs does not do: the worker freezes what the bundle's globals hold once it has loaded,
 * and the instrumentation then cannot record what it ran (every workflow fails).
 */
const NAMESPACE_STATEMENT = 'var ns = g.__stryker__ || (g.__stryker__ = {});';

/** The bundle, with the mutant Stryker is testing switched on inside the workflow context. */
export function withActiveMutant(bundle: WorkflowBundleWithSourceMap): WorkflowBundleWithSourceMap {
  const active = process.env[ACTIVE_MUTANT_VARIABLE];
  // No instrumented module in this bundle (its group mutates none of them): nothing to switch on.
  if (!underMutation() || active === undefined || !bundle.code.includes(NAMESPACE_STATEMENT)) return bundle;
  const code = bundle.code.replaceAll(
    NAMESPACE_STATEMENT,
    `${NAMESPACE_STATEMENT} ns.activeMutant = ${JSON.stringify(active)};`,
  );
  return { ...bundle, code };
}

/** `build()`, or under `npm run mutation` the copy built by an earlier mutant run in this sandbox. */
export async function mutationBundleCache(
  key: string,
  build: () => Promise<WorkflowBundleWithSourceMap>,
): Promise<WorkflowBundleWithSourceMap> {
  if (!underMutation()) return build();
  const dir = join(process.cwd(), '.mutation-bundles'); // inside Stryker's sandbox, removed with it
  const file = join(dir, `${createHash('sha256').update(key).digest('hex')}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap;
  const bundle = await build();
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify(bundle));
  return bundle;
}
