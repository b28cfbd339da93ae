// A virtual-account credit, from notification to the merchant's books, exactly once.
//
//   durable duplicate check (va_credit_records) → fee/date from the filtered list (C5) → freeze? → hand-over
//
// Layout: `virtualAccountCreditWorkflow` (a thin wrapper), then `VirtualAccountCreditFlow`: its
// state, its handlers (`listen`), the main steps (`run`), then the helpers.
//
// - One workflow per credited reference (id va-credit-<transaction_reference>), started by the
//   receiver for a credit notification (E-2) or by the error-log sweep (C10) for one that never reached
//   us. The workflow id stops a redelivery while the workflow runs and, after it completed, for
//   the namespace's retention (ALLOW_DUPLICATE_FAILED_ONLY). Past that — or after the execution
//   was deleted — the durable record still answers 'duplicate': a reference is credited once.
// - Only signed values are credited; for v2/v3 fee_charged and transaction_date come from the
//   service's own record (C5), never from the notification body.
// - A frozen credit (the service holds the funds: the filtered transaction list's `frozen_transaction`, or an
//   unconfirmed freeze in the notification) is recorded, not handed over, and asked about again until the
//   service shows it released.
// - The hand-over calls the merchant's credit handler with the reference as idempotency key,
//   retried with backoff; a handler that keeps failing leaves the workflow `handoff_failed`
//   (PaymentStatus) until an operator asks again (retryCreditHandoff). On a worker whose credits are
//   merchant events, the hand-over activity emits `virtual_account.credit.received` into its own
//   delivery workflow (`notify list`), which owns the attempts from then on: this code is unchanged
//   by that (an activity's work, no new command), so it needed no patch.
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createVirtualAccountCreditActivities, CreditFreezeLookup } from '../activities/virtual-account-credit';
import {
  creditAmountInLowestUnit,
  retryCreditHandoffUpdate,
  VA_CREDIT_DEFAULTS,
  virtualAccountCreditStateQuery,
  type CreditHandoff,
  type VirtualAccountCredit,
  type VirtualAccountCreditOutcome,
  type VirtualAccountCreditState,
} from '../shared/virtual-account-credit';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { failureMessage } from '../shared/failures';
import { LOCAL_STORE, READ, merchantHandOver } from './steps/activity-options';
import { MerchantEvents } from './steps/merchant-events';
import type { MerchantEventTarget } from '../shared/merchant-event';

/**
 * Patch (docs/operations.md): a hand-over to an events target that gives up tells the merchant
 * (`virtual_account.credit.needs_attention`). Only a failure from an events target names one, so a
 * credit without it records nothing new, not even the marker.
 */
const HANDOFF_GAVE_UP_EVENT_PATCH = 'va-credit-handoff-gave-up-event';

type VirtualAccountActivities = ReturnType<typeof createVirtualAccountCreditActivities>;
type Freeze = NonNullable<VirtualAccountCreditOutcome['freeze']>;

/** The duplicate check must happen before anything is credited: retried until the database answers. */
const { recordVirtualAccountCredit } = proxyActivities<VirtualAccountActivities>(LOCAL_STORE);
/** Bounded: when the service cannot be asked, the credit stands on its signed values alone. */
const { confirmVirtualAccountCredit, readVirtualAccountCreditFreeze } = proxyActivities<VirtualAccountActivities>(READ);
/** Not a read: the merchant's handler is asked until it takes the credit, backing off for days. */
const { handOverVirtualAccountCredit } = proxyActivities<VirtualAccountActivities>(
  merchantHandOver(VA_CREDIT_DEFAULTS.handoffRetryForMs),
);

export async function virtualAccountCreditWorkflow(credit: VirtualAccountCredit): Promise<VirtualAccountCreditOutcome> {
  const flow = new VirtualAccountCreditFlow(credit);
  flow.listen();
  return flow.run();
}

/** One credited reference, from the duplicate check to the hand-over. */
class VirtualAccountCreditFlow {
  // --- state ---

  /** What the query answers. */
  private readonly state: VirtualAccountCreditState;
  /** An operator asked for the hand-over again (retryCreditHandoff). */
  private retryRequested = false;

  constructor(private readonly credit: VirtualAccountCredit) {
    this.state = { status: 'recording', transactionReference: credit.transactionReference };
  }

  // --- handlers ---

  listen(): void {
    setHandler(virtualAccountCreditStateQuery, () => this.state);
    setHandler(
      retryCreditHandoffUpdate,
      () => {
        this.retryRequested = true;
        return { accepted: true as const };
      },
      { validator: (input) => this.checkRetry(input) },
    );
  }

  private checkRetry(input: { operator: string; reason: string }): void {
    if (this.state.status !== 'handoff_failed')
      throw new Error(`retryCreditHandoff: the credit is ${this.state.status}, not handoff_failed`);
    if (!input || typeof input.operator !== 'string' || input.operator.trim() === '')
      throw new Error('operator: required, a non-empty string');
    if (typeof input.reason !== 'string' || input.reason.trim() === '')
      throw new Error('reason: required, a non-empty string');
  }

  // --- the main steps ---

