// Typed starter of the POS remote request flow (create, then polling), for backends: start,
// cancel (on our side; the request lives on until it expires), and the handle to follow it.
import type { WorkflowHandle } from '@temporalio/client';
import {
  PosRemoteInputSchema,
  cancelPosRemoteSignal,
  posRemoteStartSearch,
  posRemoteWorkflowId,
  type PosRemoteInput,
} from '../shared/pos-remote';
import type { StarterContext } from './connect';
import { handleFor, runToResult, startFlow } from './start-flow';
import type { posRemoteRequestWorkflow } from '../workflows/pos-remote';
import { parseStarterInput } from '../shared/input-error';

/** Starts the remote request flow for one order (workflow id `pos-remote-<reference>`; a second start for it is refused). */
export async function startPosRemoteRequest(
  ctx: StarterContext,
  input: PosRemoteInput,
): Promise<WorkflowHandle<typeof posRemoteRequestWorkflow>> {
  const v = parseStarterInput(PosRemoteInputSchema, input, 'POS remote request');
  return startFlow<typeof posRemoteRequestWorkflow>(ctx, {
    operation: 'start POS remote request',
    workflowType: 'posRemoteRequestWorkflow',
    workflowId: posRemoteWorkflowId(v.reference),
    // With its event target resolved (docs/events.md).
    args: [withDeploymentReading(ctx, input)],
    search: posRemoteStartSearch(v),
  });
}

/**
 * A lost create answer whose request the transaction list never showed is read as the deployment
 * says: not_sent only where the transaction list (A6) shows remote requests (PAYMENTS_LISTS_POS_REMOTE_REQUESTS); the caller's own option wins.
 */
function withDeploymentReading(ctx: StarterContext, input: PosRemoteInput): PosRemoteInput {
  if (!ctx.listsPosRemoteRequests || input.options?.lostCreateAbsentIs !== undefined) return input;
  return { ...input, options: { ...input.options, lostCreateAbsentIs: 'not_sent' } };
}

export const posRemoteRequestHandle = handleFor<typeof posRemoteRequestWorkflow>(posRemoteWorkflowId);

/** Stops the polling of a remote request (the request itself lives on until it expires). */
export async function cancelPosRemoteRequest(ctx: StarterContext, reference: string, reason?: string): Promise<void> {
  await posRemoteRequestHandle(ctx, reference).signal(cancelPosRemoteSignal, { reason });
}

export const runPosRemoteRequest = runToResult(startPosRemoteRequest);
