// The CLI's contract as a user and a script see it (docs/cli.md, "Exit codes" and "--json"), against
// a running stack: one mapping from outcome to exit code (0 success, 1 declined or failed, 2 bad
// input, 3 needs a person, 4 cannot reach Temporal or the service); --json prints exactly one JSON
// document on stdout with progress on stderr; a PIN or OTP is never taken from argv (refused,
// exit 2), it is read from stdin or typed at a prompt that does not echo. The commands run in this
// process (runCli); --version and the prompt on a terminal run the real bin, as a process of its own.
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';
import { getCardPaymentState } from '../../src/starters/card-payment';
import { waitForState } from '../../src/starters/payment-common';
import { cardPaymentFile, cliAgainst, cliCommand, runCli, runCliProcess, type CliResult } from '../support/cli';
import { testConfig, useServices } from '../support/stack';
import { eventually } from '../support/polling';

const config = testConfig();
const stack = useServices(config);
const { cli, cliEnv } = cliAgainst(config, stack);
const dir = mkdtempSync(join(tmpdir(), 'cli-exit-'));

/** A `pay card --file` input for a new reference (a short webhook grace: the outcome comes quickly). */
function cardFile(number: string): { ref: string; file: string } {
  const ref = `cli-exit-${randomUUID()}`;
  return { ref, file: cardPaymentFile(ref, number, { webhookGraceMs: 300 }) };
}

/** stdout must be exactly one JSON document (JSON.parse refuses anything else around it). */
const oneDocument = (stdout: string): Record<string, unknown> => JSON.parse(stdout) as Record<string, unknown>;

