// Electricity vend (H2 lookup, H3 purchase, H4 check by reference).
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { startVend } from '../../src/starters';
import { vendWorkflowId, type VendResult } from '../../src/shared/vending';
import { awaitResult, startOnce, type KindDriver, type Outcome } from './types';

/**
 * Vend status → money (ledger `vend` under the lookup's reference):
 *  vended          — a token was bought (H3 answer or H4 found it)            → money
 *  failed          — H3 refused it                                            → no-money
 *  rejected        — refused before any purchase (lookup, minimum_vend)       → no-money
 *  not_vended      — H4 proved the purchase never arrived and no retry was left → no-money
 *  outcome_unknown — no answer and H4 failed: never sent again                → unknown
 */
export const vendOutcome = (status: string): Outcome =>
  status === 'vended' ? 'money' : status === 'outcome_unknown' ? 'unknown' : 'no-money';

export const vendDriver: KindDriver = {
  kind: 'vend',
  ledgerKinds: ['vend'],
  async run(ctx, flow) {
    const belowMinimum = ctx.rng.chance(0.15);
    flow.variant = belowMinimum ? 'below-minimum' : 'prepaid';
    flow.workflowId = vendWorkflowId(flow.ref);
    await startOnce(
      ctx,
      'start vend',
      () =>
        startVend(ctx.starters, {
          order_ref: flow.ref,
          provider: 'EKEDC',
          meter_no: '45067198783',
          meter_type: 'prepaid',
          amount: belowMinimum ? 500 : ctx.rng.int(10, 50) * 100,
          phone_number: '08012345678',
          email: 'buyer@example.com',
          options: { checkSettleDelay: '1s', retryBackoff: '1s', checkTimeout: '3 minutes' },
        }),
      (err) => err instanceof WorkflowExecutionAlreadyStartedError,
    );
    const result = await awaitResult<VendResult>(
      ctx,
      () => ctx.starters.client.workflow.getHandle(flow.workflowId!),
      flow,
    );
    if (!result) return;
    flow.closed = true;
    flow.status = result.status;
    flow.resolvedByRequery =
      result.steps.some((s) => s.op === 'purchase' && s.outcome === 'unknown') && result.status !== 'outcome_unknown';
    flow.expectations.push({
      reference: result.reference,
      ledgerKind: 'vend',
      outcome: vendOutcome(result.status),
      status: result.status,
    });
  },
};
