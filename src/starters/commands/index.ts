// Every flow's CLI commands. Add one line per flow.
import type { Command } from 'commander';
import type { ContextFactory } from './context';
import { registerPosCommands } from './pos';
import { registerVendingCommands } from './vending';
import { registerMandateCommands } from './mandates';
import { registerPaymentCommands } from './payments';
import { registerVirtualAccountCommands } from './virtual-accounts';
import { registerOpsCommands } from './ops';
import { registerScheduleCommands } from './schedules';
import { registerReconciliationCommands } from './reconciliation';
import { registerSmsCommands } from './sms';

export function registerCommands(program: Command, context: ContextFactory): void {
  registerPosCommands(program, context);
  registerVendingCommands(program, context);
  registerMandateCommands(program, context);
  registerPaymentCommands(program, context);
  registerVirtualAccountCommands(program, context);
  registerOpsCommands(program, context);
  registerScheduleCommands(program, context);
  registerReconciliationCommands(program, context);
  registerSmsCommands(program, context);
}

export type { ContextFactory };
