// Where a verified virtual-account credit (E-2) goes: the credit workflow under the reference's id.
// Only what the signature covers goes on (src/shared/virtual-account-credit.ts).
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { flowStartMetadata } from '../shared/flow-summary';
import { virtualAccountCreditWorkflowId, type VirtualAccountCredit } from '../shared/virtual-account-credit';
import type { virtualAccountCreditWorkflow } from '../workflows/virtual-account-credit';
import type { virtualAccountWebhookSchema } from './schemas';

export type VirtualAccountNotification = z.output<typeof virtualAccountWebhookSchema>;

/** The credit to hand on: v2/v3 sign six values; v1 signs the whole body, so its fee and date are signed too. */
export function creditOf(b: VirtualAccountNotification, version: 1 | 2 | 3): VirtualAccountCredit {
  return {
    transactionReference: b.transaction_reference,
    virtualAccountNumber: b.virtual_account_number,
    principalAmount: b.principal_amount,
    settledAmount: b.settled_amount,
    currency: b.currency,
    customerIdentifier: b.customer_identifier,
    ...(version === 1 ? { feeCharged: b.fee_charged, transactionDate: b.transaction_date } : {}),
    ...(version === 3 && typeof b.session_id === 'string' && b.session_id.length > 0 && b.session_id.length <= 100
      ? { lookupSessionId: b.session_id }
      : {}),
    version,
    receivedAt: new Date().toISOString(),
    source: 'webhook',
    ...frozenHintOf(b.meta),
  };
}

/**
 * Starts the credit workflow; true when it had run already (a duplicate). First line of
 * deduplication: the workflow id. USE_EXISTING while it runs; after it completed,
 * ALLOW_DUPLICATE_FAILED_ONLY refuses a new run for the namespace's retention. Past that (or after a
 * failed run) a new run starts and its durable check (va_credit_records) answers 'duplicate':
 * credited once either way. The workflow is started before anything is recorded, so a crash here
 * loses nothing (the service redelivers an unacknowledged notification).
 */
export async function startCreditWorkflow(
  client: Client,
  taskQueue: string,
  credit: VirtualAccountCredit,
  logger: Logger,
): Promise<boolean> {
  const reference = credit.transactionReference;
  try {
    await client.workflow.start<typeof virtualAccountCreditWorkflow>('virtualAccountCreditWorkflow', {
      workflowId: virtualAccountCreditWorkflowId(reference),
      taskQueue,
      args: [credit],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      // No amount: the notification's are decimal strings, and the summary takes integer lowest units only.
      ...flowStartMetadata('virtualAccountCreditWorkflow', { flow: 'virtual-account-credit', reference }),
    });
    return false;
  } catch (err) {
    if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
    logger.info(
      { transactionReference: reference },
      'duplicate virtual-account credit: its workflow already completed',
    );
    return true;
  }
}

/** The notification's freeze fields (unsigned for v2/v3: a hint the credit workflow checks with C5). */
function frozenHintOf(meta: Record<string, unknown> | null | undefined): Pick<VirtualAccountCredit, 'frozenHint'> {
  const ref = meta?.freeze_transaction_ref;
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > 200) return {};
  const reason = meta?.reason_for_frozen_transaction;
  return {
    frozenHint: {
      freezeTransactionRef: ref,
      ...(typeof reason === 'string' && reason.length <= 500 ? { reason } : {}),
    },
  };
}
