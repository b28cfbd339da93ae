// Recorded SMS histories (written by test/sms/sms-send-e2e.test.ts and sms-campaign-e2e.test.ts
// through recordHistory; RECORD_HISTORIES=1 to refresh) replay against the current workflow code:
// one per workflow type and branch worth keeping (a send with a refused number, a lost batch; a
// campaign whose lost G2 answer was found by name; a follow by uuid).
import { replayHistory } from '../support/replay';

describe('recorded SMS histories', () => {
  it.each([
    'sms-send-bad-number-among-good',
    'sms-send-5xx-outcome-unknown',
    'sms-campaign-lost-create-found-success',
    'sms-campaign-followed-by-uuid',
  ])('replays %s without non-determinism', async (name) => {
    await expect(replayHistory(name)).resolves.toBeUndefined();
  });
});
