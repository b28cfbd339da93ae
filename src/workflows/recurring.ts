// Recurring card charges.
//
// The first payment is a hosted checkout with is_recurring (a child checkoutWorkflow under the
// first cycle's reference `<planRef>-C1`, so its webhook finds it); the token_id from its
// webhook pays later cycles with the token charge (A4) on durable timers. Each cycle is a child tokenChargeWorkflow
// under `payment-<planRef>-C<n>`: the reference is stable per cycle, the cycle's own webhook
// lands in it, and it verifies the reference BEFORE charging — a cycle that is run again
// (a reset, a retried child) finds its charge and never sends it twice. An unknown token charge outcome is
// verified too; the token charge is sent again only for a reference the service does not know; an outcome
// still unknown is parked (PaymentFlow, ./steps/payment-flow.ts).
// Cancel (signal) stops the plan and cancels the token with the cancel (A5). A plan never ends `cancelled`
// while the token may still be live: any 400 is the cancel's refusal (asked again, then parked for an
// operator); the cancel failing past its retries parks the plan as outcome_unknown and the cancel is asked again in
// the background until it cancels the token or an operator resolves the plan. History stays bounded: the
// parent continues-as-new every `cyclesPerRun` cycles and keeps only the last cycles in state.
//
// Layout: `tokenChargeWorkflow` and `TokenChargeFlow` (one cycle's charge, on PaymentFlow), then
// `recurringChargeWorkflow` and `RecurringPlan` (the plan: first payment, cycles, end).
import {
  condition,
  continueAsNew,
  executeChild,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { listenForResolution } from './steps/unknown-outcome';
import type { RecurringActivities } from '../activities/recurring';
import { ANSWERED_FINAL_STATUSES, PAYMENT_DEFAULTS } from '../shared/payment-common';
import { paymentWorkflowId } from '../shared/payment-webhook';
import {
  cancelRecurringSignal,
  cycleReference,
  RECURRING_CANCEL_RESOLVE_OUTCOMES,
  moveRecurringToScheduleSignal,
  recurringStateQuery,
  tokenChargeStateQuery,
  type RecurringCycle,
  type RecurringInput,
  type RecurringState,
  type TokenChargeInput,
  type TokenChargeState,
} from '../shared/recurring';
import type { OutcomeResolution } from '../shared/outcome';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { failureMessage } from '../shared/failures';
import { checkoutWorkflow } from './checkout';
import { TOKEN_CANCEL, TOKEN_CANCEL_ROUND } from './steps/activity-options';
import { PaymentFlow } from './steps/payment-flow';
import { MerchantEvents, type EventTypes } from './steps/merchant-events';
import { fromLookup, lookup, refusal, sendPayment, sends } from './steps/payment-steps';

const RECENT_CYCLES = 12;
/**
 * Patch (docs/operations.md): the 400 of the cancel (A5) no longer ends a plan cancelled; the cancel is asked again,
 * then the plan parks.
 */
const TOKEN_CANCEL_REFUSAL_PATCH = 'recurring-a5-refusal-not-cancelled';
/**
 * Patch (docs/operations.md): the cancel (A5) failing (5xx, timeouts, lost answers) past its retries no longer
 * ends a plan `cancelled`: it parks as outcome_unknown and the cancel is asked again in the background; a
 * refusal (any 400) carries the service's message (activity cancelTokenAnswered).
 */
const TOKEN_CANCEL_UNKNOWN_PATCH = 'recurring-a5-unknown-parks';
/**
 * Patch (docs/operations.md): the plan as a whole tells the merchant its end (recurring.*, docs/events.md).
 * Its input could carry `notify` before (for its charges), so a running plan started then must not
 * emit where its history has nothing.
 */
const PLAN_EVENTS_PATCH = 'recurring-plan-events';
/** A plan's merchant events: its end, and its park when the cancel (A5) was refused. */
const PLAN_EVENT_TYPES: EventTypes = {
  completed: 'recurring.completed',
  cancelled: 'recurring.cancelled',
  failed: 'recurring.failed',
  outcome_unknown: 'recurring.needs_attention',
};
/** The pause before the cancel (A5) is asked again after a 400. */
const TOKEN_CANCEL_AGAIN_AFTER_MS = 30_000;
/** The cancel (A5): a read's kind of call, retried longer than a read. */
const cancels = proxyActivities<RecurringActivities>(TOKEN_CANCEL);

/**
 * The cancel (A5) asked again in the background while a plan is parked after the cancel failed: a few quick attempts a
 * round (an operator's resolution is taken between rounds), rounds apart by a pause that doubles
 * from TOKEN_CANCEL_BACKGROUND_FIRST_MS up to TOKEN_CANCEL_BACKGROUND_MAX_MS (about 24 rounds a day at most).
 */
const backgroundCancels = proxyActivities<RecurringActivities>(TOKEN_CANCEL_ROUND);
const TOKEN_CANCEL_BACKGROUND_FIRST_MS = 60_000;
const TOKEN_CANCEL_BACKGROUND_MAX_MS = 3600_000;

/**
 * One ask of the cancel (A5) as the plan reads it: cancelled, refused (any 400, the service's message), or failed
 * (unknown).
 */
type CancelAttempt = { kind: 'cancelled' } | { kind: 'refused'; message: string } | { kind: 'failed'; message: string };

/** One token charge (A4) under a stable reference: verify first, charge at most once, confirm by webhook or verify. */
export async function tokenChargeWorkflow(input: TokenChargeInput): Promise<TokenChargeState> {
  return new TokenChargeFlow(input).run();
}

class TokenChargeFlow extends PaymentFlow<TokenChargeState> {
  // --- state ---

  constructor(private readonly input: TokenChargeInput) {
    super(
      input.reference,
      { amount: input.amount, currency: input.currency, passCharge: false },
      { reference: input.reference, status: 'checking', charged: false, webhooksReceived: 0 },
      ANSWERED_FINAL_STATUSES,
    );
  }

  // --- handlers ---

  private listen(): void {
    setHandler(tokenChargeStateQuery, () => this.snapshot());
  }

  // --- main steps ---

  async run(): Promise<TokenChargeState> {
    this.listen();
    this.publish('recurring', this.input);
    if (!(await this.verifyFirst())) return this.snapshot();
    if (this.state.status === 'checking') await this.charge();
    return this.finish(this.input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs);
  }

  /**
   * Verify first: this reference may already have been charged (a cycle run again). false when it could not be
   * verified.
   */
  private async verifyFirst(): Promise<boolean> {
    const before = await lookup(this.ref);
    if (!before) {
      this.setStatus('unknown', 'the reference could not be verified before charging: not charged');
      return false;
    }
    if (!before.found) return true;
    if (before.status === 'Success')
      this.setStatus('confirming', 'already charged under this reference: not charged again');
    else
      this.conclude({
        ...fromLookup(before, this.expected),
        reason: `the reference exists at the service (${before.status}): not charged again`,
      });
    return true;
  }

  /** The token charge (A4): sent once; a second time only when verify proved the first never arrived. */
  private async charge(): Promise<void> {
    this.setStatus('charging');
    // A refused duplicate reference means an earlier charge exists: not a refusal, the record decides.
    const refusedOutright = (err: unknown) => {
      const r = refusal(err);
      return r !== undefined && !/duplicate/i.test(r.message);
    };
    const { tokenId, amount } = this.input;
    const sent = await sendPayment(
      this.ref,
      () => sends.chargeToken({ tokenId, amount, reference: this.ref }),
      refusedOutright,
    );
    if (sent.outcome === 'found') this.state.charged = true;
    this.readSent(
      sent,
      { answer: "the charge's", request: 'the charge', record: 'the charge', countSends: true },
      {
        answered: () => {
          this.state.charged = true;
          this.setStatus('confirming'); // A4's body is not proof: the webhook or verify confirms
        },
        pending: () => this.setStatus('confirming'),
      },
    );
  }
}

export async function recurringChargeWorkflow(
  input: RecurringInput,
  carried?: RecurringState,
): Promise<RecurringState> {
  return new RecurringPlan(input, carried).run();
}

/** One run of a recurring plan (a continue-as-new starts the next from the carried state). */
class RecurringPlan {
  // --- state ---

  readonly state: RecurringState;
  private cyclesThisRun = 0;
  private readonly maxFailures: number;
  /** Where the plan's end is told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;

  constructor(
    private readonly input: RecurringInput,
    private readonly carried: RecurringState | undefined,
  ) {
    this.state = carried ?? {
      planRef: input.planRef,
      status: 'awaiting_first_payment',
      cycle: 0,
      recentCycles: [],
      consecutiveFailures: 0,
      cancelRequested: false,
    };
    this.maxFailures = input.maxConsecutiveFailures ?? 3;
    this.events = new MerchantEvents(input.notify, 'recurring-plan', input.planRef);
  }

  // --- handlers ---

  private listen(): void {
    setHandler(recurringStateQuery, () => this.state);
    setHandler(cancelRecurringSignal, () => {
      this.state.cancelRequested = true;
    });
    setHandler(moveRecurringToScheduleSignal, () => {
      this.state.cancelRequested = true;
      this.state.movedToSchedule = true;
    });
  }

  // --- main steps ---

  async run(): Promise<RecurringState> {
    this.listen();
    if (this.carried || (await this.firstPayment())) {
      await this.chargeCycles();
      await this.end();
    }
    await this.emitOutcome();
    return this.state;
  }

  /**
   * The plan's event for its status now. Without a target nothing is recorded (not even the patch
   * marker); with one, only a plan that reaches this point on this code emits (the patch).
   */
  private async emitOutcome(): Promise<void> {
    if (!this.events.enabled || !patched(PLAN_EVENTS_PATCH)) return;
    const { input, state } = this;
    await this.events.emitFor(PLAN_EVENT_TYPES, {
      status: state.status,
      reason: state.reason,
      amount: input.amount,
      currency: input.currency,
    });
  }

  /**
   * The first payment: a hosted checkout with is_recurring (child, cycle 1); its webhook's token_id pays later cycles.
   */
  private async firstPayment(): Promise<boolean> {
    const { input, state } = this;
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
            // Each charge tells the merchant its outcome (docs/events.md); absent: as before.
            ...(input.notify ? { notify: input.notify } : {}),
          },
        ],
      });
    } catch (err) {
      this.setStatus('failed', `the first payment's checkout failed: ${failureMessage(err)}`);
      return false;
    }
    state.cycle = 1;
    this.record({ cycle: 1, reference: firstRef, ...cycleOutcome(first) });
    if (first.status !== 'success') {
      this.setStatus('failed', `first payment ${first.status}${first.reason ? `: ${first.reason}` : ''}`);
      return false;
    }
    if (!first.tokenId) {
      this.setStatus('failed', 'the first payment was confirmed without a token_id (no webhook carried one)');
      return false;
    }
    state.tokenId = first.tokenId;
    this.setStatus('active');
    return true;
  }

  /**
   * Later cycles on durable timers, until cancelled, maxCycles, or maxConsecutiveFailures; continues-as-new every
   * cyclesPerRun.
   */
  private async chargeCycles(): Promise<void> {
    const { input, state } = this;
    while (
      !state.cancelRequested &&
      (input.maxCycles === undefined || state.cycle < input.maxCycles) &&
      state.consecutiveFailures < this.maxFailures
    ) {
      if (this.cyclesThisRun >= (input.cyclesPerRun ?? 24) || workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof recurringChargeWorkflow>(input, state);
      }
      state.nextChargeAt = new Date(Date.now() + input.intervalMs).toISOString();
      if (await condition(() => state.cancelRequested, input.intervalMs)) break;
      state.nextChargeAt = undefined;
      await this.chargeCycle(state.cycle + 1);
    }
    state.nextChargeAt = undefined;
  }

  /** One cycle: a child tokenChargeWorkflow under the cycle's stable reference. */
  private async chargeCycle(cycle: number): Promise<void> {
    const { input, state } = this;
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
            ...(input.notify ? { notify: input.notify } : {}),
          },
        ],
      });
    } catch (err) {
      // Not started (the id is taken, e.g. by a held webhook) or failed: nothing proves a charge either way.
      result = { status: 'unknown', reason: failureMessage(err) };
    }
    state.cycle = cycle;
    this.cyclesThisRun += 1;
    this.record({ cycle, reference, ...cycleOutcome(result) });
  }

  /** The plan's end: moved to a Schedule, cancelled (the token cancelled (A5)), failed, or all cycles done. */
  private async end(): Promise<void> {
    const { state } = this;
    if (state.movedToSchedule && state.tokenId) {
      this.setStatus(
        'completed',
        `moved to a Schedule after ${state.cycle} cycle(s): charges go on there; the token stays active`,
      );
    } else if (state.cancelRequested) {
      if (patched(TOKEN_CANCEL_UNKNOWN_PATCH)) await this.cancelTokenOrPark();
      else await this.cancelTokenBeforeParking();
    } else if (state.consecutiveFailures >= this.maxFailures) {
      this.setStatus('failed', `${state.consecutiveFailures} cycles in a row did not succeed`);
    } else this.setStatus('completed', `all ${state.cycle} cycles done`);
  }

  /**
   * Before the patch TOKEN_CANCEL_UNKNOWN_PATCH: the cancel (A5) failing ends the plan cancelled (kept for plans that
   * recorded it).
   */
  private async cancelTokenBeforeParking(): Promise<void> {
    const { state } = this;
    try {
      const cancelled = await cancels.cancelToken(state.tokenId!);
      if (cancelled) this.setStatus('cancelled', 'token cancelled (A5)');
      else if (patched(TOKEN_CANCEL_REFUSAL_PATCH)) await this.afterRefusedCancel();
      else this.setStatus('cancelled', 'the service refused to cancel the token (A5): already cancelled or unknown');
    } catch (err) {
      // No further charge is made either way; the token may still be active at the service.
      this.setStatus(
        'cancelled',
        `charges stopped, but the cancel (A5) failed: ${failureMessage(err)}; cancel the token by hand`,
      );
    }
  }

  /**
   * The cancel (A5) with the patch TOKEN_CANCEL_UNKNOWN_PATCH. Cancelled: reported. Refused (any 400): asked again
   * after a pause, then parked for an operator (afterRefusal). Failed past its retries (about a quarter of
   * an hour): the token may still be live, so the plan is never reported cancelled on it: it parks
   * as outcome_unknown and keeps asking the cancel (parkWhileTokenCancelFails).
   */
  private async cancelTokenOrPark(): Promise<void> {
    const first = await tryCancelToken(cancels, this.state.tokenId!);
    if (first.kind === 'cancelled') this.setStatus('cancelled', 'token cancelled (A5)');
    else if (first.kind === 'refused') await this.afterRefusal(first.message);
    else await this.parkWhileTokenCancelFails(first.message);
  }

  /**
   * The cancel (A5) refused (any 400): asked once more after a pause; refused or failing again, parked for an operator.
   */
  private async afterRefusal(message: string): Promise<void> {
    await sleep(TOKEN_CANCEL_AGAIN_AFTER_MS);
    const again = await tryCancelToken(cancels, this.state.tokenId!);
    if (again.kind === 'cancelled') {
      this.setStatus('cancelled', 'token cancelled (A5, asked again after a 400)');
      return;
    }
    const then = again.kind === 'refused' ? `, and again ('${again.message}')` : `, then failed (${again.message})`;
    await this.parkForOperator(
      `charges stopped, but the cancel (A5) was refused ('${message}')${then}: the token may be cancelled already, unknown, or still live; check it and resolve the plan`,
      'the cancel (A5) was refused',
    );
  }

  /**
   * The cancel (A5) kept failing: parked as outcome_unknown (ops list, recurring.needs_attention) while the cancel is
   * asked again in the background, rounds apart by a growing pause. Ends cancelled when the cancel
   * cancels the token, or as an operator resolves it. A 400 now (an earlier cancel may have cancelled
   * the token, its answer lost) stops the asking: only an operator can tell.
   */
  private async parkWhileTokenCancelFails(failure: string): Promise<void> {
    const resolution = this.acceptResolution();
    this.setStatus(
      'outcome_unknown',
      `charges stopped, but the cancel (A5) failed for about a quarter of an hour (${failure}): the token may still be live; the cancel is asked again in the background; or check the token and resolve the plan`,
    );
    await this.emitOutcome();
    for (let pause = TOKEN_CANCEL_BACKGROUND_FIRST_MS; ; pause = Math.min(pause * 2, TOKEN_CANCEL_BACKGROUND_MAX_MS)) {
      if (await condition(() => resolution() !== undefined, pause)) break;
      const again = await tryCancelToken(backgroundCancels, this.state.tokenId!);
      if (again.kind === 'cancelled') {
        this.setStatus('cancelled', 'token cancelled (A5, asked again in the background after it had failed)');
        return;
      }
      if (again.kind === 'refused') {
        this.state.reason = `charges stopped; the cancel (A5) failed, then was refused ('${again.message}'): an earlier cancel may have cancelled the token with its answer lost, or the token is still live; check it and resolve the plan`;
        await condition(() => resolution() !== undefined);
        break;
      }
    }
    this.resolve(resolution()!, 'the cancel (A5) had failed');
  }

  /** Parked as outcome_unknown for an operator only (nothing asked in the background). */
  private async parkForOperator(reason: string, what: string): Promise<void> {
    const resolution = this.acceptResolution();
    this.setStatus('outcome_unknown', reason);
    await this.emitOutcome();
    await condition(() => resolution() !== undefined);
    this.resolve(resolution()!, what);
  }

  /** The resolveOutcome Update (`ops resolve`), accepted while the plan is parked. */
  private acceptResolution(): () => OutcomeResolution | undefined {
    return listenForResolution(RECURRING_CANCEL_RESOLVE_OUTCOMES, () => this.state.status === 'outcome_unknown');
  }

  /** An operator's word ends the plan: cancelled (the token cancelled by hand) or failed (the token still live). */
  private resolve(r: OutcomeResolution, what: string): void {
    this.state.resolution = r;
    this.setStatus(r.outcome as RecurringState['status'], `resolved by ${r.operator}: ${r.reason} (${what})`);
  }

  /**
   * The cancel (A5) answered 400 'Recurring Payment was not cancelled': the token may be cancelled already, be
   * unknown, or still be active. The spec has no read of a token, so its state is read the only
   * way there is: the cancel again after a pause (idempotent; it cancels an active token). Cancelled now:
   * reported. Refused again: parked as outcome_unknown (no further charge is made) until an
   * operator checks the token and resolves it (resolveOutcome, `cli ops resolve`). Never reported
   * cancelled on a refusal alone.
   */
  private async afterRefusedCancel(): Promise<void> {
    const tokenId = this.state.tokenId!;
    await sleep(TOKEN_CANCEL_AGAIN_AFTER_MS);
    let again: boolean | string;
    try {
      again = await cancels.cancelToken(tokenId);
    } catch (err) {
      again = failureMessage(err);
    }
    if (again === true) {
      this.setStatus('cancelled', 'token cancelled (A5, asked again after a 400)');
      return;
    }
    await this.parkForOperator(
      `charges stopped, but the cancel (A5) was refused ('Recurring Payment was not cancelled')${again === false ? ' twice' : `, then failed (${again})`}: the token may be cancelled already, unknown, or still active; check it and resolve the plan`,
      'the cancel (A5) was refused',
    );
  }

  // --- helpers ---

  private setStatus(status: RecurringState['status'], reason?: string): void {
    this.state.status = status;
    this.state.reason = reason;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  }

  private record(c: RecurringCycle): void {
    this.state.recentCycles = [...this.state.recentCycles, c].slice(-RECENT_CYCLES);
    this.state.consecutiveFailures = c.status === 'success' ? 0 : this.state.consecutiveFailures + 1;
  }
}

/** The cancel (A5) asked once through `proxy` (its retries included), read as cancelled, refused or failed. */
async function tryCancelToken(proxy: typeof cancels, tokenId: string): Promise<CancelAttempt> {
  try {
    const answer = await proxy.cancelTokenAnswered(tokenId);
    return answer.cancelled ? { kind: 'cancelled' } : { kind: 'refused', message: answer.refusal };
  } catch (err) {
    return { kind: 'failed', message: failureMessage(err) };
  }
}

/** A cycle's payment as the plan records it: anything not final (outcome_unknown, cancelled…) is unknown. */
function cycleOutcome(r: {
  status: string;
  confirmedBy?: RecurringCycle['confirmedBy'];
  reason?: string;
}): Pick<RecurringCycle, 'status' | 'confirmedBy' | 'reason'> {
  const status = r.status === 'success' || r.status === 'failed' || r.status === 'expired' ? r.status : 'unknown';
  return { status, confirmedBy: r.confirmedBy, reason: r.reason };
}
