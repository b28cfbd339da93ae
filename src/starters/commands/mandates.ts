// CLI: `npm run cli -- mandate <command>`.
//
//   mandate start --file mandate.json          (a MandateInput; the BVN stays out of argv)
//   mandate otp --ref M1 --otp 123456
//   mandate debit --ref M1 --amount 250000
//   mandate cancel --ref M1
//   mandate status --ref M1 [--follow]
//   mandate list [--status approved] [--account 0123456789] [--page-size 20]
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfig } from '../../config/config';
import { PaymentsClient } from '../../api';
import { mandateStateQuery, mandateWorkflowId, type MandateInput, type MandateState } from '../../shared/mandate';
import { followUntilDone } from '../progress';
import { cancelMandate, debitMandate, getMandateState, listMandates, startMandate, submitMandateOtp } from '../mandates';
import type { ContextFactory } from './index';

export function renderMandateState(s: MandateState): string {
  const next = s.nextDebitAt ? ` next=${s.nextDebitAt}` : '';
  const end = s.endReason ? ` (${s.endReason})` : '';
  return `[mandate ${s.mandateRef}] ${s.status} balance=${s.balance} debited=${s.totalDebited} debits=${s.debitCount}${next}${end}`;
}

const FINAL = ['cancelled', 'expired', 'completed', 'failed'];

export function registerMandateCommands(program: Command, context: ContextFactory): void {
  const mandate = program.command('mandate').description('direct-debit mandates (D1-D6)');

  mandate
    .command('start')
    .requiredOption('--file <path>', 'JSON file with the mandate input')
    .option('--no-follow', 'start and return')
    .action(async (o: { file: string; follow: boolean }) => {
      const ctx = await context();
      const input = JSON.parse(readFileSync(o.file, 'utf8')) as MandateInput;
      const handle = await startMandate(ctx.client, ctx.taskQueue, input);
      console.log(`started ${handle.workflowId}; send the customer's OTP with: mandate otp --ref ${input.mandateRef} --otp <code>`);
      if (o.follow) await followUntilDone(handle, mandateStateQuery, renderMandateState);
    });

  mandate
    .command('otp')
    .requiredOption('--ref <mandateRef>')
    .requiredOption('--otp <code>')
    .action(async (o: { ref: string; otp: string }) => {
      const ctx = await context();
      console.log(renderMandateState(await submitMandateOtp(ctx.client, o.ref, o.otp)));
    });

  mandate
    .command('debit')
    .requiredOption('--ref <mandateRef>')
    .requiredOption('--amount <kobo>', 'integer, kobo')
    .option('--narration <text>')
    .action(async (o: { ref: string; amount: string; narration?: string }) => {
      if (!/^\d+$/.test(o.amount)) throw new Error('--amount must be an integer in kobo');
      const ctx = await context();
      const d = await debitMandate(ctx.client, o.ref, Number(o.amount), o.narration);
      console.log(`${d.reference} ${d.status} ${d.amount}${d.error ? ` (${d.error})` : ''}`);
    });

  mandate
    .command('cancel')
    .requiredOption('--ref <mandateRef>')
    .action(async (o: { ref: string }) => {
      const ctx = await context();
      console.log(renderMandateState(await cancelMandate(ctx.client, o.ref)));
    });

  mandate
    .command('status')
    .requiredOption('--ref <mandateRef>')
    .option('--follow', 'print each change until the mandate ends')
    .action(async (o: { ref: string; follow?: boolean }) => {
      const ctx = await context();
      const state = await getMandateState(ctx.client, o.ref);
      console.log(renderMandateState(state));
      if (o.follow && !FINAL.includes(state.status)) {
        await followUntilDone(ctx.client.workflow.getHandle(mandateWorkflowId(o.ref)), mandateStateQuery, renderMandateState);
      }
    });

  mandate
    .command('list')
    .description("the service's mandates (D5), with its filters and cursor")
    .option('--status <status>', 'initiated | approved | cancelled | rejected')
    .option('--account <number>', 'account_number')
    .option('--mandate-id <id>')
    .option('--merchant-ref <ref>')
    .option('--page-size <n>')
    .action(async (o: { status?: string; account?: string; mandateId?: string; merchantRef?: string; pageSize?: string }) => {
      const config = loadConfig();
      const api = new PaymentsClient({ baseUrl: config.payments.baseUrl, secretKey: config.payments.secretKey, timeoutMs: config.payments.timeoutMs, paths: config.payments.paths });
      try {
        const filters: Record<string, string | number> = {};
        if (o.status) filters.status = o.status;
        if (o.account) filters.account_number = o.account;
        if (o.mandateId) filters.mandate_id = o.mandateId;
        if (o.merchantRef) filters.merchant_ref = o.merchantRef;
        if (o.pageSize) filters.page_size = Number(o.pageSize);
        const page = await listMandates(api, filters);
        for (const r of page.records) console.log(`${String(r.mandate_id)} ${String(r.status)} balance=${String(r.balance)} debited=${String(r.total_debited)} ref=${String(r.reference)}`);
        console.log(page.has_more ? `more: next_cursor=${String(page.next_cursor)}` : 'end of list');
      } finally {
        await api.close();
      }
    });
}
