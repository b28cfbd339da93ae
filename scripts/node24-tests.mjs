#!/usr/bin/env node
// The test files of the second CI pass, on Node.js 24 (scripts/test-node24.sh): the image's own
// programs as the image runs them — everything under test/ship (the package, `npm start`, Ctrl-C, the
// worker and CLI processes, the doc commands), test/browser (the Web UI and the hosted pages) and
// test/replay (the recorded histories, which a worker moved to Node 24 must replay) — and every
// end-to-end file (`*-e2e.test.ts`: each flow through the stack's services over real HTTP). What is
// left out runs on Node 22 only, in `npm test`: unit tests, static checks, workflow tests against
// scripted activities, and the other tests that start processes (rollout, task-queue layouts, the
// CLI's cases), which exercise our logic rather than the Node line under it. docs/testing.md, "The
// Node 24 pass", has the figures behind the choice. Prints one path a line; `--count` prints how
// many, of how many.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Whole folders (the package and the image's entry points, the Web UI, the recorded histories) and
 * every end-to-end file by name.
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
    .filter((f) => BY_PATH.test(f))
    .sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const chosen = node24Tests();
  if (process.argv.includes('--count')) console.log(`${chosen.length} of ${testFiles(join(ROOT, 'test')).length}`);
  else console.log(chosen.join('\n'));
}
