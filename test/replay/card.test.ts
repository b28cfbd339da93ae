// A recorded card payment (charge, wrong PIN, PIN, OTP, webhook) replays against the current code.
import { replayHistory } from '../helpers/replay';

it('replays the recorded PIN-then-OTP card payment without non-determinism', async () => {
  await expect(replayHistory('card-pin-otp')).resolves.toBeUndefined();
});
