// POS refund activities: the reservation in the sale's refund ledger (a workflow, see
// src/workflows/pos-refund-ledger.ts). The transaction and its requery are the POS terminal activities (./pos-terminal.ts).
//
// A workflow cannot send an Update to another workflow, so this activity does: it makes sure the
// sale's ledger runs (signalWithStart, started with the sale's amount from the requery) and asks it to
// reserve the refund's amount. A reservation over what is left is refused by the ledger's
// validator: RefundExceedsRemaining, non-retryable. The update id is the refund's merchant_ref, so
// a retried attempt gets the same reservation.
//
// The ledger never ends by itself. If it ended anyway (terminated, failed, timed out), starting a
// new one would start from zero and forget the refunds it held: the start refuses to reuse the id
// (REJECT_DUPLICATE) and the refund is refused (RefundLedgerClosed) until an operator looks. An
// "already started" alone does not prove that: the run is described, and only a closed one refuses.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { ActivityDeps } from './deps';
import {
  REFUND_LEDGER_CLOSED,
  REFUND_OVER_REMAINING,
  openRefundLedgerSignal,
  reserveRefundUpdate,
  type PosRefundLedgerInput,
  type RefundReservation,
} from '../shared/pos-refund';
import { flowStartOptions } from '../shared/flow-summary';

export interface RefundReserveRequest {
  ledgerWorkflowId: string;
  original_merchant_ref: string;
  sale_amount: number;
  currency: 'NGN' | 'USD';
  merchant_ref: string;
  amount: number;
}

export function createPosRefundActivities(deps: Pick<ActivityDeps, 'logger'>) {
  const log = deps.logger.child({ flow: 'pos-refund' });
  /** Whether the ledger workflow runs now; only a described, closed run proves it ended (a failed describe is retried). */
  const ledgerIsRunning = async (workflowId: string): Promise<boolean> =>
    (await Context.current().client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  return {
    async posRefundReserve(req: RefundReserveRequest): Promise<RefundReservation> {
      const ctx = Context.current();
      const args: PosRefundLedgerInput = {
        original_merchant_ref: req.original_merchant_ref,
        sale_amount: req.sale_amount,
        currency: req.currency,
      };
      try {
        await ctx.client.workflow.signalWithStart('posRefundLedgerWorkflow', {
          workflowId: req.ledgerWorkflowId,
          taskQueue: ctx.info.taskQueue,
          args: [args],
          signal: openRefundLedgerSignal,
          signalArgs: [],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          ...flowStartOptions('posRefundLedgerWorkflow', {
            flow: 'pos-refund-ledger',
            reference: req.original_merchant_ref,
            status: 'open',
            amount: req.sale_amount,
            currency: req.currency,
          }),
        });
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError && !(await ledgerIsRunning(req.ledgerWorkflowId))) {
          log.warn(
            { originalMerchantRef: req.original_merchant_ref, ledgerWorkflowId: req.ledgerWorkflowId },
            'POS refund ledger has ended; refund refused',
          );
          throw ApplicationFailure.nonRetryable(
            `the refund ledger of sale ${req.original_merchant_ref} (${req.ledgerWorkflowId}) has ended: its running total cannot be trusted, so no refund is sent; check the sale's refunds and restore the ledger`,
            REFUND_LEDGER_CLOSED,
          );
        }
        // Already started but running: another refund's signalWithStart won a race the server did
        // not serialise (the time-skipping test server answers such a race with AlreadyStarted);
        // the ledger is there to ask.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      try {
        const granted = await ctx.client.workflow.getHandle(req.ledgerWorkflowId).executeUpdate(reserveRefundUpdate, {
          args: [{ merchant_ref: req.merchant_ref, amount: req.amount }],
          updateId: `reserve-${req.merchant_ref}`,
        });
        log.info(
          {
            merchantRef: req.merchant_ref,
            originalMerchantRef: req.original_merchant_ref,
            remainingAfter: granted.remainingAfter,
          },
          'POS refund reserved',
        );
        return granted;
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) {
          const why = err.cause instanceof Error ? err.cause.message : err.message;
          log.info(
            { merchantRef: req.merchant_ref, originalMerchantRef: req.original_merchant_ref },
            'POS refund reservation refused',
          );
          throw ApplicationFailure.nonRetryable(why, REFUND_OVER_REMAINING);
        }
        throw err;
      }
    },
  };
}

export type PosRefundActivities = ReturnType<typeof createPosRefundActivities>;
