// Recorded SMS histories (written by the e2e tests through recordHistory; RECORD_HISTORIES=1 to
// refresh) replay against the current workflow code: a change cannot break running sends or
// campaign followers.
import { replayHistory } from '../support/replay';

describe('recorded SMS histories', () => {
  it.each(['sms-send-bad-number-among-good', 'sms-send-5xx-outcome-unknown', 'sms-campaign-lost-create-found-success'])(
    'replays %s without non-determinism',
    async (name) => {
      await expect(replayHistory(name)).resolves.toBeUndefined();
    },
  );
});
