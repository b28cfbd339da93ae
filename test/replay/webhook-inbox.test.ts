// Recorded histories of the webhook-holding workflows replay against the current code.
import { replayHistory } from '../support/replay';

// virtual-account-credit: recorded before the durable duplicate check (patch 'va-credit-durable-dedupe');
// -confirmed and -duplicate: after it (recorded by test/webhooks/va-credit-dedupe.test.ts).
// -handed-over (freeze check and hand-over) and the error-log sweep: test/virtual-accounts/va-credit-e2e.test.ts.
it.each([
  'unmatched-payment-webhook',
  'virtual-account-credit',
  'virtual-account-credit-confirmed',
  'virtual-account-credit-duplicate',
  'virtual-account-credit-handed-over',
  'virtual-account-error-log-sweep',
])('replays %s without non-determinism', async (name) => {
  await expect(replayHistory(name)).resolves.toBeUndefined();
});
