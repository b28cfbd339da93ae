// Typed starters for electricity vending.
import type { WorkflowHandle } from '@temporalio/client';
import { VendInputSchema, vendWorkflowId, type VendInput, type VendResult } from '../shared/vending';
import { paymentSearchAttributes } from '../shared/search-attributes';
import type { StarterContext } from './connect';
import { InvalidStarterInputError } from './pos';
import { startRetrying } from './temporal-retry';
import type { vendElectricityWorkflow } from '../workflows/vending';
import { issuesOf } from '../shared/failures';

/** Starts one electricity sale (workflow id `vend-<order_ref>`; a second start for the same order is refused). */
export async function startVend(
  ctx: StarterContext,
  input: VendInput,
): Promise<WorkflowHandle<typeof vendElectricityWorkflow>> {
  const parsed = VendInputSchema.safeParse(input);
  if (!parsed.success) throw new InvalidStarterInputError('electricity vend', issuesOf(parsed.error));
  const v = parsed.data;
  return startRetrying(
    'start vend',
    () =>
      ctx.client.workflow.start<typeof vendElectricityWorkflow>('vendElectricityWorkflow', {
        workflowId: vendWorkflowId(v.order_ref),
        taskQueue: ctx.taskQueue,
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: paymentSearchAttributes({
          flow: 'vend',
          reference: v.order_ref,
          status: 'validating',
          currency: 'NGN',
        }),
      }),
    () => vendHandle(ctx, v.order_ref),
  );
}

export function vendHandle(ctx: StarterContext, orderRef: string): WorkflowHandle<typeof vendElectricityWorkflow> {
  return ctx.client.workflow.getHandle<typeof vendElectricityWorkflow>(vendWorkflowId(orderRef));
}

export async function runVend(ctx: StarterContext, input: VendInput): Promise<VendResult> {
  return (await startVend(ctx, input)).result();
}
