// Recurring card charges.
//
// The first payment is a hosted checkout with is_recurring (a child checkoutWorkflow under the
// first cycle's reference `<planRef>-C1`, so its webhook finds it); the token_id from its
// webhook pays later cycles with A4 on durable timers. Each cycle is a child tokenChargeWorkflow
// under `payment-<planRef>-C<n>`: the reference is stable per cycle, the cycle's own webhook
// lands in it, and it verifies the reference BEFORE charging — a cycle that is run again
// (a reset, a retried child) finds its charge and never sends it twice. An unknown A4 outcome is
// verified too; A4 is sent again only for a reference the service does not know.
// Cancel (signal) stops the plan and cancels the token with A5. History stays bounded: the
// parent continues-as-new every `cyclesPerRun` cycles and keeps only the last cycles in state.
import {
  condition,
  continueAsNew,
  executeChild,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PaymentFlowActivities } from '../activities/payments';
import { PAYMENT_DEFAULTS, type ExpectedPayment } from '../shared/payment-common';
import { paymentWorkflowId } from '../shared/payment-webhook';
import {
  cancelRecurringSignal,
  cycleReference,
  moveRecurringToScheduleSignal,
  recurringStateQuery,
  tokenChargeStateQuery,
  type RecurringCycle,
  type RecurringInput,
  type RecurringState,
  type TokenChargeInput,
  type TokenChargeState,
} from '../shared/recurring';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { checkoutWorkflow } from './checkout';
import {
  confirmPayment,
  parkUnknownOutcome,
  describeFailure,
  fromLookup,
  listenForWebhook,
  lookup,
  once,
  refusal,
  sendPayment,
  type Confirmation,
} from './steps/payment-steps';

const RECENT_CYCLES = 12;
/** A5 is idempotent (a cancelled token answers 400, read as "already cancelled"): retried for about a quarter of an hour. */
const cancels = proxyActivities<PaymentFlowActivities>({
  startToCloseTimeout: '30s',
  retry: {
    maximumAttempts: 20,
    initialInterval: '2s',
    maximumInterval: '60s',
    nonRetryableErrorTypes: ['InvalidRequest', 'Unauthorized'],
  },
});

/** One A4 charge under a stable reference: verify first, charge at most once, confirm by webhook or verify. */
export async function tokenChargeWorkflow(input: TokenChargeInput): Promise<TokenChargeState> {
  const ref = input.reference;
  const inbox = listenForWebhook(ref);
  const expected: ExpectedPayment = { amount: input.amount, currency: input.currency, passCharge: false };
  const state: TokenChargeState = { reference: ref, status: 'checking', charged: false, webhooksReceived: 0 };
  const snapshot = (): TokenChargeState => ({ ...state, webhooksReceived: inbox.deliveries });
  const setStatus = (status: TokenChargeState['status'], reason?: string) => {
    state.status = status;
    state.reason = reason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const conclude = (c: Confirmation) => {
    state.confirmedBy = c.confirmedBy;
    setStatus(c.status, c.reason);
  };
  setHandler(tokenChargeStateQuery, snapshot);
  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'recurring',
      reference: ref,
      amount: input.amount,
      currency: input.currency,
      status: 'checking',
    }),
  );

  // Verify first: this reference may already have been charged (a cycle run again).
  const before = await lookup(ref);
  if (!before) {
    setStatus('unknown', 'the reference could not be verified before charging: not charged');
    return snapshot();
  }
  if (before.found) {
    if (before.status === 'Success') setStatus('confirming', 'already charged under this reference: not charged again');
    else
      conclude({
        ...fromLookup(before, expected),
        reason: `the reference exists at the service (${before.status}): not charged again`,
      });
  }

  if (state.status === 'checking') {
    setStatus('charging');
    // A refused duplicate reference means an earlier charge exists: not a refusal, the record decides.
    const refusedOutright = (err: unknown) => {
      const r = refusal(err);
      return r !== undefined && !/duplicate/i.test(r.message);
    };
    const sent = await sendPayment(
      ref,
      'token charge (A4)',
      () => once.chargeToken({ tokenId: input.tokenId, amount: input.amount, reference: ref }),
      refusedOutright,
    );
    if (sent.outcome === 'answered') {
      state.charged = true;
      setStatus('confirming'); // A4's body is not proof: the webhook or verify confirms
    } else if (sent.outcome === 'refused') setStatus('failed', sent.failure.message);
    else if (sent.outcome === 'unverified')
      setStatus('unknown', `A4's answer was lost (${sent.lost}) and the charge could not be verified`);
    else if (sent.outcome === 'never-received')
      setStatus('failed', `the charge never reached the service (sent ${sent.sends} times)`);
    else {
      state.charged = true;
      if (sent.record.status === 'Success' || sent.record.status === 'Pending') setStatus('confirming');
      else conclude(fromLookup(sent.record, expected));
    }
  }
  if (state.status === 'confirming')
    conclude(await confirmPayment(ref, expected, inbox, input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs));
  // An unknown outcome is parked, never final: verified again on a backoff, or resolved by an operator.
  if (state.status === 'unknown' && patched('park-unknown-outcome')) await parkUnknownOutcome(ref, expected, state);
  return snapshot();
}

