// CLI: the POS terminal flows beyond the sale, under `npm run cli -- pos ...`.
//
//   pos refund --file card.json --refund-id RQ-1 --original ORD-1 --amount 5000 [--serial SN | --terminal TID]
//   pos refund-ledger --original ORD-1
//   pos preauth --file card.json [--merchant-ref PRE-1] [--hold-window "7 days"] [--serial SN | --terminal TID]
//   pos complete --merchant-ref PRE-1 --file card.json [--amount 5000]
//   pos release --merchant-ref PRE-1 [--reason text]
//
// Card data comes from a JSON file (or '-' for stdin), never from flags; the starters seal it.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { openPaymentsClient } from '../connect';
import {
  POS_PREAUTH_FINAL_STATUSES,
  posPreAuthStateQuery,
  type PosCompletionCardRead,
  type PosPreAuthInput,
  type PosPreAuthResult,
  type PosPreAuthState,
} from '../../shared/pos-preauth';
import {
  posRefundStateQuery,
  type PosRefundInput,
  type PosRefundResult,
  type PosRefundState,
} from '../../shared/pos-refund';
import { followUntilDone } from '../progress';
import { completePosPreAuth, posPreAuthHandle, releasePosPreAuth, startPosPreAuth } from '../pos-preauth';
import { posRefundLedger, startPosRefund } from '../pos-refund';
import type { ContextFactory } from './context';

export function renderPosRefundState(s: PosRefundState | PosRefundResult): string {
  const last = s.steps.at(-1);
  const step = last ? ` last=${last.op}:${last.outcome}${last.response_code ? `(${last.response_code})` : ''}` : '';
  const left = s.ledger ? ` left=${s.ledger.remainingAfter}/${s.ledger.saleAmount}` : '';
  const why = s.refusal ? ` [${s.refusal}]` : '';
  const action = 'action' in s ? ` — ${s.action}` : '';
  return `[pos-refund ${s.merchantRef} of ${s.originalMerchantRef}] ${s.status}${why} amount=${s.amount} attempt=${s.attempt}${left}${step}${action}`;
}

export function renderPosPreAuthState(s: PosPreAuthState | PosPreAuthResult): string {
  const c = s.completion;
  const completion = c ? ` completion=${c.merchantRef}:${c.status} amount=${c.amount} attempt=${c.attempt}` : '';
  const until = s.status === 'held' && s.holdUntil ? ` until=${s.holdUntil}` : '';
  const action = 'action' in s ? ` — ${s.action}` : '';
  return `[pos-preauth ${s.merchantRef}] ${s.status} held=${s.amount} attempt=${s.attempt}${until}${completion}${action}`;
}

function readJson(file: string): Record<string, unknown> {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  return JSON.parse(text) as Record<string, unknown>;
}

async function terminalFor(o: { serial?: string; terminal?: string }, fromFile: unknown): Promise<string | undefined> {
  if (o.terminal) return o.terminal;
  if (typeof fromFile === 'string') return fromFile;
  if (!o.serial) return undefined;
  const api = openPaymentsClient();
  try {
    return String((await api.posTerminal.getConfiguration({ serial_no: o.serial })).data.terminal.terminal_id);
  } finally {
    await api.close();
  }
}

const CARD_READ_FIELDS = [
  'card_pan',
  'card_expiry_month',
  'card_expiry_year',
  'card_type',
  'cardholder_name',
  'card_sequence_number',
  'track2',
  'chipdata',
  'aid',
  'pin_block',
];

