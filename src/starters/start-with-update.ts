// How a payment starter starts a flow whose first answer comes back with the start (update-with-start):
// checkout_url, the USSD code, the card's first step. The start is as startFlow's (./start-flow.ts) in
// what the flow carries (its search attributes and Web UI summary from the start), under workflow id
// payment-<reference> and the payments' duplicate rule: a reference starts once, a second start is a
// DuplicateReferenceError (./payment-common.ts).
import { WithStartWorkflowOperation, type WorkflowHandle, type WorkflowStartOptions } from '@temporalio/client';
import type { UpdateDefinition, Workflow } from '@temporalio/common';
import { flowStartOptions } from '../shared/flow-summary';
import { paymentWorkflowId } from '../shared/payment-webhook';
import type { PaymentSearchFields } from '../shared/search-attributes';
import type { StarterContext } from './connect';
import { startOnce } from './payment-common';

export interface PaymentStartWithUpdate<W extends Workflow, R> {
  workflowType: string;
  reference: string;
  args: Parameters<W>;
  /** Its search attributes at the start: flow, reference, first status, amount, currency. */
  search: PaymentSearchFields;
  /** What the flow answers once it has its first answer. */
  update: UpdateDefinition<R, [], string>;
}

/** Starts the payment and answers the flow's first answer, with the handle to follow it. */
export async function startPaymentWithUpdate<W extends Workflow, R>(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  s: PaymentStartWithUpdate<W, R>,
): Promise<{ answer: R; handle: WorkflowHandle<W> }> {
  const startOp = new WithStartWorkflowOperation<W>(s.workflowType, {
    workflowId: paymentWorkflowId(s.reference),
    taskQueue: ctx.taskQueue,
    args: s.args,
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    ...flowStartOptions(s.workflowType, s.search),
    // As in startFlow: the SDK's options type cannot see that `args` fits a workflow type left open.
  } as unknown as WorkflowStartOptions<W> & { workflowIdConflictPolicy: 'FAIL' });
  const answer = await startOnce(s.reference, () =>
    ctx.client.workflow.executeUpdateWithStart(s.update, { startWorkflowOperation: startOp }),
  );
  return { answer, handle: await startOp.workflowHandle() };
}