export async function recurringChargeWorkflow(
  input: RecurringInput,
  carried?: RecurringState,
): Promise<RecurringState> {
  const state: RecurringState = carried ?? {
    planRef: input.planRef,
    status: 'awaiting_first_payment',
    cycle: 0,
    recentCycles: [],
    consecutiveFailures: 0,
    cancelRequested: false,
  };
  let cyclesThisRun = 0;
  setHandler(recurringStateQuery, () => state);
  setHandler(cancelRecurringSignal, () => {
    state.cancelRequested = true;
  });
  setHandler(moveRecurringToScheduleSignal, () => {
    state.cancelRequested = true;
    state.movedToSchedule = true;
  });
  const setStatus = (status: RecurringState['status'], reason?: string) => {
    state.status = status;
    state.reason = reason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const record = (c: RecurringCycle) => {
    state.recentCycles = [...state.recentCycles, c].slice(-RECENT_CYCLES);
    state.consecutiveFailures = c.status === 'success' ? 0 : state.consecutiveFailures + 1;
  };

  if (!carried) {
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow: 'recurring',
        reference: input.planRef,
        amount: input.amount,
        currency: input.currency,
        status: state.status,
      }),
    );
    const firstRef = cycleReference(input.planRef, 1);
    let first;
    try {
      first = await executeChild(checkoutWorkflow, {
        workflowId: paymentWorkflowId(firstRef),
        args: [
          {
            ...input.checkout,
            transactionRef: firstRef,
            amount: input.amount,
            currency: input.currency,
            email: input.email,
            isRecurring: true,
            channels: ['card'],
          },
        ],
      });
    } catch (err) {
      setStatus('failed', `the first payment's checkout failed: ${describeFailure(err)}`);
      return state;
    }
    state.cycle = 1;
    const firstStatus =
      first.status === 'success' || first.status === 'failed' || first.status === 'expired' ? first.status : 'unknown';
    record({
      cycle: 1,
      reference: firstRef,
      status: firstStatus,
      confirmedBy: first.confirmedBy,
      reason: first.reason,
    });
    if (first.status !== 'success') {
      setStatus('failed', `first payment ${first.status}${first.reason ? `: ${first.reason}` : ''}`);
      return state;
    }
    if (!first.tokenId) {
      setStatus('failed', 'the first payment was confirmed without a token_id (no webhook carried one)');
      return state;
    }
    state.tokenId = first.tokenId;
    setStatus('active');
  }

  const maxFailures = input.maxConsecutiveFailures ?? 3;
  while (
    !state.cancelRequested &&
    (input.maxCycles === undefined || state.cycle < input.maxCycles) &&
    state.consecutiveFailures < maxFailures
  ) {
    if (cyclesThisRun >= (input.cyclesPerRun ?? 24) || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof recurringChargeWorkflow>(input, state);
    }
    state.nextChargeAt = new Date(Date.now() + input.intervalMs).toISOString();
    if (await condition(() => state.cancelRequested, input.intervalMs)) break;
    state.nextChargeAt = undefined;
    const cycle = state.cycle + 1;
    const reference = cycleReference(input.planRef, cycle);
    let result: Pick<TokenChargeState, 'status' | 'confirmedBy' | 'reason'>;
    try {
      result = await executeChild(tokenChargeWorkflow, {
        workflowId: paymentWorkflowId(reference),
        args: [
          {
            reference,
            tokenId: state.tokenId!,
            amount: input.amount,
            currency: input.currency,
            webhookGraceMs: input.webhookGraceMs,
          },
        ],
      });
    } catch (err) {
      // Not started (the id is taken, e.g. by a held webhook) or failed: nothing proves a charge either way.
      result = { status: 'unknown', reason: describeFailure(err) };
    }
    state.cycle = cycle;
    cyclesThisRun += 1;
    const status =
      result.status === 'success' || result.status === 'failed' || result.status === 'expired'
        ? result.status
        : 'unknown';
    record({ cycle, reference, status, confirmedBy: result.confirmedBy, reason: result.reason });
  }
  state.nextChargeAt = undefined;
  if (state.movedToSchedule && state.tokenId) {
    setStatus(
      'completed',
      `moved to a Schedule after ${state.cycle} cycle(s): charges go on there; the token stays active`,
    );
  } else if (state.cancelRequested) {
    try {
      const cancelled = await cancels.cancelToken(state.tokenId!);
      setStatus(
        'cancelled',
        cancelled ? 'token cancelled (A5)' : 'the service refused A5 (token already cancelled or unknown)',
      );
    } catch (err) {
      // No further charge is made either way; the token may still be active at the service.
      setStatus('cancelled', `charges stopped, but A5 failed: ${describeFailure(err)}; cancel the token by hand`);
    }
  } else if (state.consecutiveFailures >= maxFailures) {
    setStatus('failed', `${state.consecutiveFailures} cycles in a row did not succeed`);
  } else setStatus('completed', `all ${state.cycle} cycles done`);
  return state;
}
