// Every flow's CLI commands. Add one line per flow.
import type { Command } from 'commander';
import type { StarterContext } from '../connect';
import { registerPosCommands } from './pos';
import { registerVendingCommands } from './vending';

export type ContextFactory = () => Promise<StarterContext>;

export function registerCommands(program: Command, context: ContextFactory): void {
  // flows register here, e.g. registerMandateCommands(program, context);
  registerPosCommands(program, context);
  registerVendingCommands(program, context);
}
