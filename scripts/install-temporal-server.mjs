#!/usr/bin/env node
// Builds the multi-service Temporal server (`go.temporal.io/server`) and its SQL
// schema tool from source into .tools/temporal-server/<version>/bin, once per
// machine and version. The Go module and build caches are the go command's
// defaults (`go env GOMODCACHE GOCACHE`), shared with any other Go work here.
//
// The server needs a newer Go than the machine may have; GOTOOLCHAIN makes the
// go command fetch that toolchain through the module proxy.
//
//   node scripts/install-temporal-server.mjs          # build if missing
//   node scripts/install-temporal-server.mjs --check  # exit 1 if not built
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEMPORAL_SERVER_VERSION = 'v1.32.2';
export const GO_TOOLCHAIN = 'go1.26.10';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the binaries of one server version live. */
export function serverPaths(version = TEMPORAL_SERVER_VERSION) {
  const dir = join(root, '.tools', 'temporal-server', version);
  return {
    dir,
    server: join(dir, 'bin', 'temporal-server'),
    sqlTool: join(dir, 'bin', 'temporal-sql-tool'),
    buildInfo: join(dir, 'build.json'),
  };
}

function goInstall(pkg, gobin) {
  const started = Date.now();
  const r = spawnSync('go', ['install', '-trimpath', `${pkg}@${TEMPORAL_SERVER_VERSION}`], {
    stdio: 'inherit',
    env: { ...process.env, GOTOOLCHAIN: GO_TOOLCHAIN, GOBIN: gobin, CGO_ENABLED: '0', GOFLAGS: '' },
  });
  if (r.error) throw new Error(`go is not on PATH (${r.error.message}); install Go to build the server`);
  if (r.status !== 0) throw new Error(`go install ${pkg}@${TEMPORAL_SERVER_VERSION} exited ${r.status}`);
  return Math.round((Date.now() - started) / 1000);
}

export function ensureTemporalServer() {
  const paths = serverPaths();
  if (existsSync(paths.server) && existsSync(paths.sqlTool)) return paths;
  // Build into a scratch bin dir and move into place, so a killed build never
  // leaves a half-written binary that a later run would trust.
  const scratch = join(paths.dir, 'bin.partial');
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  console.log(
    `[temporal-server] building go.temporal.io/server@${TEMPORAL_SERVER_VERSION} with ${GO_TOOLCHAIN} (several minutes)`,
  );
  const serverSeconds = goInstall('go.temporal.io/server/cmd/server', scratch);
  console.log(`[temporal-server] server built in ${serverSeconds}s`);
  const sqlSeconds = goInstall('go.temporal.io/server/cmd/tools/sql', scratch);
  console.log(`[temporal-server] SQL tool built in ${sqlSeconds}s`);
  mkdirSync(join(paths.dir, 'bin'), { recursive: true });
  renameSync(join(scratch, 'server'), paths.server);
  renameSync(join(scratch, 'sql'), paths.sqlTool);
  rmSync(scratch, { recursive: true, force: true });
  writeFileSync(
    paths.buildInfo,
    JSON.stringify(
      {
        version: TEMPORAL_SERVER_VERSION,
        toolchain: GO_TOOLCHAIN,
        serverSeconds,
        sqlSeconds,
        builtAt: new Date().toISOString(),
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`[temporal-server] done in ${serverSeconds + sqlSeconds}s: ${paths.server}`);
  return paths;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const paths = serverPaths();
    const ok = existsSync(paths.server) && existsSync(paths.sqlTool);
    console.log(ok ? paths.server : `not built: run node scripts/install-temporal-server.mjs`);
    process.exit(ok ? 0 : 1);
  }
  try {
    ensureTemporalServer();
  } catch (err) {
    console.error(`[temporal-server] ${err.message}`);
    process.exit(1);
  }
}
