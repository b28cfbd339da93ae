// Recorded histories of the webhook-holding workflows replay against the current code.
import { replayHistory } from '../helpers/replay';

// virtual-account-credit: recorded before the durable duplicate check (patch 'va-credit-durable-dedupe');
// -confirmed and -duplicate: after it (recorded by test/webhooks/va-credit-dedupe.test.ts).
it.each(['unmatched-payment-webhook', 'virtual-account-credit', 'virtual-account-credit-confirmed', 'virtual-account-credit-duplicate'])('replays %s without non-determinism', async (name) => {
  await expect(replayHistory(name)).resolves.toBeUndefined();
});