describe('exit codes, --json and --version through the real CLI', () => {
  // Waiting out the SDK's connect timeout (about 10 s) uses no CPU and touches nothing the other
  // cases use, so that command starts with the file and its case only reads the result.
  let unreachable: Promise<CliResult>;
  beforeAll(() => {
    unreachable = runCli(['pay', 'status', '--ref', 'R-1', '--json'], {
      env: { ...cliEnv(), TEMPORAL_ADDRESS: '127.0.0.1:9' },
    });
  });

  it('--version prints the package version and exits 0 (the bin, as a process of its own)', async () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    const r = await runCliProcess(['--version'], { env: cliEnv() });
    expect(r).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('a declined card exits 1; --json: the final state is the one document on stdout, progress on stderr', async () => {
    const { ref, file } = cardFile(TEST_CARDS.declined);
    const r = await cli(['pay', 'card', '--file', file, '--json']);
    expect(r.code).toBe(1);
    expect(oneDocument(r.stdout)).toMatchObject({ transactionRef: ref, status: 'failed' });
    expect(r.stderr).toContain(`started payment-${ref}`);
    expect(r.stderr).toContain(`[card ${ref}] failed`);
    expect(r.stdout + r.stderr).not.toContain(TEST_CARDS.declined);
  }, 60_000);

  it('a card paid with the OTP from stdin exits 0, and pay status --json of it exits 0', async () => {
    const { ref, file } = cardFile(TEST_CARDS.otpOnly);
    const follower = cli(['pay', 'card', '--file', file, '--json']);
    await waitForState(
      () => getCardPaymentState(stack.services.starters, ref),
      (s) => s.status === 'awaiting_otp',
      { timeoutMs: 30_000 },
    );
    const otp = await cli(['pay', 'otp', '--ref', ref, '--json'], `${SANDBOX_OTP}\n`);
    expect(otp.code).toBe(0);
    expect(oneDocument(otp.stdout)).toMatchObject({ transactionRef: ref });
    const followed = await follower;
    expect(followed.code).toBe(0);
    expect(oneDocument(followed.stdout)).toMatchObject({ transactionRef: ref, status: 'success' });
    // A finished flow's query replays its whole history: this failed under load when the final
    // verify was a local activity (a nondeterministic replay, src/workflows/steps/payment-confirmation.ts).
    const status = await cli(['pay', 'status', '--ref', ref, '--json']);
    expect({ code: status.code, stderr: status.code === 0 ? '' : status.stderr }).toEqual({ code: 0, stderr: '' });
    expect(oneDocument(status.stdout)).toMatchObject({ status: 'success' });
  }, 90_000);

  it('a payment parked with its outcome unknown exits 3 (pay card stops following, pay status), until a person settles it', async () => {
    await stack.admin.fault({
      method: 'POST',
      path: '^/transaction/initiate/process-payment$',
      kind: 'drop-after-processing',
      count: 1,
    });
    const { ref, file } = cardFile(TEST_CARDS.otpOnly);
    const followed = await cli(['pay', 'card', '--file', file]);
    expect(followed.code).toBe(3);
    expect(followed.stdout).toContain(`[card ${ref}] outcome_unknown`);
    expect((await getCardPaymentState(stack.services.starters, ref)).status).toBe('outcome_unknown');
    const status = await cli(['pay', 'status', '--ref', ref]);
    expect(status.code).toBe(3);
    expect(status.stdout).toContain(`[card ${ref}] outcome_unknown`);
    const resolved = await cli([
      'ops',
      'resolve',
      `payment-${ref}`,
      '--outcome',
      'failed',
      '--reason',
      'test: lapsed at the service',
      '--operator',
      'ops@example.com',
    ]);
    expect(resolved.code).toBe(0);
    // Settled as failed: pay status now exits 1 (declined or failed).
    const settled = await cli(['pay', 'status', '--ref', ref]);
    expect(settled.code).toBe(1);
    expect(settled.stdout).toContain(`[card ${ref}] failed`);
  }, 120_000);

  it('bad input exits 2 and names the field: a PIN or OTP in argv, a missing flag, a file that is not there', async () => {
    // Five commands that share nothing: side by side.
    const [pin, otp, noOtp, missing, noFile] = await Promise.all([
      cli(['pay', 'pin', '--ref', 'R-1', '--pin', '9182']),
      cli(['pay', 'otp', '--ref', 'R-1', '--otp', '918273', '--json']),
      cli(['pay', 'otp', '--ref', 'R-1'], ''),
      cli(['pay', 'card']),
      cli(['pay', 'card', '--file', join(dir, 'absent.json'), '--json']),
    ]);
    expect(pin.code).toBe(2);
    expect(pin.stderr).toContain('--pin is not accepted');
    expect(pin.stderr).toContain('stdin');
    expect(pin.stdout + pin.stderr).not.toContain('9182');
    expect(otp.code).toBe(2);
    expect(oneDocument(otp.stdout)).toMatchObject({
      error: { exitCode: 2, issues: [{ field: '--otp', rule: expect.stringContaining('not accepted') }] },
    });
    expect(otp.stdout + otp.stderr).not.toContain('918273');
    expect(noOtp.code).toBe(2);
    expect(noOtp.stderr).toContain('OTP is required');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--file <path>'");
    expect(noFile.code).toBe(2);
    expect(oneDocument(noFile.stdout)).toMatchObject({ error: { outcome: 'badInput' } });
  }, 60_000);

  it('every command gives one document under --json: its data, or the lines it would have printed', async () => {
    const [summary, templates] = await Promise.all([
      cli(['ops', 'summary', '--json']),
      cli(['sms', 'templates', 'list', '--json']),
    ]);
    expect(summary.code).toBe(0);
    expect(oneDocument(summary.stdout)).toHaveProperty('outcome-unknown');
    expect(templates.code).toBe(0);
    expect(oneDocument(templates.stdout)).toMatchObject({
      exitCode: 0,
      lines: expect.arrayContaining([expect.stringMatching(/^\d+ template\(s\)$/)]),
    });
  }, 60_000);

  it('cannot reach Temporal: exit 4, and under --json an error document', async () => {
    const r = await unreachable;
    expect(r.code).toBe(4);
    expect(oneDocument(r.stdout)).toMatchObject({ error: { outcome: 'unreachable', exitCode: 4 } });
  }, 60_000);

  it('on a terminal, the OTP is typed at a prompt that does not echo it', async () => {
    // `script` gives the CLI a pseudo-terminal: what is typed reaches it as keystrokes, and the
    // terminal's echo (were it on) would put the OTP in the captured output.
    const command = [process.execPath, ...cliCommand(), 'pay', 'otp', '--ref', 'no-such-ref']
      .map((a) => `'${a}'`)
      .join(' ');
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: cliEnv() });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const exited = new Promise<number>((r) => child.on('exit', (code) => r(code ?? 1)));
    const prompted = await eventually(
      () => out,
      (o) => o.includes('OTP (not shown): '),
      { timeoutMs: 60_000, description: 'the OTP prompt', returnLastOnTimeout: true },
    );
    expect(prompted).toContain('OTP (not shown): ');
    child.stdin.write('551177\r');
    expect(await exited).toBe(2); // the OTP was read, and no payment waits under that reference
    child.stdin.end();
    expect(out).not.toContain('551177');
    expect(out).toContain('no payment flow is waiting for this reference');
  }, 90_000);
});
