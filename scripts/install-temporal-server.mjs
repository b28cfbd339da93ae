#!/usr/bin/env node
// Builds the multi-service Temporal server (`go.temporal.io/server`), its SQL
// schema tool and the standalone Web UI server (`github.com/temporalio/ui-server`,
// the UI the Temporal CLI's dev server embeds, with its assets inside) from
// source into .tools/, once per machine and version. The Go module and build
// caches are the go command's defaults (`go env GOMODCACHE GOCACHE`), shared
// with any other Go work here.
//
// The server needs a newer Go than the machine may have; GOTOOLCHAIN makes the
// go command fetch that toolchain through the module proxy.
//
//   node scripts/install-temporal-server.mjs          # build what is missing
//   node scripts/install-temporal-server.mjs --check  # exit 1 if anything is not built
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEMPORAL_SERVER_VERSION = 'v1.32.2';
/** The UI of the pinned Temporal CLI (`temporal --version`: UI 2.54.1), so both modes show the same UI. */
export const TEMPORAL_UI_SERVER_VERSION = 'v2.54.1';
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

/** Where the Web UI server of one version lives. */
export function uiServerPaths(version = TEMPORAL_UI_SERVER_VERSION) {
  const dir = join(root, '.tools', 'temporal-ui-server', version);
  return { dir, uiServer: join(dir, 'bin', 'temporal-ui-server'), buildInfo: join(dir, 'build.json') };
}

function goInstall(pkg, version, gobin) {
  const started = Date.now();
  const r = spawnSync('go', ['install', '-trimpath', `${pkg}@${version}`], {
    stdio: 'inherit',
    env: { ...process.env, GOTOOLCHAIN: GO_TOOLCHAIN, GOBIN: gobin, CGO_ENABLED: '0', GOFLAGS: '' },
  });
  if (r.error) throw new Error(`go is not on PATH (${r.error.message}); install Go to build the server`);
  if (r.status !== 0) throw new Error(`go install ${pkg}@${version} exited ${r.status}`);
  return Math.round((Date.now() - started) / 1000);
}

/**
 * Builds `pkgs` (each go-installed as the binary named by its last path element) into a scratch
 * bin dir and moves them into place, so a killed build never leaves a half-written binary that a
 * later run would trust; records how long each took in build.json.
 */
function buildInto(dir, version, pkgs) {
  const scratch = join(dir, 'bin.partial');
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const seconds = {};
  for (const { pkg } of pkgs) {
    console.log(`[temporal-server] building ${pkg}@${version} with ${GO_TOOLCHAIN} (several minutes)`);
    seconds[pkg] = goInstall(pkg, version, scratch);
    console.log(`[temporal-server] ${pkg} built in ${seconds[pkg]}s`);
  }
  mkdirSync(join(dir, 'bin'), { recursive: true });
  for (const { pkg, target } of pkgs) renameSync(join(scratch, pkg.split('/').pop()), target);
  rmSync(scratch, { recursive: true, force: true });
  const info = { version, toolchain: GO_TOOLCHAIN, seconds, builtAt: new Date().toISOString() };
  writeFileSync(join(dir, 'build.json'), JSON.stringify(info, null, 2) + '\n');
}

export function ensureTemporalServer() {
  const paths = serverPaths();
  if (!existsSync(paths.server) || !existsSync(paths.sqlTool)) {
    buildInto(paths.dir, TEMPORAL_SERVER_VERSION, [
      { pkg: 'go.temporal.io/server/cmd/server', target: paths.server },
      { pkg: 'go.temporal.io/server/cmd/tools/sql', target: paths.sqlTool },
    ]);
    console.log(`[temporal-server] done: ${paths.server}`);
  }
  const ui = uiServerPaths();
  if (!existsSync(ui.uiServer)) {
    buildInto(ui.dir, TEMPORAL_UI_SERVER_VERSION, [
      { pkg: 'github.com/temporalio/ui-server/v2/cmd/server', target: ui.uiServer },
    ]);
    console.log(`[temporal-server] done: ${ui.uiServer}`);
  }
  return { ...paths, uiServer: ui.uiServer };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) {
    const paths = serverPaths();
    const { uiServer } = uiServerPaths();
    const missing = [paths.server, paths.sqlTool, uiServer].filter((p) => !existsSync(p));
    console.log(
      missing.length === 0
        ? paths.server
        : `not built (${missing.join(', ')}): run node scripts/install-temporal-server.mjs`,
    );
    process.exit(missing.length === 0 ? 0 : 1);
  }
  try {
    ensureTemporalServer();
  } catch (err) {
    console.error(`[temporal-server] ${err.message}`);
    process.exit(1);
  }
}
