// CLI: `npm run cli -- pay recurring | recurring-cancel | cancel-token`: the recurring flow (a plan
// charged every interval after its first payment by checkout), and a saved token's cancel (A5)
// outside a plan.
//
//   pay recurring --plan P --amount 150000 --email a@b.co --interval-ms 2592000000 [--max-cycles N]
//   pay recurring-cancel --plan P
//   pay cancel-token --token AUTH_000000000001 [--retry-for-ms 60000]   exit 0 cancelled, 2 refused, 3 unknown
import type { Command } from 'commander';
import { recurringStateQuery, type RecurringState } from '../../shared/recurring';
import { cancelRecurring, firstPaymentCheckoutUrl, startRecurring } from '../recurring';
import { cancelSavedToken, TOKEN_CANCEL_RETRY, type TokenCancelOutcome } from '../token';
import type { ContextFactory } from './context';
import { printResult, progress, settle, type Outcome } from './output';
import { follow } from './payment-common';
import { startedFlow, startsFlow } from './run-options';

export const renderRecurring = (s: RecurringState): string =>
  `[recurring ${s.planRef}] ${s.status} cycle=${s.cycle}${s.recentCycles.length ? ` last=${s.recentCycles[s.recentCycles.length - 1].status}` : ''}` +
  `${s.nextChargeAt ? ` next=${s.nextChargeAt}` : ''}${s.reason ? ` (${s.reason})` : ''}`;

/** A token cancel's exit: 0 cancelled, 2 refused by the service (its message), 3 unknown (check the token by hand). */
const TOKEN_CANCEL_EXITS: Record<TokenCancelOutcome['status'], Outcome> = {
  cancelled: 'success',
  refused: 'badInput',
  unknown: 'needsPerson',
};

export function renderTokenCancel(r: TokenCancelOutcome): string {
  if (r.status === 'cancelled') return `[token ${r.tokenId}] cancelled (A5)`;
  if (r.status === 'refused') return `[token ${r.tokenId}] refused: ${r.message}`;
  return `[token ${r.tokenId}] unknown: check the token by hand (the cancel failed ${r.attempts} time(s): ${r.message})`;
}

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
  pay
    .command('cancel-token')
    .description('cancel a saved card token (A5) outside a running plan')
    .requiredOption('--token <tokenId>')
    .option(
      '--retry-for-ms <ms>',
      'how long the token cancel (A5) is asked again after a 5xx, timeout or lost answer',
      String(TOKEN_CANCEL_RETRY.forMs),
    )
    .action(async (o: { token: string; retryForMs: string }) => {
      const result = await cancelSavedToken(await context(), { tokenId: o.token, retryForMs: Number(o.retryForMs) });
      printResult(result, renderTokenCancel(result));
      settle(TOKEN_CANCEL_EXITS[result.status]);
    });
}
