// CLI: `npm run cli -- pos remote | remote-cancel`: the POS remote request flow (E1/E2).
//
//   pos remote --reference ORD-1 --terminal TID --amount 150000 [--account-type savings]
//   pos remote-cancel --reference ORD-1
import type { Command } from 'commander';
import { POS_REMOTE_FINAL_STATUSES, posRemoteStateQuery, type PosRemoteState } from '../../shared/pos-remote';
import { followToResult, startedFlow, startsFlow } from './run-options';
import { cancelPosRemoteRequest, posRemoteRequestHandle, startPosRemoteRequest } from '../pos-remote';
import type { ContextFactory } from './context';
import { parkedForAPerson } from './output';

export function renderPosRemoteState(s: PosRemoteState): string {
  const ref = s.requestRef ? ` request_ref=${s.requestRef}` : '';
  const final = POS_REMOTE_FINAL_STATUSES.includes(s.status) ? ' (final)' : '';
  const flags = [s.recovered ? 'recovered-from-records' : '', s.cancelRequested ? 'cancel-requested' : ''].filter(
    Boolean,
  );
  return `[pos-remote ${s.reference}] ${s.status}${ref} amount=${s.amount}${flags.length ? ` [${flags.join(', ')}]` : ''}${final}${s.message ? ` — ${s.message}` : ''}`;
}

export function registerPosRemoteCommands(pos: Command, context: ContextFactory): void {
  const remote = pos
    .command('remote')
    .description(
      'push a payment to a terminal (one open request per terminal: waits for it) and follow it until success, failed, expired, cancelled, success_after_cancel or outcome_unknown',
    )
    .requiredOption('--reference <ref>', 'your order reference (one remote request per reference)')
    .requiredOption('--terminal <terminal_id>', 'terminal id')
    .requiredOption('--amount <kobo>', 'amount in kobo (integer)')
    .option('--account-type <type>', 'default, savings, current or credit')
    .option('--poll-interval-ms <ms>', 'requery polling interval (default 2500)')
    .option('--no-follow', 'start and return without following');
  startsFlow(remote).action(
    async (o: {
      reference: string;
      terminal: string;
      amount: string;
      accountType?: string;
      pollIntervalMs?: string;
    }) => {
      const ctx = await context();
      const handle = await startPosRemoteRequest(ctx, {
        reference: o.reference,
        terminal_id: o.terminal,
        amount: Number(o.amount),
        ...(o.accountType ? { account_type: o.accountType } : {}),
        ...(o.pollIntervalMs ? { options: { pollIntervalMs: Number(o.pollIntervalMs) } } : {}),
      });
      // A request parked for a person (outcome unknown, poll error) stops the follow with exit 3.
      if (startedFlow(handle))
        await followToResult(handle, posRemoteStateQuery, renderPosRemoteState, { until: parkedForAPerson });
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
      await followToResult(posRemoteRequestHandle(ctx, o.reference), posRemoteStateQuery, renderPosRemoteState, {
        until: parkedForAPerson,
        text: renderPosRemoteState,
      });
    });
}
