// Recurring card charges: the first payment is a hosted checkout with is_recurring (a child
// workflow under the first cycle's reference, so its webhook finds it); the token_id it returns
// pays later cycles with A4 on durable timers, each with the stable reference `<planRef>-C<n>`.
// An unknown outcome is verified by reference and never charged again blindly. Cancel uses A5.
// continue-as-new every `cyclesPerRun` cycles keeps history bounded.
import { condition, continueAsNew, executeChild, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { createPaymentActivities } from '../activities/payments';
import {
  cancelRecurringSignal, cycleReference, recurringStateQuery, type RecurringCycle, type RecurringInput, type RecurringState,
} from '../shared/checkout';
import { paymentWorkflowId } from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { checkoutWorkflow } from './checkout';
import { failureOf } from './activity-failure';

type Activities = ReturnType<typeof createPaymentActivities>;
const once = proxyActivities<Activities>({ startToCloseTimeout: '60s', retry: { maximumAttempts: 1 } });
const reads = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 5, initialInterval: '1s' } });

export async function recurringChargeWorkflow(input: RecurringInput, carried?: RecurringState): Promise<RecurringState> {
  const state: RecurringState = carried ?? { planRef: input.planRef, status: 'awaiting_first_payment', cycle: 0, recentCycles: [] };
  let cancelRequested = false;
  let cyclesThisRun = 0;
  setHandler(recurringStateQuery, () => state);
  setHandler(cancelRecurringSignal, () => {
    cancelRequested = true;
  });
  const setStatus = (status: RecurringState['status'], reason?: string) => {
    state.status = status;
    if (reason) state.reason = reason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const record = (c: RecurringCycle) => {
    state.recentCycles = [...state.recentCycles, c].slice(-20);
  };

  if (!carried) {
    upsertSearchAttributes(paymentSearchAttributes({ flow: 'recurring', reference: input.planRef, amount: input.amount, currency: input.currency, status: state.status }));
    const firstRef = cycleReference(input.planRef, 1);
    const first = await executeChild(checkoutWorkflow, {
      workflowId: paymentWorkflowId(firstRef),
      args: [{ transactionRef: firstRef, amount: input.amount, currency: input.currency, email: input.email, isRecurring: true, channels: ['card'], ...input.checkout }],
    });
    state.cycle = 1;
    record({ cycle: 1, reference: firstRef, status: first.status === 'success' ? 'success' : 'failed', reason: first.reason });
    if (first.status !== 'success' || !first.tokenId) {
      setStatus('failed', first.tokenId ? `first payment ${first.status}` : 'the first payment returned no token_id');
      return state;
    }
    state.tokenId = first.tokenId;
    setStatus('active');
  }

  while (!cancelRequested && (input.maxCycles === undefined || state.cycle < input.maxCycles)) {
    if (cyclesThisRun >= (input.cyclesPerRun ?? 24)) {
      await continueAsNew<typeof recurringChargeWorkflow>(input, state);
    }
    state.nextChargeAt = new Date(Date.now() + input.intervalMs).toISOString();
    if (await condition(() => cancelRequested, input.intervalMs)) break;
    const cycle = state.cycle + 1;
    const reference = cycleReference(input.planRef, cycle);
    let status: RecurringCycle['status'];
    let reason: string | undefined;
    try {
      await once.chargeToken({ tokenId: state.tokenId!, amount: input.amount, reference });
      status = 'success';
    } catch (err) {
      const f = failureOf(err);
      if (f?.type === 'OutcomeUnknown' || f?.type === 'Transient' || /Duplicate/i.test(f?.message ?? '')) {
        // Requery first: the reference tells whether this cycle was charged.
        const verified = await reads.verifyTransaction(reference).catch(() => 'Unknown');
        status = verified === 'Success' ? 'success' : verified === 'Failed' ? 'failed' : 'unknown';
        reason = `verified as ${verified}`;
      } else {
        status = 'failed';
        reason = f?.message;
      }
    }
    state.cycle = cycle;
    cyclesThisRun += 1;
    record({ cycle, reference, status, reason });
  }
  state.nextChargeAt = undefined;
  if (cancelRequested) {
    const cancelled = await reads.cancelToken(state.tokenId!);
    setStatus('cancelled', cancelled ? 'token cancelled' : 'the service reported the token already cancelled');
  } else setStatus('completed', 'all cycles charged');
  return state;
}
