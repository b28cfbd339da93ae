// The scheduled mandate debit's one activity: the debitMandate Update on the mandate flow, with the
// period's idempotency key (and the same Update id), so a retried attempt is the same debit.
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { debitMandateUpdate, mandateWorkflowId, type MandateDebit } from '../shared/mandate';
import type { ActivityDeps } from './deps';

export function createScheduledMoneyActivities(deps: ActivityDeps) {
  return {
    async requestScheduledMandateDebit(req: {
      mandateRef: string;
      amount: number;
      narration?: string;
      idempotencyKey: string;
    }): Promise<MandateDebit> {
      if (!deps.temporal) {
        // Retried: a worker with a Temporal client takes it; nothing was asked for.
        throw ApplicationFailure.create({
          type: 'ConfigurationError',
          message: 'this worker has no Temporal client for scheduled mandate debits',
        });
      }
      try {
        return await deps.temporal.workflow
          .getHandle(mandateWorkflowId(req.mandateRef))
          .executeUpdate(debitMandateUpdate, {
            args: [
              {
                amount: req.amount,
                idempotencyKey: req.idempotencyKey,
                ...(req.narration ? { narration: req.narration } : {}),
              },
            ],
            updateId: `debit-${req.idempotencyKey}`,
          });
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) {
          throw ApplicationFailure.nonRetryable(err.cause?.message ?? err.message, 'DebitRefused');
        }
        if (err instanceof WorkflowNotFoundError) {
          throw ApplicationFailure.nonRetryable(
            `no mandate flow ${mandateWorkflowId(req.mandateRef)} (ended, or never started)`,
            'MandateNotFound',
          );
        }
        throw err;
      }
    },
  };
}