  /** Recorded once; a first credit is checked for a freeze, then handed over. */
  async run(): Promise<VirtualAccountCreditOutcome> {
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow: 'virtual-account-credit',
        reference: this.credit.transactionReference,
        status: 'recording',
        currency: this.credit.currency,
      }),
    );
    let outcome = await this.record();
    if (outcome.status === 'credited') {
      // ---- frozen: recorded, held back until the service shows the funds released ----
      this.setStatus('confirming');
      const freeze = await this.watchFreeze();
      if (freeze) outcome = { ...outcome, freeze };
      if (freeze && !freeze.releasedAt) return this.heldFrozen(outcome);
      outcome = { ...outcome, handoff: await this.handOver(outcome.credit, freeze) };
    }
    this.state.outcome = outcome;
    this.setStatus(outcome.status);
    return outcome;
  }

  /**
   * The durable duplicate check; a first credit's unsigned fee and date are confirmed by the filtered transaction list
   * (C5) when it answers.
   */
  private async record(): Promise<VirtualAccountCreditOutcome> {
    const outcome = await recordVirtualAccountCredit(this.credit);
    if (outcome.status !== 'credited' || outcome.credit.fieldsSource !== 'unconfirmed') return outcome;
    try {
      const confirmed = await confirmVirtualAccountCredit(this.credit);
      return confirmed ? { ...outcome, credit: confirmed } : outcome;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn(
        'virtual-account credit: the service could not confirm fee and date; credited on the signed values only',
        { transactionReference: this.credit.transactionReference },
      );
      return outcome;
    }
  }

  /**
   * The credit's freeze, as the service shows it. undefined: not frozen. Otherwise the freeze, with
   * `releasedAt` when the service showed it released within the watch period. A freeze named only by
   * an unsigned notification field is believed until the service can be asked (holding value back
   * is the safe side); a service that answers "not frozen" overrules it.
   */
  private async watchFreeze(): Promise<Freeze | undefined> {
    const { credit } = this;
    let look = await this.askFreeze();
    const frozenNow = look?.known ? look.frozen !== undefined : credit.frozenHint !== undefined;
    if (!frozenNow) return undefined;
    const fromService = look?.known && look.frozen;
    const freeze: Freeze = fromService
      ? { ...fromService, confirmedBy: 'service' }
      : {
          freezeTransactionRef: credit.frozenHint?.freezeTransactionRef,
          reason: credit.frozenHint?.reason,
          confirmedBy: 'notification',
        };
    this.setStatus(
      'frozen',
      `the service holds the funds (freeze ${freeze.freezeTransactionRef ?? 'unnamed'}${freeze.reason ? `: ${freeze.reason}` : ''}); checked again every ${VA_CREDIT_DEFAULTS.freezeCheckEveryMs} ms`,
    );
    const until = Date.now() + VA_CREDIT_DEFAULTS.freezeWatchForMs;
    while (Date.now() < until) {
      await sleep(Math.min(VA_CREDIT_DEFAULTS.freezeCheckEveryMs, until - Date.now()));
      look = await this.askFreeze();
      if (look?.known && !look.frozen) return { ...freeze, releasedAt: new Date().toISOString() };
    }
    return freeze;
  }

  /** Still frozen after the watch period: recorded, not handed over. */
  private heldFrozen(outcome: VirtualAccountCreditOutcome): VirtualAccountCreditOutcome {
    const held: VirtualAccountCreditOutcome = { ...outcome, status: 'frozen' };
    this.setStatus('frozen', `still frozen after ${VA_CREDIT_DEFAULTS.freezeWatchForMs} ms: not handed over`);
    this.state.outcome = held;
    return held;
  }

  /** The hand-over: at least once, one idempotency key; after the retries, an operator may ask again. */
  private async handOver(
    credit: VirtualAccountCreditOutcome['credit'],
    freeze: Freeze | undefined,
  ): Promise<CreditHandoff> {
    for (;;) {
      this.setStatus('handing_over');
      try {
        return await handOverVirtualAccountCredit({
          credit,
          ...(freeze
            ? { releasedFreeze: { freezeTransactionRef: freeze.freezeTransactionRef, reason: freeze.reason } }
            : {}),
        });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        const reason = `the credit handler did not take the credit: ${failureMessage(err)}; an operator may ask again (retryCreditHandoff)`;
        this.setStatus('handoff_failed', reason);
        await this.tellGaveUp(eventTargetOf(err), credit, reason);
        await condition(() => this.retryRequested);
        this.retryRequested = false;
      }
    }
  }

  // --- helpers ---

  /** The events target hears that the hand-over gave up: one event per credit (its id), behind the patch. */
  private async tellGaveUp(
    target: MerchantEventTarget | undefined,
    credit: VirtualAccountCreditOutcome['credit'],
    reason: string,
  ): Promise<void> {
    if (!target || !patched(HANDOFF_GAVE_UP_EVENT_PATCH)) return;
    const amount = creditAmountInLowestUnit(credit.settledAmount);
    await new MerchantEvents(target, 'virtual-account-credit', credit.transactionReference).emit(
      'virtual_account.credit.needs_attention',
      { status: 'handoff_failed', reason, ...(amount !== undefined ? { amount, currency: credit.currency } : {}) },
    );
  }

  /** What the filtered transaction list (C5) says of the freeze; undefined when the service could not be asked. */
  private async askFreeze(): Promise<CreditFreezeLookup | undefined> {
    try {
      return await readVirtualAccountCreditFreeze(this.credit);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return undefined;
    }
  }

  private setStatus(status: VirtualAccountCreditState['status'], reason?: string): void {
    const changed = status !== this.state.status;
    this.state.status = status;
    this.state.reason = reason;
    if (changed) upsertSearchAttributes(paymentSearchAttributes({ status }));
  }
}

/** The events target a failed hand-over names (the activity's failure details); none for other targets. */
function eventTargetOf(err: ActivityFailure): MerchantEventTarget | undefined {
  const details = err.cause instanceof ApplicationFailure ? err.cause.details : undefined;
  const named = (details?.[0] as { notify?: { url?: unknown } } | undefined)?.notify?.url;
  return typeof named === 'string' ? { url: named } : undefined;
}
