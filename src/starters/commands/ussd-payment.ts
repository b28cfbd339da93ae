// CLI: `npm run cli -- pay ussd`: the USSD payment flow.
//
//   pay ussd --file ussd.json                  prints the code to dial, then each state until final
import type { Command } from 'commander';
import { directPaymentStateQuery } from '../../shared/payment-common';
import { startUssdPayment } from '../ussd-payment';
import type { ContextFactory } from './context';
import { startedFlow, startsFlow } from './run-options';
import { readJsonFile } from './json-file';
import { follow, renderDirect } from './payment-common';

export function registerUssdPaymentCommands(pay: Command, context: ContextFactory): void {
  startsFlow(pay.command('ussd').requiredOption('--file <path>', 'JSON UssdPaymentInput')).action(
    async (o: { file: string }) => {
      const ctx = await context();
      const { ussdCode, expiresAt, handle } = await startUssdPayment(ctx, readJsonFile(o.file));
      const line = `started ${handle.workflowId}: dial ${ussdCode}${expiresAt ? ` before ${expiresAt}` : ''}`;
      if (startedFlow(handle, line)) await follow(handle, directPaymentStateQuery, renderDirect);
    },
  );
}
