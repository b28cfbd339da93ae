// Direct-debit mandate: create (D1), the holder's OTP (D2), one debit (D3) through the
// debit Update, then cancel (D4) so the flow ends.
import { cancelMandate, debitMandate, getMandateState, startMandate, submitMandateOtp } from '../../src/starters';
import { FINAL_MANDATE_STATUSES, mandateWorkflowId, type MandateState } from '../../src/shared/mandate';
import { MANDATE_OTP } from '../../src/sandbox';
import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { isoDate } from '../util';
import { awaitResult, drive, startOnce, type FlowRecord, type KindDriver, type Outcome } from './types';

/**
 * Per debit (MandateDebit.status; the mandate's own status is not money):
 *  success — applied (response, requery or resend proved it) → money
 *  failed  — refused, or D5 showed no change                → no-money
 *  unknown — not yet proven either way                      → unknown
 */
export const mandateDebitOutcome = (status: string): Outcome =>
  status === 'success' ? 'money' : status === 'failed' ? 'no-money' : 'unknown';

function record(flow: FlowRecord, s: MandateState): void {
  flow.expectations = [];
  const debits = new Map([...s.recentDebits, ...s.unresolvedDebits].map((d) => [d.reference, d]));
  for (const d of debits.values()) {
    flow.expectations.push({
      reference: d.reference,
      ledgerKind: 'mandate_debit',
      outcome: mandateDebitOutcome(d.status),
      status: `debit:${d.status}`,
    });
    if ((d.confirmedBy === 'requery' || d.confirmedBy === 'resend') && d.status !== 'unknown')
      flow.resolvedByRequery = true;
  }
}

export const mandateDriver: KindDriver = {
  kind: 'mandate',
  ledgerKinds: ['mandate_debit'],
  async run(ctx, flow) {
    const overBalance = ctx.rng.chance(0.2);
    flow.variant = overBalance ? 'debit-over-balance' : 'debit';
    flow.workflowId = mandateWorkflowId(flow.ref);
    const amount = 500_000;
    await startOnce(
      ctx,
      'start mandate',
      () =>
        startMandate(ctx.starters, {
          mandateRef: flow.ref,
          debitType: 'variable',
          amount,
          accountNumber: '0123456789',
          bankCode: '058',
          description: 'chaos subscription',
          startDate: isoDate(0),
          endDate: isoDate(365),
          customerEmail: `${flow.ref.toLowerCase()}@example.com`,
          customer: {
            bvn: '12345678901',
            firstName: 'Chaos',
            lastName: 'Holder',
            address: '1 Test Street',
            phone: '08012345678',
          },
        }),
      (err) => err instanceof WorkflowExecutionAlreadyStartedError,
    );
    let lastDebitError = 0;
    let debitRefused = false;
    let cancelling = false;
    const debitAmount = overBalance ? amount + 100_000 : ctx.rng.int(200, 400) * 100;
    const last = await drive(
      ctx,
      () => getMandateState(ctx.starters, flow.ref),
      (s) => FINAL_MANDATE_STATUSES.includes(s.status),
      async (s) => {
        if (s.status === 'awaiting_otp') await submitMandateOtp(ctx.starters, flow.ref, MANDATE_OTP);
        else if (
          s.status === 'approved' &&
          s.debitCount === 0 &&
          !debitRefused &&
          Date.now() - lastDebitError > 15_000
        ) {
          // Only while no debit exists: a second Update would be a second debit under a new reference.
          try {
            await debitMandate(ctx.starters, flow.ref, debitAmount);
          } catch (err) {
            // The flow refused it (e.g. over the balance): nothing was sent; the mandate is cancelled next.
            if (err instanceof WorkflowUpdateFailedError) debitRefused = true;
            lastDebitError = Date.now();
            throw err;
          }
        } else if (
          s.status === 'approved' &&
          (s.debitCount > 0 || debitRefused) &&
          s.unresolvedDebits.length === 0 &&
          !cancelling
        ) {
          cancelling = true;
          try {
            await cancelMandate(ctx.starters, flow.ref);
          } finally {
            cancelling = false;
          }
        }
      },
      500,
    );
    if (last && !FINAL_MANDATE_STATUSES.includes(last.status)) {
      record(flow, last); // still running at the deadline: report what it knows
      flow.status = last.status;
      return;
    }
    const result = await awaitResult<MandateState>(
      ctx,
      () => ctx.starters.client.workflow.getHandle(flow.workflowId!),
      flow,
    );
    if (!result) return;
    flow.closed = true;
    flow.status = result.status;
    record(flow, result);
  },
};
