// Under `npm run mutation` only (stryker.config.mjs adds this file to jest's setup): during
// Stryker's initial run, records which test file each test name belongs to, so that
// mutation-sequencer.mjs can give each mutant only the files holding the tests that cover it.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

/** Inside Stryker's sandbox (the test runner's working directory), removed with it. */
export const TEST_NAMES_FILE = '.mutation-test-names.jsonl';

const initialRun = process.env.MUTATION_GROUP !== undefined && process.env.__STRYKER_ACTIVE_MUTANT__ === undefined;

if (initialRun) {
  beforeEach(() => {
    const { currentTestName, testPath } = expect.getState();
    if (currentTestName === undefined || testPath === undefined) return;
    appendFileSync(join(process.cwd(), TEST_NAMES_FILE), `${JSON.stringify({ name: currentTestName, testPath })}\n`);
  });
}
