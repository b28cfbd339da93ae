// Typed starters for electricity vending.
import type { WorkflowHandle } from '@temporalio/client';
import { VEND_FIRST_STATUS, VendInputSchema, vendWorkflowId, type VendInput } from '../shared/vending';
import type { StarterContext } from './connect';
import { handleFor, runToResult, startFlow } from './start-flow';
import type { vendElectricityWorkflow } from '../workflows/vending';
import { parseStarterInput } from '../shared/input-error';

/** Starts one electricity sale (workflow id `vend-<order_ref>`; a second start for the same order is refused). */
export async function startVend(
  ctx: StarterContext,
  input: VendInput,
): Promise<WorkflowHandle<typeof vendElectricityWorkflow>> {
  const v = parseStarterInput(VendInputSchema, input, 'electricity vend');
  return startFlow<typeof vendElectricityWorkflow>(ctx, {
    operation: 'start vend',
    workflowType: 'vendElectricityWorkflow',
    workflowId: vendWorkflowId(v.order_ref),
    // The raw input (the workflow parses it again), with its event target resolved.
    args: [input],
    search: { flow: 'vend', reference: v.order_ref, status: VEND_FIRST_STATUS, currency: 'NGN' },
  });
}

export const vendHandle = handleFor<typeof vendElectricityWorkflow>(vendWorkflowId);

export const runVend = runToResult(startVend);
