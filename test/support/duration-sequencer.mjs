// Jest's test sequencer (jest.config.js), with the durations of a recorded run for the files this
// machine has no timing of yet. Jest starts the longest files first when its cache knows their
// durations, and the largest files first when it does not: on a fresh clone (CI) a short file that
// waits over a minute (test/ship/scale-out.test.ts) started near the end and ran alone after every
// other file had finished. `test-durations.json` gives jest an order to start from; its own timings
// replace them from the second run on. Record them again with `npm run test:durations`.
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import jestSequencer from '@jest/test-sequencer';

const BaseSequencer = jestSequencer.default ?? jestSequencer;
const here = dirname(fileURLToPath(import.meta.url));
const ROOT = join(here, '..', '..');
/** test file (from the project root) → seconds. */
const recorded = JSON.parse(readFileSync(join(here, 'test-durations.json'), 'utf8'));

export default class DurationSequencer extends BaseSequencer {
  /** Jest's timing of the file from an earlier run here, else the recorded one (in ms, as jest's). */
  time(test) {
    const own = super.time(test);
    if (own != null) return own;
    const seconds = recorded[relative(ROOT, test.path).split('\\').join('/')];
    return seconds === undefined ? undefined : seconds * 1000;
  }
}
