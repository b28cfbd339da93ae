// Recorded histories of the webhook-holding workflows replay against the current code.
import { replayHistory } from '../support/replay';

// unmatched-payment-webhook: test/replay/record-webhook-inbox.ts.
// virtual-account-credit-confirmed and -duplicate: test/webhooks/va-credit-dedupe.test.ts.
// virtual-account-credit-handed-over (freeze check and hand-over) and the error-log sweep:
// test/virtual-accounts/va-credit-e2e.test.ts.
it.each([
  'unmatched-payment-webhook',
  'virtual-account-credit-confirmed',
  'virtual-account-credit-duplicate',
  'virtual-account-credit-handed-over',
  'virtual-account-error-log-sweep',
])('replays %s without non-determinism', async (name) => {
  await expect(replayHistory(name)).resolves.toBeUndefined();
});
