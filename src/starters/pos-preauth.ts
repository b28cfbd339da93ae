// Typed starters for the POS pre-authorisation flow: hold (a Pre-Authorization transaction, F3), then complete
// (a Completion transaction, once) or release, within the hold window.
//
// The card read of the pre-authorisation and the one of its completion (the same card presented
// again: chip data is single-use and bound to the amount) are each checked and sealed into the
// claim-check store; the workflow and its Update get only handles, BIN and last four.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import {
  PosCompletionCardReadSchema,
  PosPreAuthInputSchema,
  completePreAuthUpdate,
  posPreAuthStart,
  posPreAuthWorkflowId,
  releasePreAuthUpdate,
  type PosCompletionAccepted,
  type PosCompletionCardRead,
  type PosPreAuthInput,
} from '../shared/pos-preauth';
import type { StarterContext } from './connect';
import { sealPosCardRead, startWithSealedRead, type PosTerminalSession } from './pos-terminal';
import { handleFor, runToResult } from './start-flow';
import { retryTransient } from './temporal-retry';
import type { posPreAuthWorkflow } from '../workflows/pos-preauth';
import { parseStarterInput } from '../shared/input-error';

/** The flow refused completePreAuth or releasePreAuth (not held, window over, amount over the hold, another card, already completing). */
export class PosPreAuthRefusedError extends Error {
  override readonly name = 'PosPreAuthRefusedError';
}

export type PosPreAuthStartInput = Omit<PosPreAuthInput, 'terminal_id'> & { terminal_id?: string };

/** Starts a pre-authorisation (workflow id `pos-preauth-<merchant_ref>`; a second start for it is refused). */
export async function startPosPreAuth(
  ctx: StarterContext,
  input: PosPreAuthStartInput,
  session?: Pick<PosTerminalSession, 'terminalId'>,
): Promise<WorkflowHandle<typeof posPreAuthWorkflow>> {
  const full = { ...input, terminal_id: input.terminal_id ?? session?.terminalId } as PosPreAuthInput;
  const v = parseStarterInput(PosPreAuthInputSchema, full, 'POS pre-authorisation');
  return startWithSealedRead<typeof posPreAuthWorkflow>(ctx, v, full, {
    operation: 'start POS pre-authorisation',
    ...posPreAuthStart(v),
  });
}

export const posPreAuthHandle = handleFor<typeof posPreAuthWorkflow>(posPreAuthWorkflowId);

async function update<T>(run: (updateId: string) => Promise<T>): Promise<T> {
  const updateId = randomUUID();
  try {
    return await retryTransient('POS pre-authorisation (Update)', () => run(updateId));
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError)
      throw new PosPreAuthRefusedError(err.cause instanceof Error ? err.cause.message : err.message);
    if (err instanceof WorkflowNotFoundError)
      throw new PosPreAuthRefusedError(
        `no pre-authorisation is held under this merchant_ref: it has ended (completed, lapsed, released...) or never started (${err.message})`,
      );
    throw err;
  }
}

/**
 * Completes the held pre-authorisation `merchantRef` with a fresh read of the same card, for at
 * most the held amount. Answers once the flow accepted it (follow the handle for the outcome);
 * a second completion, or one after the window, is refused (PosPreAuthRefusedError).
 */
export async function completePosPreAuth(
  ctx: StarterContext,
  merchantRef: string,
  cardRead: PosCompletionCardRead,
): Promise<PosCompletionAccepted> {
  const v = parseStarterInput(PosCompletionCardReadSchema, cardRead, 'POS completion');
  const { handle, card } = await sealPosCardRead(ctx, v);
  try {
    return await update((updateId) =>
      posPreAuthHandle(ctx, merchantRef).executeUpdate(completePreAuthUpdate, {
        args: [
          {
            amount: v.amount,
            card,
            aid: v.aid,
            ...(v.card_type ? { card_type: v.card_type } : {}),
          },
        ],
        updateId,
      }),
    );
  } catch (err) {
    // Refused: the sealed card read will not be used. (After any other failure the Update may have
    // landed; the record is kept for it, and its TTL ends it otherwise.)
    if (err instanceof PosPreAuthRefusedError) await ctx.claimCheck.discard(handle).catch(() => undefined);
    throw err;
  }
}

/** The merchant will not complete: the flow ends `released` (nothing is sent; the hold lapses at the issuer). */
export async function releasePosPreAuth(
  ctx: StarterContext,
  merchantRef: string,
  reason?: string,
): Promise<{ releasedAt: string }> {
  return update((updateId) =>
    posPreAuthHandle(ctx, merchantRef).executeUpdate(releasePreAuthUpdate, {
      args: [reason ? { reason } : {}],
      updateId,
    }),
  );
}

export const runPosPreAuth = runToResult(startPosPreAuth);
