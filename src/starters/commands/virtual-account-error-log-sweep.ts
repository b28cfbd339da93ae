// CLI: `npm run cli -- va error-log | sweep`: the webhook error log (C10) and its sweep, now.
import type { Command } from 'commander';
import { sweepWebhookErrorLog } from '../virtual-account-error-log-sweep';
import { withApi, type ContextFactory } from './context';
import { progress } from './output';

export function registerVirtualAccountErrorLogSweepCommands(va: Command, context: ContextFactory): void {
  va.command('error-log')
    .description('the webhook error log (C10): notifications the service could not deliver (the sweep works them off)')
    .action(async () => {
      const page = (await withApi((api) => api.virtualAccounts.webhookErrorLog({ page: 1, perPage: 100 }))).data;
      for (const r of page.rows)
        progress(
          `${r.transaction_ref}  ${r.payload.principal_amount ?? ''} ${r.payload.currency ?? ''}  account ${r.payload.virtual_account_number ?? ''}`,
        );
      progress(`${page.count} row(s)`);
    });

  va.command('sweep')
    .description('sweep the webhook error log now: start or find each credit, delete rows whose credit is recorded')
    .action(async () => {
      const ctx = await context();
      const s = await sweepWebhookErrorLog(ctx);
      progress(
        `rows ${s.rows}: started ${s.started}, already known ${s.known}, deleted ${s.deleted}, left ${s.left}, invalid ${s.invalid.length}`,
      );
      for (const i of s.invalid) progress(`  invalid ${i.transactionRef}: ${i.problem}`);
    });
}
