// Recorded mandate histories replay against the current workflow code:
// - mandate-variable-lifecycle: create, wrong OTP, approval, two debits, cancel;
// - mandate-variable-d3-faults: D3 answers dropped after and before processing and a 503, settled
//   through D5 and resends with the same reference, then the balance spent (completed).
// Re-record with RECORD_HISTORIES=1 npx jest test/mandates/mandate-e2e.
import { replayHistory } from '../helpers/replay';

it('replays the recorded variable-mandate lifecycle without non-determinism', async () => {
  await expect(replayHistory('mandate-variable-lifecycle')).resolves.toBeUndefined();
});

it('replays a mandate whose debits were settled through D5 and resends', async () => {
  await expect(replayHistory('mandate-variable-d3-faults')).resolves.toBeUndefined();
});