export function registerPosAfterSaleCommands(pos: Command, context: ContextFactory): void {
  pos
    .command('refund')
    .description(
      'refund (part of) an approved sale (F3 Refund, tied to the sale): checks the sale by F4, reserves the amount in its refund ledger, sends once; the card of the sale from a JSON file',
    )
    .requiredOption(
      '--file <path>',
      "JSON with the card read (card_pan, track2, chipdata, pin_block...), account_type; '-' reads stdin",
    )
    .requiredOption('--refund-id <id>', 'your refund request id (the same id is the same refund)')
    .requiredOption('--original <merchant_ref>', 'merchant_ref of the sale to refund')
    .option('--amount <kobo>', "amount to refund in kobo (integer; default: the file's amount)")
    .option('--serial <serial_no>', 'take terminal_id from F1 for this device')
    .option('--terminal <terminal_id>', 'terminal id (instead of --serial)')
    .option('--no-follow', 'start and return without following')
    .action(
      async (o: {
        file: string;
        refundId: string;
        original: string;
        amount?: string;
        serial?: string;
        terminal?: string;
        follow: boolean;
      }) => {
        const file = readJson(o.file);
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
        console.log(`started ${handle.workflowId}`);
        if (!o.follow) return;
        const result = (await followUntilDone(handle, posRefundStateQuery, renderPosRefundState, {
          intervalMs: 250,
        })) as PosRefundResult;
        console.log(renderPosRefundState(result));
        console.log(JSON.stringify(result, null, 2));
      },
    );

  pos
    .command('refund-ledger')
    .description("show a sale's refunds: refunded, in flight, left")
    .requiredOption('--original <merchant_ref>', 'merchant_ref of the sale')
    .action(async (o: { original: string }) => {
      const ctx = await context();
      const ledger = await posRefundLedger(ctx, o.original);
      console.log(ledger ? JSON.stringify(ledger, null, 2) : `no refund was ever reserved against ${o.original}`);
    });

  pos
    .command('preauth')
    .description(
      'pre-authorise (hold) an amount (F3 Pre-Authorization) and follow it until it is held or ends; then `pos complete` or `pos release`',
    )
    .requiredOption('--file <path>', "JSON with the F3 fields (card read, amount, merchant_ref...); '-' reads stdin")
    .option('--merchant-ref <ref>', "merchant_ref of the pre-authorisation (default: the file's)")
    .option('--hold-window <duration>', 'how long a completion is accepted, e.g. "48h" or "7 days" (default 7 days)')
    .option('--serial <serial_no>', 'take terminal_id from F1 for this device')
    .option('--terminal <terminal_id>', 'terminal id (instead of --serial)')
    .option('--no-follow', 'start and return without following')
    .action(
      async (o: {
        file: string;
        merchantRef?: string;
        holdWindow?: string;
        serial?: string;
        terminal?: string;
        follow: boolean;
      }) => {
        const file = readJson(o.file);
        const { transaction_type: _t, ...rest } = file;
        void _t;
        const options = {
          ...((rest.options as Record<string, unknown> | undefined) ?? {}),
          ...(o.holdWindow ? { holdWindow: o.holdWindow } : {}),
        };
        const input = {
          ...rest,
          ...(o.merchantRef ? { merchant_ref: o.merchantRef } : {}),
          ...(Object.keys(options).length ? { options } : {}),
        } as PosPreAuthInput;
        const terminalId = await terminalFor(o, file.terminal_id);
        const ctx = await context();
        const handle = await startPosPreAuth(ctx, { ...input, ...(terminalId ? { terminal_id: terminalId } : {}) });
        console.log(`started ${handle.workflowId}`);
        if (!o.follow) return;
        let last = '';
        for (;;) {
          const s = await handle.query(posPreAuthStateQuery);
          const line = renderPosPreAuthState(s);
          if (line !== last) console.log(line);
          last = line;
          if (s.status === 'held' || POS_PREAUTH_FINAL_STATUSES.includes(s.status)) break;
          await new Promise((r) => setTimeout(r, 250));
        }
      },
    );

  pos
    .command('complete')
    .description(
      'complete a held pre-authorisation once (F3 Completion, tied to it) with a fresh read of the same card, and follow it until it ends',
    )
    .requiredOption('--merchant-ref <ref>', 'merchant_ref of the pre-authorisation')
    .requiredOption('--file <path>', "JSON with the card read (the same card); '-' reads stdin")
    .option('--amount <kobo>', "amount to capture in kobo, at most the held amount (default: the file's amount)")
    .option('--no-follow', 'return once the completion was accepted')
    .action(async (o: { merchantRef: string; file: string; amount?: string; follow: boolean }) => {
      const file = readJson(o.file);
      const read = Object.fromEntries(
        Object.entries(file).filter(([k]) => CARD_READ_FIELDS.includes(k)),
      ) as PosCompletionCardRead;
      const ctx = await context();
      const accepted = await completePosPreAuth(ctx, o.merchantRef, {
        ...read,
        amount: o.amount !== undefined ? Number(o.amount) : (file.amount as number | string),
      });
      console.log(`completion ${accepted.completionMerchantRef} of ${accepted.amount} accepted`);
      if (!o.follow) return;
      const result = (await followUntilDone(
        posPreAuthHandle(ctx, o.merchantRef),
        posPreAuthStateQuery,
        renderPosPreAuthState,
        { intervalMs: 250 },
      )) as PosPreAuthResult;
      console.log(renderPosPreAuthState(result));
      console.log(JSON.stringify(result, null, 2));
    });

  pos
    .command('release')
    .description('release a held pre-authorisation: no completion will be sent (the hold lapses at the issuer)')
    .requiredOption('--merchant-ref <ref>', 'merchant_ref of the pre-authorisation')
    .option('--reason <text>', 'why')
    .action(async (o: { merchantRef: string; reason?: string }) => {
      const ctx = await context();
      await releasePosPreAuth(ctx, o.merchantRef, o.reason);
      const result = (await followUntilDone(
        posPreAuthHandle(ctx, o.merchantRef),
        posPreAuthStateQuery,
        renderPosPreAuthState,
        { intervalMs: 250 },
      )) as PosPreAuthResult;
      console.log(renderPosPreAuthState(result));
    });
}
