#!/usr/bin/env node
// The test files of the second CI pass, on Node.js 24 (scripts/test-node24.sh): the files that run our
// programs the way the Node 24 image runs them — as processes (node:child_process), as the stack's
// services over real HTTP (useServices), as worker processes or the whole `npm start`, through the
// CLI —, every end-to-end file (`*-e2e.test.ts`), and everything under test/ship, test/browser and
// test/replay (the package, the image's entry points, the Web UI, the recorded histories). What is left out runs on Node 22 only, in
// `npm test`: unit tests of pure functions, static checks of files, and workflow tests in the jest process against scripted activities (the same
// workflow bundle in the SDK's V8 sandbox on either line). docs/testing.md, "The Node 24 pass", has
// the figures behind the choice (the two whole passes took about 18 minutes of a 15-minute budget).
// Prints one path a line; `--count` prints how many, of how many.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What makes a test file one of the pass's: it runs a program of ours as the image would. */
export const RUNS_OUR_PROGRAMS =
  /from ['"]node:child_process['"]|\buseServices\(|\bstartStackProcess\b|\bstartWorkerProcess\b|\bcliAgainst\(|\bspawnCli\b/;
/**
 * Whole folders (the package, the image's entry points, the Web UI; the recorded histories, which a
 * worker moved to Node 24 must replay) and every end-to-end file by name.
 */
export const BY_PATH = /^test\/(ship|browser|replay)\/|-e2e(-[\w-]+)?\.test\.ts$/;

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

export function node24Tests(root = ROOT) {
  return testFiles(join(root, 'test'))
    .map((f) => relative(root, f).split('\\').join('/'))
    .filter((f) => BY_PATH.test(f) || RUNS_OUR_PROGRAMS.test(readFileSync(join(root, f), 'utf8')))
    .sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const chosen = node24Tests();
  if (process.argv.includes('--count')) console.log(`${chosen.length} of ${testFiles(join(ROOT, 'test')).length}`);
  else console.log(chosen.join('\n'));
}
