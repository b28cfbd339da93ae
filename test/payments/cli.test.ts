// The payment CLI as a user runs it, against a running stack: `pay card` reads the card from a
// file and prints each state until the final one; `pay otp` reads the code from stdin; a refused
// code is an answer (exit code 2), not a crash; card data never reaches the output.
import { randomUUID } from 'node:crypto';
import { waitForState } from '../../src/starters/payment-common';
import { getCardPaymentState } from '../../src/starters/card-payment';
import { SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';
import { cardPaymentFile, cliAgainst, spawnCli } from '../support/cli';
import { testConfig, useServices } from '../support/stack';
import { eventually } from '../support/polling';

const config = testConfig();
const stack = useServices(config);
const { cli, cliEnv } = cliAgainst(config, stack);

describe('the payment CLI as a user runs it, against a running stack', () => {
  it('pay card follows the payment to its final state while pay otp (stdin) completes it; a wrong OTP exits 2 with the reason', async () => {
    const ref = `cli-${randomUUID()}`;
    const file = cardPaymentFile(ref, TEST_CARDS.otpOnly);
    const follower = spawnCli(['pay', 'card', '--file', file], cliEnv());
    const { exited } = follower;

    await waitForState(
      () => getCardPaymentState(stack.services.starters, ref),
      (s) => s.status === 'awaiting_otp',
      { timeoutMs: 30_000 },
    );
    // The follower polls once a second: let it show the waiting state before the OTP moves it on.
    const shown = await eventually(
      () => follower.output(),
      (out) => out.includes(`[card ${ref}] awaiting_otp`),
      { timeoutMs: 30_000, description: 'the follower showing awaiting_otp', returnLastOnTimeout: true },
    );
    expect(shown).toContain(`[card ${ref}] awaiting_otp`);
    const wrong = await cli(['pay', 'otp', '--ref', ref], '000000\n');
    expect(wrong).toMatchObject({ code: 2, stdout: expect.stringContaining('refused: ') });
    expect(wrong.stdout).toContain('Invalid OTP');
    const right = await cli(['pay', 'otp', '--ref', ref], `${SANDBOX_OTP}\n`);
    expect(right.code).toBe(0);
    expect(right.stdout).toMatch(new RegExp(`\\[card ${ref}\\] (confirming|success) card=visa…4242`));

    expect(await exited).toBe(0);
    expect(follower.output()).toContain(`started payment-${ref}`);
    // The masked card (brand and last four) is shown; the PAN never is.
    expect(follower.output()).toContain(`[card ${ref}] awaiting_otp card=visa…4242 expects=otp`);
    expect(follower.output()).toMatch(new RegExp(`\\[card ${ref}\\] success card=visa…4242 by=webhook \\(final\\)`));
    expect(follower.output()).toContain('"status": "success"');
    expect(follower.output() + wrong.stdout + right.stdout).not.toContain(TEST_CARDS.otpOnly);

    expect((await cli(['pay', 'status', '--ref', ref])).stdout).toContain(`[card ${ref}] success`);
    const bad = await cli(['pay', 'checkout', '--ref', ref, '--amount', '10.5', '--email', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/amount must be an integer in the lowest unit.*email must be an e-mail address/);
  }, 90_000);
});
