// Recorded histories of the webhook-holding workflows replay against the current code.
import { replayHistory } from '../helpers/replay';

it.each(['unmatched-payment-webhook', 'virtual-account-credit'])('replays %s without non-determinism', async (name) => {
  await expect(replayHistory(name)).resolves.toBeUndefined();
});
