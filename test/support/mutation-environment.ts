// jest's test environment for the workflow groups of `npm run mutation` (stryker.config.mjs).
// Stryker's jest runner cannot make jest stop at the first failing test (jest's `bail` is not
// honoured programmatically), and a workflow group runs its whole test files for every mutant:
// once a test has failed under a mutant, that mutant is killed, and this skips the rest of its
// tests (in this file and the group's next ones) instead of running them for nothing.
import { TestEnvironment } from 'jest-environment-node';
import type { Circus } from '@jest/types';

/** The mutant that has already failed a test. Module state: jest loads this file once per process. */
let failedMutant: string | undefined;

export default class MutationEnvironment extends TestEnvironment {
  handleTestEvent(event: Circus.Event): void {
    const mutant = process.env.__STRYKER_ACTIVE_MUTANT__;
    if (mutant === undefined) return; // the initial run: every test runs
    if (event.name === 'test_fn_failure' || event.name === 'hook_failure') failedMutant = mutant;
    // jest-circus reads the mode after announcing the test: this skips it.
    if (event.name === 'test_start' && failedMutant === mutant) event.test.mode = 'skip';
  }
}
