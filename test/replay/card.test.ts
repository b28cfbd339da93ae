// Recorded card payments replay against the current workflow code (a change that would break
// payments already waiting for a PIN, an OTP or 3DS fails here):
//  - card-pin-otp: charge, a wrong PIN refused, PIN, OTP, webhook;
//  - card-3ds-failed: charge, 3DS requeried while pending, found Failed;
//  - card-otp-answer-lost: the OTP's answer lost, settled by verify, confirmed by the webhook;
//  - card-charge-resent: B1 lost before it arrived, proved absent by verify, the card submitted again, sent once more;
//  - card-charge-never-received: B1 lost before it arrived, the card not submitted again: expired, sent once;
//  - card-otp-only: OTP only, the webhook verified by the final verify.
// Re-record with RECORD_HISTORIES=1 npx jest test/payments/card-e2e.test.ts.
import { replayHistory } from '../support/replay';

it.each([
  'card-pin-otp',
  'card-3ds-failed',
  'card-otp-answer-lost',
  'card-charge-resent',
  'card-charge-never-received',
  'card-otp-only',
])('replays %s without non-determinism', async (name) => {
  await expect(replayHistory(name)).resolves.toBeUndefined();
});
