// CLI: `npm run cli -- ops <command>`: what needs a person, and how to settle it.
//
//   ops summary                          counts per list
//   ops list outcome-unknown [--json]    one list (unmatched-webhooks, outcome-unknown, late-payments, handoff-failed, frozen-credits)
//   ops resolve <workflowId> --outcome success --reason "bank statement 12/11" --operator ops@merchant
//   ops resolve-debit <mandateRef> --debit <key|reference> --outcome debited --reason ... --operator ...
//   ops release-webhook <holderWorkflowId> [--to <workflowId>]
import type { Command } from 'commander';
import {
  ATTENTION_KINDS,
  attentionSummary,
  listAttention,
  releaseUnmatchedWebhook,
  resolveParkedFlow,
  resolveReconciliationFinding,
  type AttentionItem,
  type AttentionKind,
} from '../ops';
import { resolveMandateDebit } from '../mandate';
import type { ContextFactory } from './context';
import { StarterInputError } from '../../shared/input-error';
import { printResult, progress } from './output';

export function renderAttentionItem(i: AttentionItem): string {
  const amount = i.amount !== undefined ? ` ${i.amount} ${i.currency ?? ''}`.trimEnd() : '';
  return `${i.workflowId}  ${i.flow ?? '?'}  ${i.reference ?? ''}  ${i.status ?? ''}${amount}  ${i.running ? 'running' : `closed ${i.closeTime ?? ''}`}`;
}

export function registerOpsCommands(program: Command, context: ContextFactory): void {
  const ops = program
    .command('ops')
    .description('operator tools: what needs a person, and how to settle it (recorded on the flow)');
  registerAttentionLists(ops, context);
  registerSettlements(ops, context);
}

/** summary and list: what needs a person. */
function registerAttentionLists(ops: Command, context: ContextFactory): void {
  ops
    .command('summary')
    .description('how many items each list holds')
    .action(async () => {
      const counts = await attentionSummary(await context());
      printResult(
        counts,
        ATTENTION_KINDS.map((kind) => `${kind.padEnd(20)} ${counts[kind]}`),
      );
    });

  ops
    .command('list <kind>')
    .description(`one list: ${ATTENTION_KINDS.join(', ')}`)
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'print JSON')
    .action(async (kind: string, o: { limit: string; json?: boolean }) => {
      if (!ATTENTION_KINDS.includes(kind as AttentionKind))
        throw new StarterInputError('ops list', [
          { field: 'kind', rule: `must be one of ${ATTENTION_KINDS.join(', ')}` },
        ]);
      const items = await listAttention(await context(), kind as AttentionKind, { limit: Number(o.limit) });
      printResult(items, [...items.map(renderAttentionItem), `${items.length} item(s)`]);
    });
}

/** How an operator settles each kind (recorded on the flow, with who and why). */
function registerSettlements(ops: Command, context: ContextFactory): void {
  ops
    .command('resolve <workflowId>')
    .description('settle a parked payment, POS sale or vend (resolveOutcome) with the outcome you established')
    .requiredOption(
      '--outcome <outcome>',
      "the flow's outcome (payments: success|failed; POS sale: approved|declined|not_received; vend: vended|failed|not_vended)",
    )
    .requiredOption('--reason <text>', 'where the outcome was established')
    .requiredOption('--operator <name>', 'who decides')
    .action(async (workflowId: string, o: { outcome: string; reason: string; operator: string }) => {
      printResult(await resolveParkedFlow(await context(), workflowId, o));
    });

  ops
    .command('resolve-debit <mandateRef>')
    .description("settle a mandate's unresolved debit (resolveDebit)")
    .requiredOption('--debit <key>', "the debit's idempotency key or reference")
    .requiredOption('--outcome <outcome>', 'debited | not_debited')
    .requiredOption('--reason <text>', 'where the outcome was established')
    .requiredOption('--operator <name>', 'who decides')
    .action(async (mandateRef: string, o: { debit: string; outcome: string; reason: string; operator: string }) => {
      if (o.outcome !== 'debited' && o.outcome !== 'not_debited')
        throw new StarterInputError('debit resolution', [{ field: 'outcome', rule: 'must be debited or not_debited' }]);
      printResult(
        await resolveMandateDebit(await context(), mandateRef, {
          debitKey: o.debit,
          outcome: o.outcome,
          reason: o.reason,
          operator: o.operator,
        }),
      );
    });

  ops
    .command('resolve-finding <reference>')
    .description('close a reconciliation finding by hand (a resolved mark with who and why)')
    .requiredOption('--reason <text>', 'what was done (refunded, honoured, corrected at the service...)')
    .requiredOption('--operator <name>', 'who decides')
    .action(async (reference: string, o: { reason: string; operator: string }) => {
      printResult(await resolveReconciliationFinding(await context(), reference, o));
    });

  ops
    .command('release-webhook <holderWorkflowId>')
    .description('end an unmatched-webhook holder, forwarding its events to a flow (which verifies them) with --to')
    .option('--to <workflowId>', 'the flow the webhook belongs to')
    .action(async (holder: string, o: { to?: string }) => {
      const events = await releaseUnmatchedWebhook(await context(), holder, o.to ? { toWorkflowId: o.to } : {});
      progress(`released ${events.length} event(s)${o.to ? ` to ${o.to}` : ''}`);
    });
}
