// CLI: `npm run cli -- pos refund | refund-ledger`: the POS refund flow (F3, a Refund
// transaction tied to its sale) and the sale's refund ledger.
//
//   pos refund --file card.json --refund-id RQ-1 --original ORD-1 --amount 5000 [--serial SN | --terminal TID]
//   pos refund-ledger --original ORD-1
//
// Card data comes from a JSON file (or '-' for stdin), never from flags; the starter seals it.
import type { Command } from 'commander';
import {
  posRefundStateQuery,
  type PosRefundInput,
  type PosRefundResult,
  type PosRefundState,
} from '../../shared/pos-refund';
import { followToResult, startedFlow } from './run-options';
import { posRefundLedger, startPosRefund } from '../pos-refund';
import type { ContextFactory } from './context';
import { readJsonFile } from './json-file';
import { terminalFor, withCardPresentOptions, type CardPresentOptions } from './pos-terminal';
import { printResult } from './output';

export function renderPosRefundState(s: PosRefundState | PosRefundResult): string {
  const last = s.steps.at(-1);
  const step = last ? ` last=${last.op}:${last.outcome}${last.response_code ? `(${last.response_code})` : ''}` : '';
  const left = s.ledger ? ` left=${s.ledger.remainingAfter}/${s.ledger.saleAmount}` : '';
  const why = s.refusal ? ` [${s.refusal}]` : '';
  const action = 'action' in s ? ` — ${s.action}` : '';
  return `[pos-refund ${s.merchantRef} of ${s.originalMerchantRef}] ${s.status}${why} amount=${s.amount} attempt=${s.attempt}${left}${step}${action}`;
}

export function registerPosRefundCommands(pos: Command, context: ContextFactory): void {
  withCardPresentOptions(
    pos
      .command('refund')
      .description(
        'refund (part of) an approved sale (a Refund transaction tied to the sale, F3): checks the sale by its requery (F4), reserves the amount in its refund ledger, sends once; the card of the sale from a JSON file',
      )
      .requiredOption(
        '--file <path>',
        "JSON with the card read (card_pan, track2, chipdata, pin_block...), account_type; '-' reads stdin",
      )
      .requiredOption('--refund-id <id>', 'your refund request id (the same id is the same refund)')
      .requiredOption('--original <merchant_ref>', 'merchant_ref of the sale to refund')
      .option('--amount <kobo>', "amount to refund in kobo (integer; default: the file's amount)"),
  ).action(async (o: { file: string; refundId: string; original: string; amount?: string } & CardPresentOptions) => {
    const file = readJsonFile<Record<string, unknown>>(o.file);
    const input = {
      ...file,
      refund_request_id: o.refundId,
      original_merchant_ref: o.original,
      ...(o.amount !== undefined ? { amount: Number(o.amount) } : {}),
    } as PosRefundInput;
    delete (input as Record<string, unknown>).merchant_ref;
    delete (input as Record<string, unknown>).transaction_type;
    const terminalId = await terminalFor(o, file.terminal_id);
    const ctx = await context();
    const handle = await startPosRefund(ctx, { ...input, ...(terminalId ? { terminal_id: terminalId } : {}) });
    if (startedFlow(handle)) await followToResult(handle, posRefundStateQuery, renderPosRefundState);
  });

  pos
    .command('refund-ledger')
    .description("show a sale's refunds: refunded, in flight, left")
    .requiredOption('--original <merchant_ref>', 'merchant_ref of the sale')
    .action(async (o: { original: string }) => {
      const ctx = await context();
      const ledger = await posRefundLedger(ctx, o.original);
      printResult(ledger ?? null, ledger ? undefined : `no refund was ever reserved against ${o.original}`);
    });
}
