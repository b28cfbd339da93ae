// Every command block of README.md and docs/events.md that a reader runs (RUN_BLOCKS), run as the
// page writes it, taken from the page (test/support/doc-console-blocks.ts): a doc edit that changes a
// command changes what runs here. Each command is a process of its own, as a person with terminals
// runs them: the two listeners (README's and docs/events.md's `notify listen`), `npm start` with the
// variables the README's block gives it (the listener's two printed settings), the walk-through's card
// payment, its PIN and OTP from stdin and its status, then docs/events.md's operator commands
// (`notify list | redeliver | replay`). Each printed line the pages show is checked against the
// output of the process that prints it (times, ports and secrets aside: printedPattern), and every
// command's exit code is 0. Last, what the README says in words: a declined card exits 1, the same
// file again 2, `--version`, `--json`.
//
// Beyond what the pages give, each process gets only what puts it on free ports: the stack its ports, data folder and claim-check PostgreSQL port; the
// CLI the same Temporal address, sandbox URL and PostgreSQL URL; `notify listen` a `--port`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/http/free-port';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { cliCommand, runCli, runCliProcess, type CliResult } from '../support/cli';
import {
  alsoOptions,
  blocksUnder,
  commandsOf,
  printedPattern,
  RUN_BLOCKS,
  shows,
  stepsOf,
  type Command,
  type ConsoleBlock,
  type Step,
} from '../support/doc-console-blocks';
import { freeStackPorts, stackEnvironment, startStackProcess, type StackProcess } from '../support/npm-start';
import { eventually } from '../support/polling';

jest.setTimeout(240_000);

/** The reference the walk-through pays and whose event the operator commands redeliver. */
const REF = 'ORD-CARD-0001';

/** One command in a terminal of its own: what it printed (stdout and stderr as a terminal shows them), its stdout alone, its exit. */
interface Terminal {
  command: string;
  output: () => string;
  stdout: () => string;
  exited: Promise<number>;
  stop: () => void;
}

function open(cmd: Command, args: string[], env: NodeJS.ProcessEnv): Terminal {
  const child = spawn(process.execPath, [...cliCommand(), ...args], { env, cwd: PROJECT_ROOT });
  let out = '';
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => ((out += c.toString('utf8')), (stdout += c.toString('utf8'))));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stdin.end(cmd.stdin);
  const exited = new Promise<number>((r) => child.on('exit', (code) => r(code ?? 1)));
  return { command: cmd.text, output: () => out, stdout: () => stdout, exited, stop: () => child.kill('SIGINT') };
}

/** Waits until `output()` shows `line` (a person reads it before typing the next command). */
const seen = (output: () => string, line: string, timeoutMs = 60_000): Promise<string> =>
  eventually(
    async () => output(),
    (o) => shows(o, line),
    { timeoutMs, description: `a line like "${line}"` },
  );

/** Every line of `steps` is in what `printer` printed, and every JSON document the last on its stdout (see jsonShown). */
function expectShown(printer: Pick<Terminal, 'output' | 'stdout'>, steps: Step[], where: string): void {
  const output = printer.output();
  for (const step of steps) {
    if (step.kind === 'printed') {
      if (!shows(output, step.text))
        throw new Error(`${where} did not print a line like\n  ${step.text}\nit printed:\n${output}`);
    } else if (step.kind === 'json') jsonShown(printer.stdout(), step.value);
  }
}

/**
 * The last JSON document in `output` has the page's fields. `confirmedBy` and `webhooksReceived` as the
 * README explains them: `verify` and 0, or, when the service's webhook woke the flow first, `webhook` and 1.
 */
function jsonShown(output: string, expected: Record<string, unknown>): void {
  const start = output.lastIndexOf('\n{');
  const actual = JSON.parse(output.slice(start + 1)) as Record<string, unknown>;
  const { confirmedBy, webhooksReceived, ...rest } = expected;
  expect(actual).toMatchObject(rest);
  if (confirmedBy !== undefined) {
    expect(actual).toMatchObject(
      actual.confirmedBy === 'webhook'
        ? { confirmedBy: 'webhook', webhooksReceived: 1 }
        : { confirmedBy, webhooksReceived },
    );
  }
}

