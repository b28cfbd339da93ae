// The README's "Five-minute walk-through" and "Events to your backend", run as written: each command
// in a process of its own, as a person with three terminals runs them (the listener, `npm start` with
// the two settings the listener printed, then the CLI), checking the lines the README shows (times,
// ids and secrets aside) and that the listener prints the payment's verified `payment.succeeded`.
//
// Beyond what the README gives, each process gets only what puts it on free ports (so the test runs
// beside others): the stack its ports and data folder (stackEnvironment) and a claim-check PostgreSQL
// port; the CLI the same Temporal address, sandbox URL and PostgreSQL URL (the README's defaults,
// moved); the listener `--port`. No process gets NOTIFY_* but `npm start`, from the listener's lines.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { freePort } from '../../src/http/free-port';
import { cliCommand, runCliProcess, type CliResult } from '../support/cli';
import { freeStackPorts, stackEnvironment, startStackProcess, type StackProcess } from '../support/npm-start';
import { eventually } from '../support/polling';

jest.setTimeout(300_000);

const REF = 'ORD-CARD-0001';
const EXAMPLE = 'examples/card-payment.json';

/** A command left running in a terminal: everything it prints (stdout and stderr, as a terminal shows). */
interface Terminal {
  output: () => string;
  exited: Promise<number>;
  stop: () => void;
}

function openTerminal(args: string[], env: NodeJS.ProcessEnv): Terminal {
  const child = spawn(process.execPath, [...cliCommand(), ...args], { env, cwd: PROJECT_ROOT });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number>((r) => child.on('exit', (code) => r(code ?? 1)));
  return { output: () => out, exited, stop: () => child.kill('SIGINT') };
}

const printed = (r: CliResult): string => r.stdout + r.stderr;

/** Waits until the terminal has printed `text` (a person reads it before typing the next command). */
const seen = (t: Terminal, text: string | RegExp, timeoutMs = 60_000): Promise<string> =>
  eventually(
    async () => t.output(),
    (o) => (typeof text === 'string' ? o.includes(text) : text.test(o)),
    { timeoutMs },
  );

/** The two settings `notify listen` prints for the worker. */
function settingsOf(listenerOutput: string): { NOTIFY_URL: string; NOTIFY_SECRET: string } {
  const m = /give the worker: NOTIFY_URL=(\S+) NOTIFY_SECRET=(whsec_\S+)/.exec(listenerOutput);
  if (!m) throw new Error(`notify listen printed no settings:\n${listenerOutput}`);
  return { NOTIFY_URL: m[1]!, NOTIFY_SECRET: m[2]! };
}

