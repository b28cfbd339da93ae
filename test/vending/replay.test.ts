// Recorded vending histories (made by test/vending/vending-e2e.test.ts against the sandbox;
// RECORD_HISTORIES=1 to refresh) replay against the current workflow code.
import { join } from 'node:path';
import { historyNames, replayHistoryFrom } from '../support/replay';

const HISTORIES = join(__dirname, 'histories');
const names = historyNames(HISTORIES);

describe('recorded vending histories', () => {
  it('has a recorded history for each branch worth keeping', () => {
    expect(names).toEqual(
      expect.arrayContaining([
        'vend-answer-lost-found-vended', // H3's answer lost, H4 finds it vended: never sent again
        'vend-not-found-retry-vended', // H3 lost before the service, H4 404, the same reference again
        'vend-pending-requeried-vended', // H3 answers pending, H4 requeried until vended
      ]),
    );
  });

  it.each(names)('replays %s without non-determinism', async (name) => {
    await expect(replayHistoryFrom(HISTORIES, name)).resolves.toBeUndefined();
  });
});
