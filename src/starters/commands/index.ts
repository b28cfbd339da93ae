// Every flow's CLI commands. Add one line per flow.
import type { Command } from 'commander';
import type { StarterContext } from '../connect';

export type ContextFactory = () => Promise<StarterContext>;

export function registerCommands(_program: Command, _context: ContextFactory): void {
  // flows register here, e.g. registerMandateCommands(program, context);
}