/** The steps of `block` from the `n`th command (0-based) up to the next one. */
function afterCommand(block: ConsoleBlock, n: number): Step[] {
  const steps = stepsOf(block);
  const at = steps.filter((s) => s.kind === 'command')[n];
  const from = steps.indexOf(at!) + 1;
  const next = steps.findIndex((s, i) => i >= from && s.kind === 'command');
  return steps.slice(from, next < 0 ? undefined : next);
}

/** The steps of `block` before its first command. */
const beforeFirstCommand = (block: ConsoleBlock): Step[] => {
  const steps = stepsOf(block);
  const first = steps.findIndex((s) => s.kind === 'command');
  return steps.slice(0, first < 0 ? undefined : first);
};

/** The settings a listener printed for the worker (`give the worker: NAME=value NAME=value`). */
function settingsPrinted(output: string): Record<string, string> {
  const line = /give the worker: (.*)/.exec(output)?.[1] ?? '';
  return Object.fromEntries([...line.matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

/** The block under `heading` of `file`: exactly as many as RUN_BLOCKS says (a new one must be run here, or marked). */
function blocks(file: (typeof RUN_BLOCKS)[number]['file'], heading: string): ConsoleBlock[] {
  const found = blocksUnder(file, heading);
  expect(found).toHaveLength(RUN_BLOCKS.find((r) => r.file === file && r.heading === heading)!.count);
  return found;
}

describe('the command blocks of README.md and docs/events.md, as written', () => {
  const walk = blocks('README.md', 'Five-minute walk-through: a card payment');
  const [readmeEvents] = blocks('README.md', 'Events to your backend');
  const [eventsListen] = blocks('docs/events.md', 'Turning it on');
  const [operator] = blocks('docs/events.md', 'Operator commands');
  const dataDir = mkdtempSync(join(tmpdir(), 'payflow-doc-commands-'));
  const terminals: Terminal[] = [];
  let stack: StackProcess | undefined;
  let cliEnv: NodeJS.ProcessEnv = process.env;
  let listenerPort = 0;

  /** Runs a CLI command of the page in a terminal of its own (`notify listen` on this run's free port). */
  const run = (cmd: Command, extraArgs: string[] = []): Terminal => {
    expect(cmd.program).toBe('cli');
    const moved = cmd.args[0] === 'notify' && cmd.args[1] === 'listen' ? ['--port', String(listenerPort)] : [];
    const t = open(cmd, [...cmd.args, ...extraArgs, ...moved], { ...cliEnv, ...cmd.env });
    terminals.push(t);
    return t;
  };
  /** Runs it to its end; it must exit 0. */
  const runToEnd = async (cmd: Command, extraArgs: string[] = []): Promise<Terminal> => {
    const t = run(cmd, extraArgs);
    const code = await t.exited;
    if (code !== 0) throw new Error(`${cmd.text} ${extraArgs.join(' ')} exited ${code}:\n${t.output()}`);
    return t;
  };

  afterAll(async () => {
    for (const t of terminals) t.stop();
    await Promise.all(terminals.map((t) => t.exited));
    if (stack && stack.child.exitCode === null && stack.child.signalCode === null) {
      process.kill(-stack.child.pid!, 'SIGINT');
      await stack.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  let listener: Terminal;

  it("the listeners print the worker's two settings; npm start with them prints its banner", async () => {
    const ports = { ...(await freeStackPorts()), pg: await freePort() };
    listenerPort = await freePort();
    const claimCheckUrl = `postgres://postgres:dev-claim-check@127.0.0.1:${ports.pg}/claimcheck`;
    cliEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
      PAYMENTS_BASE_URL: `http://127.0.0.1:${ports.sandbox}`,
      CLAIM_CHECK_DATABASE_URL: claimCheckUrl,
    };

    // docs/events.md's `notify listen`: its two lines, then Ctrl-C (the README's, next, takes the port).
    const [docsListen] = commandsOf(eventsListen!);
    const docs = run(docsListen!);
    const docsLines = afterCommand(eventsListen!, 0);
    await seen(docs.output, (docsLines.at(-1) as { text: string }).text);
    expectShown(docs, docsLines, docsListen!.text);
    docs.stop();
    expect(await docs.exited).toBe(0);

    // The README's: `notify listen`, then `NOTIFY_URL=… NOTIFY_SECRET=… npm start`.
    const [readmeListen, start] = commandsOf(readmeEvents!);
    listener = run(readmeListen!);
    const listenLines = afterCommand(readmeEvents!, 0);
    await seen(listener.output, (listenLines.at(-1) as { text: string }).text);
    expectShown(listener, listenLines, readmeListen!.text);

    // npm start gets the variables its line names, each the value the listener printed for it.
    expect(start!.program).toBe('npm start');
    const printed = settingsPrinted(listener.output());
    const given = Object.fromEntries(
      Object.entries(start!.env).map(([name, shown]) => {
        expect(printed[name]).toMatch(new RegExp(`^${printedPattern(shown).source}$`));
        return [name, printed[name]!];
      }),
    );
    expect(Object.keys(given).sort()).toEqual(['NOTIFY_SECRET', 'NOTIFY_URL']);

    // The walk-through's first block is the same `npm start` (without the two variables): its banner.
    const [walkStart] = commandsOf(walk[0]!);
    expect(walkStart).toMatchObject({ program: 'npm start', env: {}, stdin: '' });
    stack = startStackProcess(stackEnvironment(ports, dataDir, { CLAIM_CHECK_DATABASE_URL: claimCheckUrl, ...given }), {
      detached: true,
    });
    await stack.ready;
    expectShown({ output: stack.output, stdout: stack.output }, afterCommand(walk[0]!, 0), 'npm start');
  });

  it('the walk-through pays ORD-CARD-0001, and the README listener prints its event', async () => {
    if (!stack) throw new Error('the stack did not start (see the first test)');
    // Second terminal: `pay card --file …`, left following the flow.
    const [pay] = commandsOf(walk[1]!);
    const payTerminal = run(pay!);
    const payLines = afterCommand(walk[1]!, 0);
    await seen(payTerminal.output, (payLines.at(-1) as { text: string }).text, 90_000);
    expectShown(payTerminal, payLines, pay!.text);

    // Third terminal: the PIN, then the OTP, each from stdin, each printing its line.
    for (const [n, cmd] of commandsOf(walk[2]!).entries()) {
      const t = await runToEnd(cmd);
      expectShown(t, afterCommand(walk[2]!, n), cmd.text);
    }

    // Step 4: the first terminal prints the final state and the result, and exits 0; then `pay status`.
    expect(await payTerminal.exited).toBe(0);
    expectShown(payTerminal, beforeFirstCommand(walk[3]!), pay!.text);
    for (const [n, cmd] of commandsOf(walk[3]!).entries()) {
      const t = await runToEnd(cmd);
      expectShown(t, afterCommand(walk[3]!, n), cmd.text);
    }

    // The README's events block: what the listener prints once the payment is done.
    const heard = afterCommand(readmeEvents!, 1);
    await seen(listener.output, (heard.at(-1) as { text: string }).text);
    expectShown(listener, heard, 'notify listen');
  });

  it("docs/events.md's operator commands: list, redeliver (the listener hears the same id again), replay", async () => {
    if (!stack) throw new Error('the stack did not start (see the first test)');
    const [list, redeliver, replay] = commandsOf(operator!);
    expect([list, redeliver, replay].map((c) => c!.args.slice(0, 2))).toEqual([
      ['notify', 'list'],
      ['notify', 'redeliver'],
      ['notify', 'replay'],
    ]);
    const eventId = redeliver!.args[2]!;
    /** How many times the listener printed the event (a delivery, a redelivery, a replay). */
    const heardTimes = () =>
      listener
        .output()
        .split('\n')
        .filter((l) => l.endsWith(`id ${eventId}`)).length;
    /**
     * Waits until every delivery listed (each run) has ended, the event's among them, and gives the
     * events listed: what redeliver and replay deliver again. In-process, not a page's command.
     */
    const ended = async (): Promise<string[]> => {
      const rows = await eventually(
        async () =>
          JSON.parse((await runCli(['notify', 'list', '--json'], { env: cliEnv })).stdout) as Array<{
            eventId: string;
            closedAt?: string;
          }>,
        (rs) => rs.some((r) => r.eventId === eventId) && rs.every((r) => r.closedAt !== undefined),
        { timeoutMs: 30_000, description: `every delivery, ${eventId}'s among them, ended` },
      );
      return [...new Set(rows.map((r) => r.eventId))];
    };

    // `notify list --failed`, and with each option its comment names (side by side): nothing gave up,
    // while the delivery is listed without --failed (ended(), below).
    const options = alsoOptions(list!.comment).map((o) => o.map((w) => (w === '<ref>' ? REF : w)));
    expect(options.length).toBeGreaterThan(0);
    const lists = await Promise.all([[], ...options].map((option) => runToEnd(list!, option)));
    for (const [i, t] of lists.entries()) {
      if (i > 0 && options[i - 1]!.includes('--json')) expect(JSON.parse(t.stdout())).toEqual([]);
      else expect(t.output()).toContain('no merchant events');
    }

    // `notify redeliver <id>`: the same event again, under the same id.
    expect(heardTimes()).toBe(1);
    await ended();
    const again = await runToEnd(redeliver!);
    expect(again.output()).toContain(`redelivering ${eventId} (was delivered)`);
    await eventually(heardTimes, (n) => n === 2, { timeoutMs: 30_000, description: 'the redelivered event' });

    // `notify replay --since …`: every ended delivery since then, again, each event once (this one
    // has two runs now): the listener hears it a third time.
    const events = await ended();
    const replayed = await runToEnd(replay!);
    expect(replayed.output()).toContain(`${events.length} event(s) redelivered, 0 still being delivered`);
    await eventually(heardTimes, (n) => n === 3, { timeoutMs: 30_000, description: 'the replayed event' });
  });
  // What the README says in words around its blocks: "A declined card (4000000000000002) … exits 1",
  // "running the same file again exits 2", `--version` and `--json`. Each a CLI process of its own.
  it('a declined card exits 1, the same file again exits 2; --version and --json', async () => {
    if (!stack) throw new Error('the stack did not start (see the first test)');
    const cli = (args: string[]): Promise<CliResult> => runCliProcess(args, { env: cliEnv, timeoutMs: 120_000 });
    const printed = (r: CliResult): string => r.stdout + r.stderr;
    const example = 'examples/card-payment.json';
    const card = JSON.parse(readFileSync(join(PROJECT_ROOT, example), 'utf8')) as {
      transactionRef: string;
      card: { number: string };
    };
    const declinedFile = join(dataDir, 'declined.json');
    writeFileSync(
      declinedFile,
      JSON.stringify({ ...card, transactionRef: 'ORD-CARD-0002', card: { ...card.card, number: '4000000000000002' } }),
    );
    const declined = await cli(['pay', 'card', '--file', declinedFile]);
    expect(declined.code).toBe(1);
    expect(printed(declined)).toMatch(/"status": "failed"/);
    expect(printed(declined)).toContain('"reason": "charge card: Card declined"');

    const again = await cli(['pay', 'card', '--file', example]);
    expect(again.code).toBe(2);
    expect(printed(again)).toContain(`a payment flow for reference ${REF} exists already`);

    const version = await cli(['--version']);
    expect(version.code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout.trim()).toBe(pkg.version);

    // `--json`: one JSON document on stdout.
    const json = await cli(['pay', 'status', '--ref', REF, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ transactionRef: REF, status: 'success' });
  });
});
