// How a payment starter starts its flow: under workflow id payment-<reference>, with the payments'
// duplicate rule on top of the start's own (a reference starts once; a second start is a
// DuplicateReferenceError, ./payment-common.ts). startPayment starts it as every flow starts
// (./start-flow.ts); startPaymentWithUpdate starts it with its first Update (update-with-start), for
// the flows whose first answer comes back with the start: checkout_url, the USSD code, the card's
// first step, with the same search attributes and Web UI summary from the start.
import { WithStartWorkflowOperation, type WorkflowHandle, type WorkflowStartOptions } from '@temporalio/client';
import type { UpdateDefinition, Workflow } from '@temporalio/common';
import { flowStartOptions } from '../shared/flow-summary';
import { paymentWorkflowId } from '../shared/payment-webhook';
import type { PaymentSearchFields } from '../shared/search-attributes';
import type { StarterContext } from './connect';
import { startOnce } from './payment-common';
import { startFlow, type FlowStart } from './start-flow';

/** Starts the payment flow (startFlow's start, retried as every start is); a reference starts once. */
export const startPayment = <W extends Workflow>(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  { reference, ...s }: Omit<FlowStart<W>, 'workflowId' | 'policies'> & { reference: string },
): Promise<WorkflowHandle<W>> =>
  startOnce(reference, () => startFlow<W>(ctx, { ...s, workflowId: paymentWorkflowId(reference) }));

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