describe("the README's walk-through and events section, command by command", () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'payflow-readme-'));
  const open: Terminal[] = [];
  let stack: StackProcess | undefined;
  /** The CLI's environment: the README gives it nothing; the ports of this run only. */
  let cliEnv: NodeJS.ProcessEnv = process.env;
  const cli = (args: string[], stdin = ''): Promise<CliResult> =>
    runCliProcess(args, { env: cliEnv, stdin, timeoutMs: 120_000 });

  afterAll(async () => {
    for (const t of open) t.stop();
    await Promise.all(open.map((t) => t.exited));
    // A stack that already exited (start-up failed) has no process group left to stop.
    if (stack && stack.child.exitCode === null && stack.child.signalCode === null) {
      process.kill(-stack.child.pid!, 'SIGINT');
      await stack.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('pays ORD-CARD-0001 by card, and the listener prints its payment.succeeded', async () => {
    const ports = { ...(await freeStackPorts()), pg: await freePort(), listener: await freePort() };
    const claimCheckUrl = `postgres://postgres:dev-claim-check@127.0.0.1:${ports.pg}/claimcheck`;
    cliEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
      PAYMENTS_BASE_URL: `http://127.0.0.1:${ports.sandbox}`,
      CLAIM_CHECK_DATABASE_URL: claimCheckUrl,
    };

    // Terminal 0: `npm run cli -- notify listen`.
    const listener = openTerminal(['notify', 'listen', '--port', String(ports.listener)], cliEnv);
    open.push(listener);
    await seen(listener, 'give the worker:');
    expect(listener.output()).toContain(
      `listening on http://127.0.0.1:${ports.listener}/events: each event is verified, then printed`,
    );
    const settings = settingsOf(listener.output());
    expect(settings.NOTIFY_URL).toBe(`http://127.0.0.1:${ports.listener}/events`);

    // Terminal 1: `NOTIFY_URL=… NOTIFY_SECRET=… npm start`, with exactly the two settings printed.
    stack = startStackProcess(
      stackEnvironment(ports, dataDir, { CLAIM_CHECK_DATABASE_URL: claimCheckUrl, ...settings }),
      { detached: true },
    );
    await stack.ready;
    expect(stack.output()).toContain('Payments stack is up:');
    expect(stack.output()).toMatch(/Temporal server {3}127\.0\.0\.1:\d+ \(namespace default\)/);
    expect(stack.output()).toContain(`Payments sandbox  http://127.0.0.1:${ports.sandbox}`);

    // Terminal 2, step 1: `npm run cli -- pay card --file examples/card-payment.json`, left following.
    const pay = openTerminal(['pay', 'card', '--file', EXAMPLE], cliEnv);
    open.push(pay);
    await seen(pay, `[card ${REF}] awaiting_pin card=mastercard…4444 expects=pin`);
    expect(pay.output()).toContain(`started payment-${REF}`);
    expect(pay.output()).toContain(`[card ${REF}] charging card=mastercard…4444`);

    // Terminal 3, step 2: the PIN and the OTP from stdin.
    expect(printed(await cli(['pay', 'pin', '--ref', REF], '1234\n'))).toContain(
      `[card ${REF}] awaiting_otp card=mastercard…4444 expects=otp`,
    );
    expect(printed(await cli(['pay', 'otp', '--ref', REF], '123456\n'))).toContain(
      `[card ${REF}] confirming card=mastercard…4444`,
    );

    // Step 4: the first terminal prints the final state and the result, and exits 0. The README shows
    // `by=verify`; the service's webhook may confirm it first (a race on the machine's load): either.
    expect(await pay.exited).toBe(0);
    expect(pay.output()).toMatch(/\[card ORD-CARD-0001\] success card=mastercard…4444 by=(verify|webhook) \(final\)/);
    expect(pay.output()).toMatch(/"status": "success"/);
    expect(pay.output()).toMatch(/"confirmedBy": "(verify|webhook)"/);

    // The events section: the listener prints the verified event.
    const heard = await seen(listener, /payment\.succeeded {2}card ORD-CARD-0001 {2}success 250000 NGN {2}seq 1/);
    expect(heard).toContain(`id evt_payment-${REF}_payment.succeeded`);

    const status = await cli(['pay', 'status', '--ref', REF]);
    expect(printed(status)).toMatch(
      /\[card ORD-CARD-0001\] success card=mastercard…4444 by=(verify|webhook) \(final\)/,
    );
    expect(status.code).toBe(0);
  });

  it('a declined card exits 1, the same file again exits 2; --version, --json and notify list', async () => {
    if (!stack) throw new Error('the stack did not start (see the first test)');
    // "A declined card (4000000000000002) … exits 1": the example with that card, under another reference.
    const example = JSON.parse(readFileSync(join(PROJECT_ROOT, EXAMPLE), 'utf8')) as {
      transactionRef: string;
      card: { number: string };
    };
    const declinedFile = join(dataDir, 'declined.json');
    writeFileSync(
      declinedFile,
      JSON.stringify({
        ...example,
        transactionRef: 'ORD-CARD-0002',
        card: { ...example.card, number: '4000000000000002' },
      }),
    );
    const declined = await cli(['pay', 'card', '--file', declinedFile]);
    expect(declined.code).toBe(1);
    expect(printed(declined)).toMatch(/"status": "failed"/);
    expect(printed(declined)).toContain('"reason": "charge card: Card declined"');

    // "Running the same file again exits 2".
    const again = await cli(['pay', 'card', '--file', EXAMPLE]);
    expect(again.code).toBe(2);
    expect(printed(again)).toContain(`a payment flow for reference ${REF} exists already`);

    const version = await cli(['--version']);
    expect(version.code).toBe(0);
    const { version: packageVersion } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version.stdout.trim()).toBe(packageVersion);

    // `--json`: one JSON document on stdout.
    const json = await cli(['pay', 'status', '--ref', REF, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ transactionRef: REF, status: 'success' });

    // docs/events.md's tools, as the README points to them: the delivery is listed, delivered.
    const list = await cli(['notify', 'list']);
    expect(list.code).toBe(0);
    expect(printed(list)).toMatch(/ {2}delivered {2}ORD-CARD-0001 {2}evt_payment-ORD-CARD-0001_payment\.succeeded/);
  });
});
