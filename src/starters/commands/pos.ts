// CLI: `npm run cli -- pos <command>`. Starts POS flows and prints their progress.
//
//   pos remote --reference ORD-1 --terminal TID --amount 150000 [--account-type savings]
//   pos remote-cancel --reference ORD-1
//   pos session --serial SN123 [--refresh]        F1 + F2 directly; pin_key is never printed
//   pos transaction --file card.json [--serial SN123 | --terminal TID]
//   pos status --reference ORD-1 | --merchant-ref REF
//   pos refund | refund-ledger | preauth | complete | release   (./pos-after-sale.ts)
//
// Card data is read from a JSON file (or '-' for stdin), never from flags: command lines end
// up in shell history and process lists. The starter seals it into the claim-check store; the
// workflow (and so Temporal history) gets only its handle, BIN and last four.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { PaymentsClient } from '../../api';
import { openPaymentsClient } from '../connect';
import {
  POS_REMOTE_FINAL_STATUSES,
  posRemoteStateQuery,
  posTransactionStateQuery,
  type PosRemoteResult,
  type PosRemoteState,
  type PosTransactionInput,
  type PosTransactionResult,
  type PosTransactionState,
} from '../../shared/pos';
import { followUntilDone } from '../progress';
import {
  cancelPosRemoteRequest,
  openPosTerminalSession,
  posRemoteRequestHandle,
  posTransactionHandle,
  startPosRemoteRequest,
  startPosTransaction,
} from '../pos';
import type { ContextFactory } from './context';
import { StarterInputError } from '../../shared/input-error';
import { registerPosAfterSaleCommands } from './pos-after-sale';

export function renderPosRemoteState(s: PosRemoteState): string {
  const ref = s.requestRef ? ` request_ref=${s.requestRef}` : '';
  const final = POS_REMOTE_FINAL_STATUSES.includes(s.status) ? ' (final)' : '';
  const flags = [s.recovered ? 'recovered-from-records' : '', s.cancelRequested ? 'cancel-requested' : ''].filter(
    Boolean,
  );
  return `[pos-remote ${s.reference}] ${s.status}${ref} amount=${s.amount}${flags.length ? ` [${flags.join(', ')}]` : ''}${final}${s.message ? ` — ${s.message}` : ''}`;
}

export function renderPosTransactionState(s: PosTransactionState | PosTransactionResult): string {
  const last = s.steps.at(-1);
  const code = last && 'response_code' in last ? last.response_code : undefined;
  const step = last ? ` last=${last.op}:${last.outcome}${code ? `(${code})` : ''}` : '';
  const action = 'action' in s ? ` — ${s.action}` : '';
  return `[pos-txn ${s.merchantRef}] ${s.status} attempt=${s.attempt}${step}${action}`;
}

function readJson(file: string): unknown {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  return JSON.parse(text);
}

function apiFromEnv(): PaymentsClient {
  return openPaymentsClient();
}

