// Recorded POS histories (test/pos/histories, made by test/pos/record-histories.ts) replay
// against the current workflow code: a change that would break running flows fails here.
import { POS_HISTORIES } from './fixtures/histories';
import { historyNames, replayHistoryFrom } from '../support/replay';

const names = historyNames(POS_HISTORIES);

describe('recorded POS histories', () => {
  it('has recorded POS histories', () => {
    expect(names).toEqual(
      expect.arrayContaining([
        // POS remote request and its terminal lock (recorded by record-histories.ts)
        'pos-remote-locked-success',
        'pos-remote-locked-lost-e1-found',
        'pos-remote-locked-success-after-cancel',
        'pos-terminal-lock',
        // the sale, its card read sealed (recorded by record-histories.ts)
        'pos-txn-sealed-96-requery-found',
        'pos-txn-sealed-timeout-404-retry-approved',
        // refunds and pre-authorisations (recorded by pos-refund-preauth-e2e.test.ts)
        'pos-refund-approved',
        'pos-refund-lost-answer-found',
        'pos-refund-ledger',
        'pos-preauth-completed',
        'pos-preauth-completion-resent',
        'pos-preauth-released',
        'pos-preauth-lapsed',
      ]),
    );
  });

  it.each(names)('replays %s without non-determinism', async (name) => {
    await expect(replayHistoryFrom(POS_HISTORIES, name)).resolves.toBeUndefined();
  });
});
