// CLI: `npm run cli -- vend <command>`.
//
//   vend buy --order ORD-9 --provider EKEDC --meter 45067198783 --meter-type prepaid \
//            --amount 5000 --phone 08012345678 --email ada@example.com
//   vend status --order ORD-9
import type { Command } from 'commander';
import { VEND_FINAL_STATUSES, vendStateQuery, type VendResult, type VendState } from '../../shared/vending';
import { asJson, followToResult, lineAndJson, startedFlow, startsFlow } from './run-options';
import { startVend, vendHandle } from '../vending';
import { withApi, type ContextFactory } from './context';
import { printResult } from './output';

export function renderVendState(s: VendState): string {
  const last = s.steps.at(-1);
  const step = last ? ` last=${last.op}:${last.outcome}` : '';
  const final = VEND_FINAL_STATUSES.includes(s.status) ? ' (final)' : '';
  return `[vend ${s.orderRef}] ${s.status}${s.reference ? ` reference=${s.reference}` : ''} attempt=${s.attempt}${step}${final}`;
}

export function registerVendingCommands(program: Command, context: ContextFactory): void {
  const vend = program
    .command('vend')
    .description('electricity vending (H1-H4): one token per order, never vended twice');

  const buy = vend
    .command('buy')
    .description('look up the meter, check minimum_vend, buy the token and print it')
    .requiredOption('--order <ref>', 'your order reference (one sale per reference)')
    .requiredOption('--provider <code>', 'provider code, e.g. EKEDC')
    .requiredOption('--meter <number>', 'meter number')
    .option('--meter-type <type>', 'prepaid or postpaid', 'prepaid')
    .requiredOption('--amount <amount>', 'amount to vend (whole units)')
    .requiredOption('--phone <number>', 'receives the token by SMS')
    .requiredOption('--email <address>', 'receives the token by e-mail')
    .option('--no-follow', 'start and return without following');
  startsFlow(buy).action(
    async (o: {
      order: string;
      provider: string;
      meter: string;
      meterType: string;
      amount: string;
      phone: string;
      email: string;
    }) => {
      const ctx = await context();
      const handle = await startVend(ctx, {
        order_ref: o.order,
        provider: o.provider,
        meter_no: o.meter,
        meter_type: o.meterType,
        amount: Number(o.amount),
        phone_number: o.phone,
        email: o.email,
      });
      if (!startedFlow(handle)) return;
      await followToResult(handle, vendStateQuery, renderVendState, {
        text: (r: VendResult) => lineAndJson(`${renderVendState(r)} — ${r.message}`, r),
      });
    },
  );

  vend
    .command('providers')
    .description('the electricity providers (H1) and their codes (what --provider takes)')
    .action(async () => {
      const providers = (await withApi((api) => api.vending.providers())).data;
      const lines = providers.map((p) => `${p.code.padEnd(6)}  ${p.name ?? ''}`);
      printResult(providers, [...lines, `${providers.length} provider(s)`]);
    });

  vend
    .command('status')
    .description('show a sale and follow it until it ends')
    .requiredOption('--order <ref>', 'order reference')
    .action(async (o: { order: string }) => {
      const ctx = await context();
      await followToResult(vendHandle(ctx, o.order), vendStateQuery, renderVendState, { text: asJson });
    });
}
