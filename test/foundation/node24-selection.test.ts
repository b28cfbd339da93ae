// The second CI pass's choice of test files (scripts/node24-tests.mjs): the image's programs as the
// Node 24 image runs them and every end-to-end file are in it; the rest runs on Node 22 only.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';

describe('the Node 24 pass (scripts/node24-tests.mjs)', () => {
  // As scripts/test-node24.sh reads it: one path a line.
  const chosen = execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'node24-tests.mjs')], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n');

  it('takes every file of test/ship, test/browser and test/replay, and every end-to-end file', () => {
    for (const folder of ['ship', 'browser', 'replay']) {
      const files = readdirSync(join(PROJECT_ROOT, 'test', folder)).filter((f) => f.endsWith('.test.ts'));
      expect(files.length).toBeGreaterThan(0);
      for (const f of files) expect(chosen).toContain(`test/${folder}/${f}`);
    }
    expect(chosen).toEqual(
      expect.arrayContaining(['test/payments/card-e2e.test.ts', 'test/vending/vending-e2e.test.ts']),
    );
  });

  it('takes nothing else: unit tests, scripted workflow tests and the other process tests stay on Node 22', () => {
    expect(chosen.every((f) => /^test\/(ship|browser|replay)\/|-e2e(-[\w-]+)?\.test\.ts$/.test(f))).toBe(true);
    for (const onlyOnNode22 of [
      'test/vending/vending-workflow.test.ts', // a workflow against scripted activities
      'test/api/errors.test.ts', // a unit test
      'test/workers/rollout.test.ts', // worker processes, our logic
    ])
      expect(chosen).not.toContain(onlyOnNode22);
  });
});
