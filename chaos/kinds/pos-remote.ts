// POS remote request (E1, E2 polling): the payer's terminal decides (sandbox admin "decide"),
// or, when the harness does not get to it, the simulated terminal completes it by amount.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { posRemoteRequestHandle, startPosRemoteRequest } from '../../src/starters';
import { TEST_TERMINALS } from '../../src/sandbox';
import {
  posRemoteStateQuery,
  posRemoteWorkflowId,
  POS_REMOTE_FINAL_STATUSES,
  type PosRemoteResult,
  type PosRemoteState,
} from '../../src/shared/pos-remote';
import { awaitResult, drive, startOnce, type KindDriver, type Outcome } from './types';

/**
 * POS remote status → money (ledger `pos_remote` under the request_ref):
 *  success, success_after_cancel — the terminal approved                                    → money
 *  failed   — the terminal declined                                                           → no-money
 *  expired  — watched until the 404 at the end of its lifetime without approval                → no-money
 *  cancelled — cancelled here, watched to its end, not approved                               → no-money
 *  rejected — E1 refused (400)                                                                 → no-money
 *  not_sent — E1 never left (or the terminal stayed busy)                                     → no-money
 *  expired_unobserved, create_outcome_unknown, poll_error, outcome_unknown — not proven       → unknown
 */
export const posRemoteOutcome = (status: string): Outcome =>
  status === 'success' || status === 'success_after_cancel'
    ? 'money'
    : ['failed', 'expired', 'cancelled', 'rejected', 'not_sent'].includes(status)
      ? 'no-money'
      : 'unknown';

// Every active sandbox terminal: a terminal shows one request at a time, so more terminals keep the lanes moving.
/** The search grace the driver gives a lost E1 (short: the harness's flows, not a merchant's). */
export const POS_REMOTE_SEARCH_GRACE = '20s';

const TERMINALS = Object.values(TEST_TERMINALS)
  .filter((t) => t.status === 'active')
  .map((t) => t.terminal_id);

export const posRemoteDriver: KindDriver = {
  kind: 'pos-remote',
  ledgerKinds: ['pos_remote'],
  async run(ctx, flow) {
    const decision = ctx.rng.pick(['00', '00', '00', '51', 'auto'] as const);
    flow.variant = decision === 'auto' ? 'terminal-completes' : `payer-${decision}`;
    flow.workflowId = posRemoteWorkflowId(flow.ref);
    await startOnce(
      ctx,
      'start pos remote',
      () =>
        startPosRemoteRequest(ctx.starters, {
          reference: flow.ref,
          terminal_id: ctx.rng.pick(TERMINALS),
          amount: ctx.rng.int(20, 900) * 100,
          currency: 'NGN',
          options: { pollIntervalMs: 500, searchGrace: POS_REMOTE_SEARCH_GRACE, searchInterval: '2s' },
        }),
      (err) => err instanceof WorkflowExecutionAlreadyStartedError,
    );
    let decided = decision === 'auto';
    await drive(
      ctx,
      () => posRemoteRequestHandle(ctx.starters, flow.ref).query(posRemoteStateQuery),
      (s: PosRemoteState) => POS_REMOTE_FINAL_STATUSES.includes(s.status) || decided,
      async (s) => {
        if (s.status === 'pending' && s.requestRef && !decided) {
          await ctx.admin.decidePosRemote(s.requestRef, decision);
          decided = true;
        }
      },
      500,
    );
    const result = await awaitResult<PosRemoteResult>(
      ctx,
      () => ctx.starters.client.workflow.getHandle(flow.workflowId!),
      flow,
    );
    if (!result) return;
    flow.closed = true;
    flow.status = result.status;
    flow.resolvedByRequery = result.recovered === true && posRemoteOutcome(result.status) !== 'unknown';
    flow.expectations.push({
      reference: result.requestRef,
      ledgerKind: 'pos_remote',
      outcome: posRemoteOutcome(result.status),
      status: result.status,
    });
  },
};
