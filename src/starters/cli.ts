#!/usr/bin/env node
// `npm run cli -- <command>` (installed as a package: the `payflow` bin, dist/starters/cli.js): start payment flows and follow them until a final state.
// Each flow registers its commands from src/starters/commands/<flow>.ts.
import 'dotenv/config';
import { Command } from 'commander';
import { closeStarters, connectStarters, type StarterContext } from './connect';
import { registerCommands } from './commands';

const program = new Command('payflow').description('Start and follow payment workflows');

let ctx: StarterContext | undefined;
const context = async (): Promise<StarterContext> => (ctx ??= await connectStarters());

registerCommands(program, context);

program
  .parseAsync(process.argv)
  .then(() => close())
  .catch((err: unknown) => {
    // A refused input is a StarterInputError: its message names each field and rule ('invalid <what> input: <field> <rule>; ...').
    console.error((err as Error).message);
    process.exitCode = 1;
    return close();
  });

async function close(): Promise<void> {
  if (ctx) await closeStarters(ctx);
}
