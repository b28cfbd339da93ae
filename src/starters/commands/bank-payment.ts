// CLI: `npm run cli -- pay bank | code`: the direct bank debit flow. The payer's token or OTP comes
// from stdin or a prompt that does not echo (--code is refused: argv stays in shell history).
//
//   pay bank --file bank.json | echo 123456 | pay code --ref R
import type { Command } from 'commander';
import { directPaymentStateQuery } from '../../shared/payment-common';
import { startBankPayment, submitBankCode } from '../bank-payment';
import type { ContextFactory } from './context';
import { startedFlow, startsFlow } from './run-options';
import { readJsonFile } from './json-file';
import { follow, renderDirect, secretStepCommand } from './payment-common';

export function registerBankPaymentCommands(pay: Command, context: ContextFactory): void {
  startsFlow(pay.command('bank').requiredOption('--file <path>', 'JSON BankPaymentInput')).action(
    async (o: { file: string }) => {
      const ctx = await context();
      const handle = await startBankPayment(ctx, readJsonFile(o.file));
      if (startedFlow(handle)) await follow(handle, directPaymentStateQuery, renderDirect);
    },
  );
  secretStepCommand(pay, context, 'code', "the payer's token or OTP", submitBankCode, renderDirect);
}
