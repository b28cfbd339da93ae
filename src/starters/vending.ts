// Typed starters for electricity vending.
import type { WorkflowHandle } from '@temporalio/client';
import { VEND_FIRST_STATUS, VendInputSchema, vendWorkflowId, type VendInput, type VendResult } from '../shared/vending';
import { paymentSearchAttributes } from '../shared/search-attributes';
import type { StarterContext } from './connect';
import { startRetrying } from './temporal-retry';
import type { vendElectricityWorkflow } from '../workflows/vending';
import { parseStarterInput } from '../shared/input-error';

/** Starts one electricity sale (workflow id `vend-<order_ref>`; a second start for the same order is refused). */
export async function startVend(
  ctx: StarterContext,
  input: VendInput,
): Promise<WorkflowHandle<typeof vendElectricityWorkflow>> {
  const v = parseStarterInput(VendInputSchema, input, 'electricity vend');
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
          status: VEND_FIRST_STATUS,
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
