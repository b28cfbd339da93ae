// One run of a recurring-money Schedule (src/starters/scheduled-money.ts): the Schedule decides when;
// this decides what, keyed by the run's nominal period.
//
// - scheduledTokenChargeWorkflow: the token charge (A4) for the period as a child tokenChargeWorkflow under
//   paymentWorkflowId(<planRef>-S<period>). A second run for the same period (a catch-up, a
//   backfill over it, a manual trigger) finds that id taken and charges nothing; the child itself
//   verifies the reference before it charges.
// - scheduledMandateDebitWorkflow: asks the mandate flow for a debit with the period as its
//   idempotency key (debitMandate Update): the same key twice is the same debit, never a second.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ApplicationFailure,
  executeChild,
  proxyActivities,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { createScheduledMoneyActivities } from '../activities/scheduled-money';
import { paymentWorkflowId } from '../shared/payment-webhook';
import {
  scheduledChargeReference,
  scheduledDebitKey,
  TemporalScheduledStartTime,
  type ScheduledChargeInput,
  type ScheduledMandateDebitInput,
  type ScheduledRunResult,
} from '../shared/scheduled-money';
import { FailureTypes, failureOf } from '../shared/failures';
import { keyedDebitRequest } from './steps/activity-options';
import { tokenChargeWorkflow } from './recurring';

/**
 * The activity's answers that end the run (thrown non-retryable): the Update refused the debit, or no mandate flow
 * runs.
 */
const DEBIT_REFUSALS: string[] = ['DebitRefused', 'MandateNotFound'];

const { requestScheduledMandateDebit } = proxyActivities<ReturnType<typeof createScheduledMoneyActivities>>(
  keyedDebitRequest(DEBIT_REFUSALS),
);

/** The run's nominal period: the Schedule's scheduled time, or `period` for a run started by hand. */
function nominalPeriod(period: string | undefined): Date {
  const scheduled = workflowInfo().typedSearchAttributes.get(TemporalScheduledStartTime);
  if (scheduled) return scheduled;
  const given = period === undefined ? NaN : Date.parse(period);
  if (Number.isNaN(given)) {
    throw ApplicationFailure.create({
      type: FailureTypes.InvalidRequest,
      message: 'period: required (an ISO date-time) when the run was not started by a Schedule',
      nonRetryable: true,
    });
  }
  return new Date(given);
}

export async function scheduledTokenChargeWorkflow(input: ScheduledChargeInput): Promise<ScheduledRunResult> {
  const nominal = nominalPeriod(input.period);
  const reference = scheduledChargeReference(input.planRef, nominal);
  const period = nominal.toISOString();
  try {
    const charge = await executeChild(tokenChargeWorkflow, {
      workflowId: paymentWorkflowId(reference),
      // Never a second run for a period, even after the first completed (or failed).
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [
        {
          reference,
          tokenId: input.tokenId,
          amount: input.amount,
          currency: input.currency,
          ...(input.webhookGraceMs !== undefined ? { webhookGraceMs: input.webhookGraceMs } : {}),
        },
      ],
    });
    return { period, reference, status: charge.status, ...(charge.reason ? { reason: charge.reason } : {}) };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError)
      return {
        period,
        reference,
        status: 'duplicate',
        reason: 'another run already holds this period: nothing charged',
      };
    throw err;
  }
}

export async function scheduledMandateDebitWorkflow(input: ScheduledMandateDebitInput): Promise<ScheduledRunResult> {
  const nominal = nominalPeriod(input.period);
  const key = scheduledDebitKey(nominal);
  const period = nominal.toISOString();
  try {
    const debit = await requestScheduledMandateDebit({
      mandateRef: input.mandateRef,
      amount: input.amount,
      idempotencyKey: key,
      ...(input.narration ? { narration: input.narration } : {}),
    });
    return {
      period,
      reference: debit.reference,
      status: debit.status,
      ...(debit.error ? { reason: debit.error } : {}),
    };
  } catch (err) {
    const refusal = failureOf(err);
    if (refusal && DEBIT_REFUSALS.includes(refusal.type ?? ''))
      return { period, reference: key, status: 'failed', reason: refusal.message };
    throw err;
  }
}
