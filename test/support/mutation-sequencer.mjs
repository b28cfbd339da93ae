// Jest's test sequencer for `npm run mutation` (stryker.config.mjs). With per-test coverage,
// Stryker's jest runner (10.0.0) runs a mutant's covering tests by name (--testNamePattern) but
// still loads every test file of the group: loading eight files cost about 10 s a mutant where
// the one file holding those tests costs 2 s. This sequencer keeps only the files that hold a
// test the pattern selects, from the names mutation-test-names.ts recorded in the initial run.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import jestSequencer from '@jest/test-sequencer';

const BaseSequencer = jestSequencer.default ?? jestSequencer;
const TEST_NAMES_FILE = '.mutation-test-names.jsonl';

/** test file path → the full names of its tests, as recorded in the initial run; undefined before it. */
function recordedTestNames() {
  const file = join(process.cwd(), TEST_NAMES_FILE);
  if (!existsSync(file)) return undefined;
  const byFile = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const { name, testPath } = JSON.parse(line);
    byFile.set(testPath, [...(byFile.get(testPath) ?? []), name]);
  }
  return byFile;
}

export default class MutationSequencer extends BaseSequencer {
  constructor(options) {
    super(options);
    this.testNamePattern = options.globalConfig?.testNamePattern;
  }

  sort(tests) {
    const sorted = super.sort(tests);
    const names = this.testNamePattern ? recordedTestNames() : undefined;
    if (names === undefined) return sorted;
    // jest matches --testNamePattern case-insensitively against the full name.
    const pattern = new RegExp(this.testNamePattern, 'i');
    const wanted = sorted.filter((test) => (names.get(test.path) ?? []).some((name) => pattern.test(name)));
    // A file whose names were not recorded (none matched at all): run them all rather than none.
    return wanted.length > 0 ? wanted : sorted;
  }
}
