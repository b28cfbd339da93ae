// The CLI as a merchant tries the virtual-account path without code (issue #44 §5), and the run
// options every command takes (issue #39 §4), against a running stack with the sandbox:
// - `vend providers` (H1), `va transactions --all` (C4), `va simulate-credit` (C9) and
//   `pay simulate-transfer` (A2); the two simulations are refused in production mode.
// - `--profile`, `--address`, `--namespace` override TEMPORAL_PROFILE, TEMPORAL_ADDRESS and
//   TEMPORAL_NAMESPACE; `--no-follow` returns right after the start with the workflow id (exit 0);
//   `--timeout` stops following (exit 3) while the flow goes on.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_CARDS } from '../../src/sandbox';
import { getCardPaymentState } from '../../src/starters/card-payment';
import { cardPaymentFile, cliAgainst, runCli, type CliResult } from '../support/cli';
import { eventually } from '../support/polling';
import { devServerAddress, testConfig, useServices } from '../support/stack';
import { call } from '../sandbox/helpers';

jest.setTimeout(90_000);

const config = testConfig();
const stack = useServices(config);
const { cli, cliEnv } = cliAgainst(config, stack);
const dir = mkdtempSync(join(tmpdir(), 'cli-run-options-'));
const json = (r: CliResult): unknown => JSON.parse(r.stdout);
/** A reference no flow has: `pay status` of it exits 2 once it reached Temporal, 4 when it could not. */
const NO_FLOW = ['pay', 'status', '--ref', 'never-started-ref'];

