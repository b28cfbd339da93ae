// Recorded mandate histories replay against the current workflow code:
// - mandate-variable-lifecycle: create, wrong OTP, approval, two debits, cancel;
// - mandate-variable-d3-faults: D3 answers dropped after and before processing and a 503, settled
//   through D5 and resends with the same reference, then the balance spent (completed).
// The two pre-patch histories must never be re-recorded (they prove old runs still replay); the
// *-send-once ones are recorded by test/mandates/mandate-e2e when missing (or with RECORD_HISTORIES=1).
import { replayHistory } from '../support/replay';

describe('recorded mandate histories replay against the current workflow code', () => {
  it('replays the recorded variable-mandate lifecycle without non-determinism', async () => {
    await expect(replayHistory('mandate-variable-lifecycle')).resolves.toBeUndefined();
  });

  it('replays a mandate whose debits were settled through D5 and resends', async () => {
    await expect(replayHistory('mandate-variable-d3-faults')).resolves.toBeUndefined();
  });

  // Recorded after the patch 'mandate-money-safety' (D1/D3 through send-once, idempotency keys).
  it('replays the variable-mandate lifecycle with idempotent debits (send-once path)', async () => {
    await expect(replayHistory('mandate-variable-lifecycle-send-once')).resolves.toBeUndefined();
  });

  it('replays lost D3 answers settled by verify and resends (send-once path)', async () => {
    await expect(replayHistory('mandate-variable-d3-faults-send-once')).resolves.toBeUndefined();
  });
});
