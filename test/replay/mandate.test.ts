// Recorded mandate histories replay against the current workflow code (both recorded by
// test/mandates/mandate-e2e.test.ts when missing, or with RECORD_HISTORIES=1):
// - mandate-variable-lifecycle: create, wrong OTP, approval, idempotent debits, cancel;
// - mandate-variable-d3-faults: D3 answers lost after and before processing and a 503, settled by
//   verify on the debit's reference and resent with the same reference, then the balance spent.
import { replayHistory } from '../support/replay';

describe('recorded mandate histories replay against the current workflow code', () => {
  it('replays the variable-mandate lifecycle with idempotent debits', async () => {
    await expect(replayHistory('mandate-variable-lifecycle')).resolves.toBeUndefined();
  });

  it('replays lost D3 answers settled by verify and resends', async () => {
    await expect(replayHistory('mandate-variable-d3-faults')).resolves.toBeUndefined();
  });
});
