// The second CI pass's choice of test files (scripts/node24-tests.mjs): what runs our programs as the
// Node 24 image does is in it; workflow tests against scripted activities and pure unit tests are not.
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

  it('takes files that start processes, services over HTTP or the CLI, and leaves scripted workflow tests and unit tests to Node 22', () => {
    expect(chosen).toEqual(
      expect.arrayContaining([
        'test/foundation/stack.test.ts', // useServices
        'test/workers/namespace-check.test.ts', // worker processes
        'test/starters/cli-exit-codes.test.ts', // the CLI
      ]),
    );
    expect(chosen).not.toContain('test/vending/vending-workflow.test.ts');
    expect(chosen).not.toContain('test/api/errors.test.ts');
  });
});
