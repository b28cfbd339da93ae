// Typed starters for the POS refund flow (a Refund transaction of one approved sale, F3).
//
// The refund request id is the caller's idempotency key: it names the refund's merchant_ref
// (RF<digest>) and its workflow (`pos-refund-<merchant_ref>`). Starting the same request again
// returns the same refund's handle (after checking it is the same sale and amount) and sends
// nothing new; the same id for another sale or amount is refused. The card read (the card of the
// original sale, presented again) is checked, then sealed into the claim-check store like a
// sale's: the workflow gets its handle, BIN and last four.
import { WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import {
  PosRefundInputSchema,
  posRefundLedgerWorkflowId,
  posRefundStateQuery,
  posRefundStart,
  posRefundWorkflowId,
  refundLedgerStateQuery,
  refundMerchantRef,
  type PosRefundInput,
  type RefundLedgerState,
} from '../shared/pos-refund';
import type { StarterContext } from './connect';
import { startWithSealedRead, type PosTerminalSession } from './pos-terminal';
import { handleFor, runToResult } from './start-flow';
import { retryTransient } from './temporal-retry';
import type { posRefundWorkflow } from '../workflows/pos-refund';
import { StarterInputError, parseStarterInput } from '../shared/input-error';

export type PosRefundStartInput = Omit<PosRefundInput, 'terminal_id'> & { terminal_id?: string };

/**
 * Starts (or finds) the refund of `original_merchant_ref` named by `refund_request_id`. Every rule
 * is checked first (StarterInputError names field and rule, never the value); the flow then
 * checks the sale by its requery (F4), reserves the amount in the sale's refund ledger and sends the Refund transaction once (F3).
 */
export async function startPosRefund(
  ctx: StarterContext,
  input: PosRefundStartInput,
  session?: Pick<PosTerminalSession, 'terminalId'>,
): Promise<WorkflowHandle<typeof posRefundWorkflow>> {
  const full = { ...input, terminal_id: input.terminal_id ?? session?.terminalId } as PosRefundInput;
  const v = parseStarterInput(PosRefundInputSchema, full, 'POS refund');
  try {
    return await startWithSealedRead<typeof posRefundWorkflow>(ctx, v, full, {
      operation: 'start POS refund',
      ...posRefundStart(v),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    // The same refund request again: the same refund, if it is the same sale and amount.
    const existing = posRefundHandle(ctx, v.refund_request_id);
    const s = await retryTransient('query POS refund', () => existing.query(posRefundStateQuery));
    if (
      s.originalMerchantRef !== v.original_merchant_ref ||
      s.amount !== Number(v.amount) ||
      s.currency !== v.currency
    ) {
      throw new StarterInputError('POS refund', [
        {
          field: 'refund_request_id',
          rule: `was already used for the refund of ${s.amount} ${s.currency} of sale ${s.originalMerchantRef}; a refund request id names one refund`,
        },
      ]);
    }
    return existing;
  }
}

/** The refund named by the caller's refund request id. */
export const posRefundHandle = handleFor<typeof posRefundWorkflow>((refundRequestId) =>
  posRefundWorkflowId(refundMerchantRef(refundRequestId)),
);

export const runPosRefund = runToResult(startPosRefund);

/** What a sale's refund ledger holds (refunded, in flight, left); undefined when no refund ever reserved against the sale. */
export async function posRefundLedger(
  ctx: StarterContext,
  originalMerchantRef: string,
): Promise<RefundLedgerState | undefined> {
  try {
    return await retryTransient('query POS refund ledger', () =>
      ctx.client.workflow.getHandle(posRefundLedgerWorkflowId(originalMerchantRef)).query(refundLedgerStateQuery),
    );
  } catch (err) {
    if (err instanceof Error && err.name === 'WorkflowNotFoundError') return undefined;
    throw err;
  }
}