describe('trying the virtual-account path without code', () => {
  it('vend providers lists the providers (H1) (the codes --provider takes); --json prints them as one document', async () => {
    const r = await cli(['vend', 'providers']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^EKEDC\s+Eko Electricity Distribution Company$/m);
    expect(r.stdout).toContain('11 provider(s)');
    const doc = await cli(['vend', 'providers', '--json']);
    expect(doc.code).toBe(0);
    expect((json(doc) as { code: string }[]).map((p) => p.code)).toEqual(expect.arrayContaining(['IE', 'JED']));
  });

  it('va simulate-credit credits an account (C9) and va transactions --all shows it, unfiltered (C4)', async () => {
    const id = `CUST${randomUUID().slice(0, 8)}`;
    const bvn = join(dir, `${id}.txt`);
    writeFileSync(bvn, '12345678901\n', { mode: 0o600 });
    const created = await runCli(
      [
        'va',
        'create',
        '--customer-id',
        id,
        '--first-name',
        'Ada',
        '--last-name',
        'Obi',
        '--phone',
        '08012345678',
        '--dob',
        '01/15/1990',
        '--gender',
        '2',
        '--address',
        '1 Marina',
        '--bvn-file',
        bvn,
      ],
      { env: cliEnv() },
    );
    expect(created.code).toBe(0);
    const account = (JSON.parse(created.stdout) as { virtual_account_number: string }).virtual_account_number;

    const credit = await cli(['va', 'simulate-credit', '--account', account, '--amount', '1200.00']);
    expect(credit).toMatchObject({ code: 0, stdout: expect.stringContaining(`credited ${account} with 1200.00 NGN`) });

    const all = await cli(['va', 'transactions', '--all', '--json']);
    expect(all.code).toBe(0);
    expect(json(all)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ virtual_account_number: account, principal_amount: '1200.00' }),
      ]),
    );
    const lines = await cli(['va', 'transactions', '--all']);
    expect(lines.stdout).toMatch(new RegExp(`^\\S+  ${account}  1200\\.00 NGN  settled `, 'm'));

    // The merchant's transactions (C4) take no filter; an account that is not 10 digits is refused before anything is sent.
    expect((await cli(['va', 'transactions', '--all', '--account', account])).code).toBe(2);
    expect((await cli(['va', 'simulate-credit', '--account', '12345'])).code).toBe(2);
  });

  it("pay simulate-transfer pays a checkout's dynamic account (A2): the checkout ends success; a wrong amount is refused", async () => {
    const ref = `cli-a2-${randomUUID()}`;
    const args = ['pay', 'checkout', '--ref', ref, '--amount', '50000', '--email', 'ada@example.com', '--no-follow'];
    const started = await cli(args);
    expect(started).toMatchObject({ code: 0, stdout: expect.stringContaining(`started payment-${ref}`) });
    const transfer = await call(stack.services.sandboxUrl!, 'POST', `/checkout/${ref}/transfer`, {});
    const account = transfer.body!.data.virtual_account_number as string;

    // Not a whole amount in kobo: refused by the client before anything is sent.
    expect((await cli(['pay', 'simulate-transfer', '--account', account, '--amount', '500.5'])).code).toBe(2);
    const wrong = await cli(['pay', 'simulate-transfer', '--account', account, '--amount', '49999']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('amount does not match the amount due (50000)');

    const paid = await cli(['pay', 'simulate-transfer', '--account', account, '--amount', '50000']);
    expect(paid).toMatchObject({ code: 0, stdout: `paid 50000 into ${account}: Payment successful\n` });
    await eventually(
      async () => json(await cli(['pay', 'status', '--ref', ref, '--json'])) as { status: string },
      (state) => state.status === 'success',
      { timeoutMs: 40_000, intervalMs: 500, description: 'the checkout paid by a simulated transfer to end success' },
    );
  });

  it('in production mode both simulations are refused (exit 2) before anything is sent', async () => {
    const env = { ...cliEnv(), PAYMENTS_ENVIRONMENT: 'production' };
    for (const args of [
      ['va', 'simulate-credit', '--account', '4000000000'],
      ['pay', 'simulate-transfer', '--account', '9900000000', '--amount', '100'],
    ]) {
      const r = await runCli(args, { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('PAYMENTS_ENVIRONMENT is production: this call exists in the test environment only');
    }
  });
});

describe('--profile, --address and --namespace on every command; --no-follow and --timeout on every start', () => {
  // Waiting out the SDK's connect timeout (about 10 s) uses no CPU: started with the file.
  let flagToNowhere: Promise<CliResult>;
  beforeAll(() => {
    flagToNowhere = runCli([...NO_FLOW, '--address', '127.0.0.1:9'], { env: cliEnv() });
  });

  it('--address overrides TEMPORAL_ADDRESS, both ways', async () => {
    const env = { ...cliEnv(), TEMPORAL_ADDRESS: '127.0.0.1:9' };
    const r = await runCli([...NO_FLOW, '--address', devServerAddress()], { env });
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('never-started-ref'),
    });
    expect((await flagToNowhere).code).toBe(4); // the environment's address was good; the flag's wins
  });

  it('--namespace overrides TEMPORAL_NAMESPACE', async () => {
    const env = { ...cliEnv(), TEMPORAL_NAMESPACE: 'no-such-namespace' };
    const without = await runCli(NO_FLOW, { env });
    expect(without.stderr).toMatch(/no-such-namespace/i);
    const withFlag = await runCli([...NO_FLOW, '--namespace', 'default'], { env });
    expect({ code: withFlag.code, stderr: withFlag.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('never-started-ref'),
    });
  });

  it('--profile overrides TEMPORAL_PROFILE (the profile of TEMPORAL_CONFIG_FILE)', async () => {
    const file = join(dir, 'temporal.toml');
    writeFileSync(
      file,
      `[profile.nowhere]\naddress = "127.0.0.1:9"\n\n[profile.local]\naddress = "${devServerAddress()}"\nnamespace = "default"\n`,
    );
    const env = { ...cliEnv(), TEMPORAL_ADDRESS: '', TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'missing' };
    const without = await runCli(NO_FLOW, { env });
    expect(without.stderr).toContain('TEMPORAL_PROFILE: names a profile the config file does not have');
    const withFlag = await runCli([...NO_FLOW, '--profile', 'local'], { env });
    expect({ code: withFlag.code, stderr: withFlag.stderr }).toEqual({
      code: 2,
      stderr: expect.stringContaining('never-started-ref'),
    });
  });

  it('a malformed flag value is refused by its name, exit 2', async () => {
    const address = await cli([...NO_FLOW, '--address', 'not an address']);
    expect(address).toMatchObject({ code: 2, stderr: expect.stringContaining('--address must be host:port') });
    const file = cardPaymentFile(`cli-bad-timeout-${randomUUID()}`, TEST_CARDS.declined);
    const timeout = await cli(['pay', 'card', '--file', file, '--timeout', 'soon']);
    expect(timeout).toMatchObject({ code: 2, stderr: expect.stringContaining('--timeout must be a duration') });
  });

  it('--no-follow returns right after the start with the workflow id, exit 0; the flow goes on', async () => {
    const ref = `cli-no-follow-${randomUUID()}`;
    const file = cardPaymentFile(ref, TEST_CARDS.otpOnly);
    const r = await cli(['pay', 'card', '--file', file, '--no-follow', '--json']);
    expect(r.code).toBe(0);
    expect(json(r)).toMatchObject({ workflowId: `payment-${ref}`, followed: false });
    const human = await cli(['pay', 'card', '--file', cardPaymentFile(`${ref}-2`, TEST_CARDS.otpOnly), '--no-follow']);
    expect(human).toMatchObject({ code: 0, stdout: `started payment-${ref}-2\n` });
    await eventually(
      () => getCardPaymentState(stack.services.starters, ref),
      (state) => state.status === 'awaiting_otp',
      { timeoutMs: 30_000, description: 'the flow started with --no-follow to wait for its OTP' },
    );
  });

  it('--timeout stops following after it with exit 3; the flow goes on', async () => {
    const ref = `cli-timeout-${randomUUID()}`;
    const r = await cli([
      'pay',
      'card',
      '--file',
      cardPaymentFile(ref, TEST_CARDS.otpOnly),
      '--timeout',
      '2s',
      '--json',
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`still running after --timeout 2s: payment-${ref} goes on`);
    expect(json(r)).toMatchObject({ error: { outcome: 'needsPerson', exitCode: 3 } });
    expect((await getCardPaymentState(stack.services.starters, ref)).status).toBe('awaiting_otp');
  });

  it('--help: the connection flags on every command, --no-follow and --timeout on the commands that start a flow', async () => {
    for (const command of [
      ['vend', 'providers'],
      ['ops', 'summary'],
      ['pay', 'status'],
      ['va', 'simulate-credit'],
    ]) {
      const help = (await cli([...command, '--help'])).stdout;
      for (const flag of ['--profile <name>', '--address <host:port>', '--namespace <namespace>'])
        expect({ command, has: help.includes(flag) }).toEqual({ command, has: true });
      expect({ command, follow: help.includes('--no-follow') }).toEqual({ command, follow: false });
    }
    for (const command of [['pay', 'card'], ['vend', 'buy'], ['mandate', 'start'], ['reconcile'], ['sms', 'send']]) {
      const help = (await cli([...command, '--help'])).stdout;
      for (const flag of ['--no-follow', '--timeout <duration>', '--profile <name>'])
        expect({ command, has: help.includes(flag) }).toEqual({ command, has: true });
    }
    // va create's --address is the customer's (its own flag): the Temporal address is not taken there.
    expect((await cli(['va', 'create', '--help'])).stdout).toContain('--address <text>');
  });
});
