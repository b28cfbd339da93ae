// CLI: `npm run cli -- pay bank | code`: the direct bank debit flow. The payer's token or OTP may be
// given with --code or (better: not in the shell history) on stdin.
//
//   pay bank --file bank.json | pay code --ref R [--code 123456]
import type { Command } from 'commander';
import { directPaymentStateQuery } from '../../shared/payment-common';
import { startBankPayment, submitBankCode } from '../bank-payment';
import type { ContextFactory } from './context';
import { readJsonFile } from './json-file';
import { follow, renderDirect, runStep, secretArg } from './payment-common';

export function registerBankPaymentCommands(pay: Command, context: ContextFactory): void {
  pay
    .command('bank')
    .requiredOption('--file <path>', 'JSON BankPaymentInput')
    .action(async (o: { file: string }) => {
      const ctx = await context();
      const handle = await startBankPayment(ctx, readJsonFile(o.file));
      console.log(`started ${handle.workflowId}`);
      await follow(handle, directPaymentStateQuery, renderDirect);
    });
  pay
    .command('code')
    .requiredOption('--ref <ref>')
    .option('--code <code>', "the payer's token or OTP (default: read from stdin)")
    .action(async (o: { ref: string; code?: string }) => {
      const ctx = await context();
      const code = await secretArg(o.code, 'CODE');
      await runStep(() => submitBankCode(ctx, o.ref, code), renderDirect);
    });
}
