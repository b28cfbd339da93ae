// The one way a starter starts a flow: its search attributes from the start (the Web UI can filter
// it before its first task), a workflow id that refuses a second start of the same reference, the
// same transient retry (with jitter) as every other starter call, and the same duplicate rule: a start
// refused as "already started" on a retry is our own earlier attempt whose answer was lost, so its
// handle is returned; on the first attempt it is a real duplicate, thrown as the SDK's
// WorkflowExecutionAlreadyStartedError (the payment starters turn it into DuplicateReferenceError).
// Every start carries the Web UI's static summary and details for the flow (src/shared/flow-summary.ts).
import type { Client, WorkflowHandle, WorkflowStartOptions } from '@temporalio/client';
import type { Workflow, WorkflowResultType } from '@temporalio/common';
import { flowStartMetadata } from '../shared/flow-summary';
import { paymentSearchAttributes, type PaymentSearchFields } from '../shared/search-attributes';
import type { StarterContext } from './connect';
import { startRetrying } from './temporal-retry';

export interface FlowStart<W extends Workflow> {
  /** What the caller sees in a TemporalUnavailableError: 'start vend'. */
  operation: string;
  workflowType: string;
  workflowId: string;
  args: Parameters<W>;
  /** Its search attributes at the start: flow, reference, first status, amount, currency. */
  search: PaymentSearchFields;
  /**
   * Default: a reference starts once (`REJECT_DUPLICATE`). A follower that may run again once its
   * last run ended takes `{ workflowIdReusePolicy: 'ALLOW_DUPLICATE', workflowIdConflictPolicy: 'USE_EXISTING' }`.
   */
  policies?: Pick<WorkflowStartOptions, 'workflowIdReusePolicy' | 'workflowIdConflictPolicy'>;
}

/** A starter's `…Handle`: the handle of the flow that `workflowId` names for a reference. */
export const handleFor =
  <W extends Workflow>(workflowId: (reference: string) => string) =>
  (ctx: StarterContext, reference: string): WorkflowHandle<W> =>
    ctx.client.workflow.getHandle<W>(workflowId(reference));

/** A starter's `run…` twin: starts the flow as `start` does and answers the flow's result. */
export const runToResult =
  <A extends unknown[], W extends Workflow>(start: (...args: A) => Promise<WorkflowHandle<W>>) =>
  async (...args: A): Promise<WorkflowResultType<W>> =>
    (await start(...args)).result();

export function startFlow<W extends Workflow>(
  ctx: { client: Client; taskQueue: string },
  s: FlowStart<W>,
): Promise<WorkflowHandle<W>> {
  return startRetrying(
    s.operation,
    () =>
      ctx.client.workflow.start<W>(s.workflowType, {
        workflowId: s.workflowId,
        taskQueue: ctx.taskQueue,
        args: s.args,
        ...(s.policies ?? { workflowIdReusePolicy: 'REJECT_DUPLICATE' }),
        typedSearchAttributes: paymentSearchAttributes(s.search),
        // What the Web UI shows for it (src/shared/flow-summary.ts): no card or personal data.
        ...flowStartMetadata(s.workflowType, s.search),
      } as unknown as WorkflowStartOptions<W>),
    () => ctx.client.workflow.getHandle<W>(s.workflowId),
  );
}
