// Recorded vending histories (made by test/pos/record-histories.ts) replay against the
// current workflow code.
import { VENDING_HISTORIES } from '../pos/fixtures/histories';
import { historyNames, replayHistoryFrom } from '../support/replay';

const names = historyNames(VENDING_HISTORIES);

describe('recorded vending histories', () => {
  it('has recorded vending histories', () => {
    expect(names).toEqual(
      expect.arrayContaining([
        'vend-timeout-not-found-retry-vended', // before vend-attributes-once: a raw start, six upserts
        'vend-attributes-once-timeout-not-found-retry-vended', // before vend-local-lookup: the lookup an activity
        'vend-local-lookup-timeout-not-found-retry-vended',
      ]),
    );
  });

  it.each(names)('replays %s without non-determinism', async (name) => {
    await expect(replayHistoryFrom(VENDING_HISTORIES, name)).resolves.toBeUndefined();
  });
});
