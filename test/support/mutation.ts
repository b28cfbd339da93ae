// `npm run mutation [-- <group>... --<stryker option>...]`: StrykerJS over the modules that decide money or trust
// (stryker.config.mjs, docs/testing.md). Stryker runs jest once per mutant, and jest's global setup
// would start a Temporal dev server and PostgreSQL each time; they are started here once instead
// (the global setup leaves services it is handed alone). Stryker's sandbox copy has no .tools/, so
// the Temporal binaries are passed by path.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import globalSetup from './jest-global-setup';
import globalTeardown from './jest-global-teardown';
import { PROJECT_ROOT, temporalBinaries } from '../../src/stack/temporal-binaries';

async function main(): Promise<number> {
  const config = pathToFileURL(join(PROJECT_ROOT, 'stryker.config.mjs')).href;
  const GROUPS = Object.keys(((await import(config)) as { GROUPS: Record<string, unknown> }).GROUPS);
  // Group names, and Stryker options passed through (`-- rules --force`).
  const args = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const strykerArgs = process.argv.slice(2).filter((a) => a.startsWith('-'));
  const unknown = args.filter((g) => !GROUPS.includes(g));
  if (unknown.length > 0) {
    console.error(`unknown mutation group(s): ${unknown.join(', ')}; the groups are ${GROUPS.join(', ')}`);
    return 2;
  }
  const { cli, testServer } = temporalBinaries();
  if (cli) process.env.TEMPORAL_CLI_PATH = cli;
  if (testServer) process.env.TEMPORAL_TEST_SERVER_PATH = testServer;
  await globalSetup();
  let failed = 0;
  try {
    for (const group of args.length > 0 ? args : GROUPS) {
      const started = Date.now();
      const run = spawnSync(
        process.execPath,
        [join(PROJECT_ROOT, 'node_modules/@stryker-mutator/core/bin/stryker.js'), 'run', ...strykerArgs],
        {
          cwd: PROJECT_ROOT,
          stdio: 'inherit',
          env: { ...process.env, MUTATION_GROUP: group },
        },
      );
      const minutes = ((Date.now() - started) / 60_000).toFixed(1);
      console.log(`[mutation] group ${group}: exit ${run.status ?? run.signal}, ${minutes} min`);
      if (run.status !== 0) failed++;
    }
  } finally {
    await globalTeardown();
  }
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
