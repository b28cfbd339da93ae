// The CLI's program and one run of it. Every flow's commands: add one line per flow to
// registerCommands; its file (named after the flow) registers its commands under the program or
// under its group (`pay`, `pos`). runCli runs `payflow <args>` to its end, writing to the run's own
// streams and configured from the run's own environment (./context.ts): the bin (../cli.ts) runs it on
// the process's streams; a test can run it inside its own process. It returns the exit code
// (docs/cli.md, "Exit codes") and closes what the run connected.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { loadCliConfig } from '../../config/processes';
import { closeStarters, connectStarters, type StarterContext } from '../connect';
import { runEnv, withIo, type CliIo, type ContextFactory } from './context';
import { addConnectionOptions, takeRunOptions } from './run-options';
import { exitCode, fail, isCommanderError, setJsonOutput, writeDocument } from './output';
import { registerPosRemoteCommands } from './pos-remote';
import { registerPosTerminalCommands } from './pos-terminal';
import { registerPosRefundCommands } from './pos-refund';
import { registerPosPreAuthCommands } from './pos-preauth';
import { registerVendingCommands } from './vending';
import { registerMandateCommands } from './mandate';
import { registerCardPaymentCommands } from './card-payment';
import { registerBankPaymentCommands } from './bank-payment';
import { registerUssdPaymentCommands } from './ussd-payment';
import { registerCheckoutCommands } from './checkout';
import { registerRecurringCommands } from './recurring';
import { registerPaymentStatusCommand, registerPosStatusCommand } from './status';
import { registerVirtualAccountCreditCommands } from './virtual-account-credit';
import { registerVirtualAccountErrorLogSweepCommands } from './virtual-account-error-log-sweep';
import { registerOpsCommands } from './ops';
import { registerScheduledMoneyCommands } from './scheduled-money';
import { registerReconciliationCommands } from './reconciliation';
import { registerSmsCommands } from './sms';
import { registerNotifyCommands } from './merchant-event-delivery';

export function registerCommands(program: Command, context: ContextFactory): void {
  const pos = program.command('pos').description('POS remote requests (E1/E2) and POS terminal transactions (F1-F4)');
  registerPosRemoteCommands(pos, context);
  registerPosTerminalCommands(pos, context);
  registerPosStatusCommand(pos, context);
  registerPosRefundCommands(pos, context);
  registerPosPreAuthCommands(pos, context);
  registerVendingCommands(program, context);
  registerMandateCommands(program, context);
  const pay = program.command('pay').description('card, bank, USSD, hosted checkout and recurring payments');
  registerCardPaymentCommands(pay, context);
  registerBankPaymentCommands(pay, context);
  registerUssdPaymentCommands(pay, context);
  registerCheckoutCommands(pay, context);
  registerRecurringCommands(pay, context);
  registerPaymentStatusCommand(pay, context);
  const va = program
    .command('va')
    .description('virtual accounts (C1-C11): accounts, lookups, credits and the webhook error log');
  registerVirtualAccountCreditCommands(va, context);
  registerVirtualAccountErrorLogSweepCommands(va, context);
  registerOpsCommands(program, context);
  registerScheduledMoneyCommands(program, context);
  registerReconciliationCommands(program, context);
  registerSmsCommands(program, context);
  registerNotifyCommands(program, context);
}

export type { ContextFactory };

// Three levels up from src/starters/commands (tsx) and from dist/starters/commands (the package) alike.
const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};

/** Runs `payflow <args>` (args without node and the script) with `io`; resolves to its exit code. */
export function runCli(args: string[], io: CliIo): Promise<number> {
  return withIo(io, async () => {
    const connection = lazyConnection();
    try {
      await parse(newProgram(io, connection.context), args);
      writeDocument();
    } finally {
      await connection.close();
    }
    return exitCode();
  });
}

/** The starter context, connected on a command's first use (configured from the run's environment and flags), and its closing. */
function lazyConnection() {
  let ctx: Promise<StarterContext> | undefined;
  return {
    context: (): Promise<StarterContext> => (ctx ??= connectStarters(loadCliConfig(runEnv()))),
    close: async (): Promise<void> => {
      const opened = await ctx?.catch(() => undefined);
      if (opened) await closeStarters(opened);
    },
  };
}

async function parse(program: Command, args: string[]): Promise<void> {
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err: unknown) {
    const fromCommander = isCommanderError(err);
    // --help and --version end through exitOverride too: they are not failures.
    if (fromCommander && err.exitCode === 0) return;
    fail(err, { printed: fromCommander }); // commander has printed its own message
  }
}

/** A new program for each run: commander keeps what it parsed on the commands. */
function newProgram(io: CliIo, context: ContextFactory): Command {
  const program = new Command('payflow')
    .description('Start and follow payment workflows')
    .version(version, '-V, --version', 'print the version')
    // Usage errors become exceptions, so they exit 2 (bad input) like any refused input.
    .exitOverride()
    // Before the commands are added: each takes its parent's settings when it is made.
    .configureOutput(outputTo(io));
  registerCommands(program, context);
  addJsonOption(program);
  addConnectionOptions(program);
  program.hook('preAction', (_program, action) => {
    // Under --json stdout holds only the one document: every line a command prints is progress (stderr).
    if (action.opts<{ json?: boolean }>().json) setJsonOutput(true);
    // --profile/--address/--namespace over the environment; --no-follow and --timeout of a flow's start.
    takeRunOptions(action);
  });
  return program;
}

/** commander's help, version and usage errors on the run's streams. */
const outputTo = (io: CliIo) => ({
  writeOut: (s: string) => void io.stdout.write(s),
  writeErr: (s: string) => void io.stderr.write(s),
});

/** `--json` on every command that has none of its own (`ops list`, `notify list` and `reconcile` define theirs). */
function addJsonOption(command: Command): void {
  if (command.commands.length > 0) {
    for (const sub of command.commands) addJsonOption(sub);
    return;
  }
  if (!command.options.some((o) => o.long === '--json'))
    command.option('--json', 'print one JSON document on stdout (progress goes to stderr)');
}
