// POS terminal sale (F3, F4 requery): the device's card read goes through startPosTransaction
// with an open F1/F2 session; the PAN's last four choose the processor's answer.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { startPosTransaction } from '../../src/starters';
import { posTransactionWorkflowId, type PosTransactionResult } from '../../src/shared/pos-terminal';
import { awaitResult, startOnce, type KindDriver, type Outcome } from './types';

/**
 * POS terminal status → money (ledger `pos_sale` under merchant_ref):
 *  approved              — 00, from F3 or the F4 requery                  → money
 *  declined              — 51/55… recorded as failed                        → no-money
 *  rejected              — F3 400, nothing recorded                          → no-money
 *  not_received          — F4 404 after the attempts: the processor never had it → no-money
 *  card_data_unavailable — the sealed card expired before F3: nothing sent  → no-money
 *  outcome_unknown       — F4 could not answer: never sent again            → unknown
 */
export const posTerminalOutcome = (status: string): Outcome =>
  status === 'approved' ? 'money' : status === 'outcome_unknown' ? 'unknown' : 'no-money';

const VARIANTS = [
  { name: 'approved', last4: '0000' },
  { name: 'approved', last4: '1234' },
  { name: 'declined-51', last4: '0051' },
  { name: 'lost-upstream-91', last4: '0091' },
  { name: 'not-recorded-96', last4: '0096' },
] as const;

export const posTerminalDriver: KindDriver = {
  kind: 'pos-terminal',
  ledgerKinds: ['pos_sale', 'pos_refund'],
  async run(ctx, flow) {
    const v = ctx.rng.pick(VARIANTS);
    flow.variant = v.name;
    flow.workflowId = posTransactionWorkflowId(flow.ref);
    const session = ctx.rng.pick(ctx.posSessions);
    const pan = `539983000000${v.last4}`;
    await startOnce(
      ctx,
      'start pos sale',
      () =>
        startPosTransaction(
          ctx.starters,
          {
            amount: ctx.rng.int(10, 900) * 100,
            currency: 'NGN',
            card_pan: pan,
            card_expiry_month: '12',
            card_expiry_year: '30',
            card_sequence_number: '001',
            track2: `${pan}D30122010000`,
            chipdata: `9F26${ctx.rng.hex(24)}`,
            aid: '4F07A0000000041010',
            transaction_type: 'Purchase',
            account_type: 'DEFAULT',
            merchant_ref: flow.ref,
            options: { retryBackoff: '1s', requerySettleDelay: '1s', requeryTimeout: '3 minutes' },
          },
          session,
        ),
      (err) => err instanceof WorkflowExecutionAlreadyStartedError,
    );
    const result = await awaitResult<PosTransactionResult>(
      ctx,
      () => ctx.starters.client.workflow.getHandle(flow.workflowId!),
      flow,
    );
    if (!result) return;
    flow.closed = true;
    flow.status = result.status;
    const lostThenFound =
      result.steps.some((s) => s.op === 'initiate' && s.outcome === 'unknown') && result.status !== 'outcome_unknown';
    flow.resolvedByRequery = lostThenFound;
    flow.expectations.push({
      reference: flow.ref,
      ledgerKind: 'pos_sale',
      outcome: posTerminalOutcome(result.status),
      status: result.status,
    });
  },
};
