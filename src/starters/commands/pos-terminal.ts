// CLI: `npm run cli -- pos session | transaction`: the POS terminal session (F1 + F2, outside
// Temporal) and the terminal transaction flow (F3, with the requery F4).
//
//   pos session --serial SN123 [--refresh]        configuration and key exchange directly; pin_key is never printed
//   pos transaction --file card.json [--serial SN123 | --terminal TID]
//
// Card data is read from a JSON file (or '-' for stdin), never from flags: command lines end
// up in shell history and process lists. The starter seals it into the claim-check store; the
// workflow (and so Temporal history) gets only its handle, BIN and last four.
import type { Command } from 'commander';
import {
  posTransactionStateQuery,
  type PosTransactionInput,
  type PosTransactionResult,
  type PosTransactionState,
} from '../../shared/pos-terminal';
import { followToResult, startedFlow, startsFlow } from './run-options';
import { openPosTerminalSession, startPosTransaction } from '../pos-terminal';
import { openRunPaymentsClient, type ContextFactory } from './context';
import { readJsonFile } from './json-file';
import { printResult, progress } from './output';

export function renderPosTransactionState(s: PosTransactionState | PosTransactionResult): string {
  const last = s.steps.at(-1);
  const code = last && 'response_code' in last ? last.response_code : undefined;
  const step = last ? ` last=${last.op}:${last.outcome}${code ? `(${code})` : ''}` : '';
  const action = 'action' in s ? ` — ${s.action}` : '';
  return `[pos-txn ${s.merchantRef}] ${s.status} attempt=${s.attempt}${step}${action}`;
}

/** What every card-present start command (transaction, preauth, refund) takes last: its terminal (following: ./run-options.ts). */
export interface CardPresentOptions {
  serial?: string;
  terminal?: string;
}

/** Adds the CardPresentOptions flags to a card-present start command (which starts a flow), in the order its help lists them. */
export const withCardPresentOptions = (command: Command): Command =>
  startsFlow(
    command
      .option('--serial <serial_no>', 'take terminal_id from the terminal configuration (F1) for this device')
      .option('--terminal <terminal_id>', 'terminal id (instead of --serial)')
      .option('--no-follow', 'start and return without following'),
  );

/** The terminal a command sends to: --terminal, the file's terminal_id, or the configuration's for --serial. */
export async function terminalFor(
  o: Pick<CardPresentOptions, 'serial' | 'terminal'>,
  fromFile: unknown,
): Promise<string | undefined> {
  if (o.terminal) return o.terminal;
  if (typeof fromFile === 'string' && fromFile) return fromFile;
  if (!o.serial) return undefined;
  const api = openRunPaymentsClient();
  try {
    return String((await api.posTerminal.getConfiguration({ serial_no: o.serial })).data.terminal.terminal_id);
  } finally {
    await api.close();
  }
}

export function registerPosTerminalCommands(pos: Command, context: ContextFactory): void {
  pos
    .command('session')
    .description(
      'terminal configuration (F1) and key exchange (F2) through the API client; pin_key is kept in memory and never printed',
    )
    .requiredOption('--serial <serial_no>', 'device serial number')
    .option('--refresh', 'force a fresh key exchange with the processor (slower)')
    .action(async (o: { serial: string; refresh?: boolean }) => {
      const api = openRunPaymentsClient();
      try {
        const session = await openPosTerminalSession({ api }, { serial_no: o.serial, refresh: o.refresh === true });
        printResult(session.toJSON());
        progress('pin_key received and held in memory only; it is handed to the device, never printed or stored');
        session.close();
      } finally {
        await api.close();
      }
    });

  withCardPresentOptions(
    pos
      .command('transaction')
      .description(
        'send one card transaction (F3) with requery (F4) on an unknown outcome; card fields from a JSON file',
      )
      .requiredOption(
        '--file <path>',
        "JSON with the transaction's fields (F3): card_pan, track2, chipdata, pin_block, merchant_ref...; '-' reads stdin",
      ),
  ).action(async (o: { file: string } & CardPresentOptions) => {
    const input = readJsonFile<PosTransactionInput>(o.file);
    const terminalId = await terminalFor(o, input.terminal_id);
    const ctx = await context();
    const handle = await startPosTransaction(ctx, { ...input, terminal_id: terminalId });
    if (startedFlow(handle)) await followToResult(handle, posTransactionStateQuery, renderPosTransactionState);
  });
}
