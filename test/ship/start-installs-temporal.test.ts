// `npm install` runs no script of this project any more, so `npm start` installs the Temporal CLI itself
// when it is missing (scripts/install-temporal.mjs, called in its own process). Checked in a fresh
// clone of the committed HEAD, which has no .tools/, on a PATH that holds only `node`: the installer
// runs (it writes .tools/temporal-paths.json), finds no python3 to install the wheels with, and
// `npm start` stops with one line naming what to do, exit 2, before starting anything.
// The install itself (pip, about 255 MB of wheels) is what `npm test` and CI do; not repeated here.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';

jest.setTimeout(120_000);

const work = mkdtempSync(join(tmpdir(), 'payflow-start-install-'));
const clone = join(work, 'clone');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A clone of the committed HEAD; node_modules linked from the working tree (no second `npm install`). */
function cloneHead(): void {
  const git = (args: string[], cwd: string) => {
    const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    return r.stdout.trim();
  };
  git(['clone', '--quiet', '--no-checkout', PROJECT_ROOT, clone], work);
  git(['checkout', '--quiet', git(['rev-parse', 'HEAD'], PROJECT_ROOT)], clone);
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(clone, 'node_modules'));
}

it('npm start on a clone without the Temporal CLI runs the installer; with no python3 it stops with one line, exit 2', () => {
  cloneHead();
  expect(existsSync(join(clone, '.tools'))).toBe(false);
  // Only node on PATH: no python3, pip or temporal for the installer to find.
  const bin = join(work, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  const start = spawnSync(process.execPath, ['--import', 'tsx', 'src/stack/start.ts'], {
    cwd: clone,
    encoding: 'utf8',
    env: { PATH: bin, HOME: process.env.HOME ?? '/tmp', TEMPORAL_DATA_DIR: join(work, 'data') },
  });
  expect({ status: start.status, stderr: start.stderr }).toEqual({
    status: 2,
    stderr:
      'the Temporal CLI could not be installed (python3 with venv and pip are needed): set TEMPORAL_CLI_PATH, or TEMPORAL_EXTERNAL=true and TEMPORAL_ADDRESS for a server of your own\n',
  });
  expect(JSON.parse(readFileSync(join(clone, '.tools', 'temporal-paths.json'), 'utf8'))).toEqual({
    cli: null,
    testServer: null,
  });
});
