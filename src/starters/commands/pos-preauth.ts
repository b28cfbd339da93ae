// CLI: `npm run cli -- pos preauth | complete | release`: the POS pre-authorisation flow (F3
// Pre-Authorization, then its Completion once, or its release).
//
//   pos preauth --file card.json [--merchant-ref PRE-1] [--hold-window "7 days"] [--serial SN | --terminal TID]
//   pos complete --merchant-ref PRE-1 --file card.json [--amount 5000]
//   pos release --merchant-ref PRE-1 [--reason text]
//
// Card data comes from a JSON file (or '-' for stdin), never from flags; the starters seal it.
import type { Command } from 'commander';
import {
  POS_PREAUTH_FINAL_STATUSES,
  posPreAuthStateQuery,
  type PosCompletionCardRead,
  type PosPreAuthInput,
  type PosPreAuthResult,
  type PosPreAuthState,
} from '../../shared/pos-preauth';
import { followFlow, followToResult, startedFlow } from './run-options';
import { completePosPreAuth, posPreAuthHandle, releasePosPreAuth, startPosPreAuth } from '../pos-preauth';
import type { ContextFactory } from './context';
import type { StarterContext } from '../connect';
import { readJsonFile } from './json-file';
import { terminalFor, withCardPresentOptions, type CardPresentOptions } from './pos-terminal';
import { progress } from './output';

export function renderPosPreAuthState(s: PosPreAuthState | PosPreAuthResult): string {
  const c = s.completion;
  const completion = c ? ` completion=${c.merchantRef}:${c.status} amount=${c.amount} attempt=${c.attempt}` : '';
  const until = s.status === 'held' && s.holdUntil ? ` until=${s.holdUntil}` : '';
  const action = 'action' in s ? ` — ${s.action}` : '';
  return `[pos-preauth ${s.merchantRef}] ${s.status} held=${s.amount} attempt=${s.attempt}${until}${completion}${action}`;
}

/** Prints each new state of the pre-authorisation until it ends (after `pos complete` and `pos release`), then the result. */
const followPreAuthToEnd = (ctx: StarterContext, merchantRef: string, text?: (r: PosPreAuthResult) => string) =>
  followToResult(posPreAuthHandle(ctx, merchantRef), posPreAuthStateQuery, renderPosPreAuthState, { text });

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

export function registerPosPreAuthCommands(pos: Command, context: ContextFactory): void {
  withCardPresentOptions(
    pos
      .command('preauth')
      .description(
        'pre-authorise (hold) an amount (a Pre-Authorization transaction, F3) and follow it until it is held or ends; then `pos complete` or `pos release`',
      )
      .requiredOption(
        '--file <path>',
        "JSON with the terminal transaction's fields (F3): card read, amount, merchant_ref...; '-' reads stdin",
      )
      .option('--merchant-ref <ref>', "merchant_ref of the pre-authorisation (default: the file's)")
      .option('--hold-window <duration>', 'how long a completion is accepted, e.g. "48h" or "7 days" (default 7 days)'),
  ).action(async (o: { file: string; merchantRef?: string; holdWindow?: string } & CardPresentOptions) => {
    const file = readJsonFile<Record<string, unknown>>(o.file);
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
    if (!startedFlow(handle)) return;
    // Until it is held (then `pos complete` or `pos release`) or ends.
    await followFlow(handle, posPreAuthStateQuery, renderPosPreAuthState, {
      intervalMs: 250,
      out: progress,
      until: (s) => s.status === 'held' || POS_PREAUTH_FINAL_STATUSES.includes(s.status),
    });
  });

  pos
    .command('complete')
    .description(
      'complete a held pre-authorisation once (a Completion transaction tied to it, F3) with a fresh read of the same card, and follow it until it ends',
    )
    .requiredOption('--merchant-ref <ref>', 'merchant_ref of the pre-authorisation')
    .requiredOption('--file <path>', "JSON with the card read (the same card); '-' reads stdin")
    .option('--amount <kobo>', "amount to capture in kobo, at most the held amount (default: the file's amount)")
    .option('--no-follow', 'return once the completion was accepted')
    .action(async (o: { merchantRef: string; file: string; amount?: string; follow: boolean }) => {
      const file = readJsonFile<Record<string, unknown>>(o.file);
      const read = Object.fromEntries(
        Object.entries(file).filter(([k]) => CARD_READ_FIELDS.includes(k)),
      ) as PosCompletionCardRead;
      const ctx = await context();
      const accepted = await completePosPreAuth(ctx, o.merchantRef, {
        ...read,
        amount: o.amount !== undefined ? Number(o.amount) : (file.amount as number | string),
      });
      progress(`completion ${accepted.completionMerchantRef} of ${accepted.amount} accepted`);
      if (o.follow) await followPreAuthToEnd(ctx, o.merchantRef);
    });

  pos
    .command('release')
    .description('release a held pre-authorisation: no completion will be sent (the hold lapses at the issuer)')
    .requiredOption('--merchant-ref <ref>', 'merchant_ref of the pre-authorisation')
    .option('--reason <text>', 'why')
    .action(async (o: { merchantRef: string; reason?: string }) => {
      const ctx = await context();
      await releasePosPreAuth(ctx, o.merchantRef, o.reason);
      await followPreAuthToEnd(ctx, o.merchantRef, renderPosPreAuthState);
    });
}
