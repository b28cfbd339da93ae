// Every flow's CLI commands. Add one line per flow: its file (named after the flow) registers its
// commands under the program or under its group (`pay`, `pos`).
import type { Command } from 'commander';
import type { ContextFactory } from './context';
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
