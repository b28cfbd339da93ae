// CLI: `npm run cli -- pay recurring | recurring-cancel`: the recurring flow (a plan charged every
// interval after its first payment by checkout).
//
//   pay recurring --plan P --amount 150000 --email a@b.co --interval-ms 2592000000 [--max-cycles N]
//   pay recurring-cancel --plan P
import type { Command } from 'commander';
import { recurringStateQuery, type RecurringState } from '../../shared/recurring';
import { cancelRecurring, firstPaymentCheckoutUrl, startRecurring } from '../recurring';
import type { ContextFactory } from './context';
import { progress } from './output';
import { follow } from './payment-common';
import { startedFlow, startsFlow } from './run-options';

export const renderRecurring = (s: RecurringState): string =>
  `[recurring ${s.planRef}] ${s.status} cycle=${s.cycle}${s.recentCycles.length ? ` last=${s.recentCycles[s.recentCycles.length - 1].status}` : ''}` +
  `${s.nextChargeAt ? ` next=${s.nextChargeAt}` : ''}${s.reason ? ` (${s.reason})` : ''}`;

export function registerRecurringCommands(pay: Command, context: ContextFactory): void {
  startsFlow(pay.command('recurring'))
    .requiredOption('--plan <ref>')
    .requiredOption('--amount <lowestUnit>')
    .requiredOption('--email <email>')
    .requiredOption('--interval-ms <ms>')
    .option('--currency <c>', 'NGN or USD', 'NGN')
    .option('--max-cycles <n>')
    .action(
      async (o: {
        plan: string;
        amount: string;
        email: string;
        intervalMs: string;
        currency: 'NGN' | 'USD';
        maxCycles?: string;
      }) => {
        const ctx = await context();
        const handle = await startRecurring(ctx, {
          planRef: o.plan,
          amount: Number(o.amount),
          email: o.email,
          intervalMs: Number(o.intervalMs),
          currency: o.currency,
          maxCycles: o.maxCycles ? Number(o.maxCycles) : undefined,
        });
        progress(`first payment: ${await firstPaymentCheckoutUrl(ctx, o.plan)}`);
        if (startedFlow(handle)) await follow(handle, recurringStateQuery, renderRecurring);
      },
    );
  pay
    .command('recurring-cancel')
    .requiredOption('--plan <ref>')
    .action(async (o: { plan: string }) => {
      const ctx = await context();
      await cancelRecurring(ctx, o.plan);
      progress(`cancel requested for ${o.plan}`);
    });
}
