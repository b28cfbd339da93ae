// A recorded mandate history (create, wrong OTP, approval, two debits, cancel) replays against
// the current workflow code. Re-record with RECORD_HISTORIES=1 npx jest test/mandates/mandate-e2e.
import { replayHistory } from '../helpers/replay';

it('replays the recorded variable-mandate lifecycle without non-determinism', async () => {
  await expect(replayHistory('mandate-variable-lifecycle')).resolves.toBeUndefined();
});