export function registerPosCommands(program: Command, context: ContextFactory): void {
  const pos = program.command('pos').description('POS remote requests (E1/E2) and POS terminal transactions (F1-F4)');

  pos
    .command('remote')
    .description(
      'push a payment to a terminal (one open request per terminal: waits for it) and follow it until success, failed, expired, cancelled, success_after_cancel or outcome_unknown',
    )
    .requiredOption('--reference <ref>', 'your order reference (one remote request per reference)')
    .requiredOption('--terminal <terminal_id>', 'terminal id')
    .requiredOption('--amount <kobo>', 'amount in kobo (integer)')
    .option('--account-type <type>', 'default, savings, current or credit')
    .option('--poll-interval-ms <ms>', 'E2 polling interval (default 2500)')
    .option('--no-follow', 'start and return without following')
    .action(
      async (o: {
        reference: string;
        terminal: string;
        amount: string;
        accountType?: string;
        pollIntervalMs?: string;
        follow: boolean;
      }) => {
        const ctx = await context();
        const handle = await startPosRemoteRequest(ctx, {
          reference: o.reference,
          terminal_id: o.terminal,
          amount: Number(o.amount),
          ...(o.accountType ? { account_type: o.accountType } : {}),
          ...(o.pollIntervalMs ? { options: { pollIntervalMs: Number(o.pollIntervalMs) } } : {}),
        });
        console.log(`started ${handle.workflowId}`);
        if (!o.follow) return;
        const result = (await followUntilDone(handle, posRemoteStateQuery, renderPosRemoteState, {
          intervalMs: 250,
        })) as PosRemoteResult;
        console.log(renderPosRemoteState(result));
        console.log(JSON.stringify(result, null, 2));
      },
    );

  pos
    .command('remote-cancel')
    .description(
      'cancel a remote request on our side; it stays on the terminal until its lifetime ends and is watched until then (cancelled, or success_after_cancel)',
    )
    .requiredOption('--reference <ref>', 'order reference')
    .option('--reason <text>', 'why')
    .action(async (o: { reference: string; reason?: string }) => {
      const ctx = await context();
      await cancelPosRemoteRequest(ctx, o.reference, o.reason);
      const result = (await followUntilDone(
        posRemoteRequestHandle(ctx, o.reference),
        posRemoteStateQuery,
        renderPosRemoteState,
        { intervalMs: 250 },
      )) as PosRemoteResult;
      console.log(renderPosRemoteState(result));
    });

  pos
    .command('session')
    .description(
      'terminal configuration (F1) and key exchange (F2) through the API client; pin_key is kept in memory and never printed',
    )
    .requiredOption('--serial <serial_no>', 'device serial number')
    .option('--refresh', 'force a fresh key exchange with the processor (slower)')
    .action(async (o: { serial: string; refresh?: boolean }) => {
      const api = apiFromEnv();
      try {
        const session = await openPosTerminalSession({ api }, { serial_no: o.serial, refresh: o.refresh === true });
        console.log(JSON.stringify(session.toJSON(), null, 2));
        console.log('pin_key received and held in memory only; it is handed to the device, never printed or stored');
        session.close();
      } finally {
        await api.close();
      }
    });

  pos
    .command('transaction')
    .description('send one card transaction (F3) with requery (F4) on an unknown outcome; card fields from a JSON file')
    .requiredOption(
      '--file <path>',
      "JSON with the F3 fields (card_pan, track2, chipdata, pin_block, merchant_ref...); '-' reads stdin",
    )
    .option('--serial <serial_no>', 'take terminal_id from F1 for this device')
    .option('--terminal <terminal_id>', 'terminal id (instead of --serial)')
    .option('--no-follow', 'start and return without following')
    .action(async (o: { file: string; serial?: string; terminal?: string; follow: boolean }) => {
      const input = readJson(o.file) as PosTransactionInput;
      let terminalId = o.terminal ?? input.terminal_id;
      if (!terminalId && o.serial) {
        const api = apiFromEnv();
        try {
          terminalId = String(
            (await api.posTerminal.getConfiguration({ serial_no: o.serial })).data.terminal.terminal_id,
          );
        } finally {
          await api.close();
        }
      }
      const ctx = await context();
      const handle = await startPosTransaction(ctx, { ...input, terminal_id: terminalId });
      console.log(`started ${handle.workflowId}`);
      if (!o.follow) return;
      const result = (await followUntilDone(handle, posTransactionStateQuery, renderPosTransactionState, {
        intervalMs: 250,
      })) as PosTransactionResult;
      console.log(renderPosTransactionState(result));
      console.log(JSON.stringify(result, null, 2));
    });

  pos
    .command('status')
    .description('show a POS flow and follow it until it ends')
    .option('--reference <ref>', 'remote request order reference')
    .option('--merchant-ref <ref>', 'terminal transaction merchant_ref')
    .action(async (o: { reference?: string; merchantRef?: string }) => {
      const ctx = await context();
      if (o.reference) {
        console.log(
          JSON.stringify(
            await followUntilDone(posRemoteRequestHandle(ctx, o.reference), posRemoteStateQuery, renderPosRemoteState, {
              intervalMs: 250,
            }),
            null,
            2,
          ),
        );
      } else if (o.merchantRef) {
        console.log(
          JSON.stringify(
            await followUntilDone(
              posTransactionHandle(ctx, o.merchantRef),
              posTransactionStateQuery,
              renderPosTransactionState,
              { intervalMs: 250 },
            ),
            null,
            2,
          ),
        );
      } else {
        throw new StarterInputError('POS status', [
          { field: '--reference', rule: 'give --reference or --merchant-ref' },
        ]);
      }
    });

  registerPosAfterSaleCommands(pos, context);
}
