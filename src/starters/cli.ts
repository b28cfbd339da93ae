#!/usr/bin/env node
// `npm run cli -- <command>` (installed as a package: the `payflow` bin, dist/starters/cli.js): start payment flows and follow them until a final state.
// Each flow registers its commands from src/starters/commands/<flow>.ts. What they print and how they
// exit is decided in one place, ./commands/output.ts (exit codes: docs/cli.md).
import './compile-cache';
import 'dotenv/config';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';
import { Command } from 'commander';
import { closeStarters, connectStarters, type StarterContext } from './connect';
import { registerCommands } from './commands';
import { fail, progress, setJsonOutput, writeDocument } from './commands/output';

// Two levels up from src/starters (tsx) and from dist/starters (the package) alike.
const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};

const program = new Command('payflow')
  .description('Start and follow payment workflows')
  .version(version, '-V, --version', 'print the version')
  // Usage errors become exceptions, so they exit 2 (bad input) like any refused input.
  .exitOverride();

let ctx: StarterContext | undefined;
const context = async (): Promise<StarterContext> => (ctx ??= await connectStarters());

registerCommands(program, context);
addJsonOption(program);

program.hook('preAction', (_program, action) => {
  if (!action.opts<{ json?: boolean }>().json) return;
  setJsonOutput(true);
  // Under --json stdout holds only the one document: every line a command logs is progress (stderr).
  console.log = (...args: unknown[]) => progress(format(...args));
});

void program
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    const { code, exitCode } = err as { code?: string; exitCode?: number };
    // --help and --version end through exitOverride too: they are not failures.
    if (code?.startsWith('commander.') && exitCode === 0) return;
    fail(err, { printed: code?.startsWith('commander.') }); // commander has printed its own message
  })
  .then(() => writeDocument())
  .finally(() => close());

async function close(): Promise<void> {
  if (ctx) await closeStarters(ctx);
}

/** `--json` on every command that has none of its own (`ops list`, `notify list` and `reconcile` define theirs). */
function addJsonOption(command: Command): void {
  if (command.commands.length > 0) {
    for (const sub of command.commands) addJsonOption(sub);
    return;
  }
  if (!command.options.some((o) => o.long === '--json'))
    command.option('--json', 'print one JSON document on stdout (progress goes to stderr)');
}
