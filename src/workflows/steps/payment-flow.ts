// The base class of the card, bank, USSD, checkout and token-charge flows: what they share, in
// the order a flow uses it.
//  - State: the flow's state (what its query answers), the charge_successful inbox (registered in
//    the constructor, before the first await), status changes (a final status is final; the
//    PaymentStatus search attribute shows the final or parked status), conclusion from a Confirmation.
//  - Start: the search attributes (when the starter did not set them).
//  - The first send's outcome (send-once) read the way every payment reads it.
//  - The end: confirm (webhook or verify decides), park an unknown outcome until verify or an
//    operator's resolveOutcome Update settles it, wait for the handlers, answer the state.
//  - A Temporal cancel never ends a payment "cancelled" while money may have moved: verify decides.
// A subclass adds its own handlers (`listen()`) and steps (`run()`); see card-payment.ts.
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  isCancellation,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  PAYMENT_DEFAULTS,
  type ExpectedPayment,
  type FinalStatus,
  type TransactionLookup,
} from '../../shared/payment-common';
import type { DirectPaymentState } from '../../shared/payment-common';
import { PaymentFlow as PaymentFlowAttribute, paymentSearchAttributes } from '../../shared/search-attributes';
import type { OutcomeResolution } from '../../shared/outcome';
import type { SendOnceResult } from './send-once';
import { awaitFinal, listenForResolution, parkedRequery } from './unknown-outcome';
import { reportStatus } from './metrics';
import { MerchantEvents, NO_EVENTS, PAYMENT_EVENT_TYPES } from './merchant-events';
import { fromLookup, lookup, requeryTransaction, type Confirmation, type FoundTransaction } from './payment-steps';
import {
  awaitWebhookVerifying,
  confirmPayment,
  listenForWebhook,
  type PendingAs,
  type WebhookInbox,
} from './payment-confirmation';

/** What every payment flow's state holds. */
export interface PaymentFlowState {
  status: string;
  reason?: string;
  confirmedBy?: 'webhook' | 'verify';
  /** charge_successful deliveries that reached the flow (a duplicate is counted, processed once). */
  webhooksReceived: number;
  /** Set when an operator resolved a parked outcome (resolveOutcome). */
  resolution?: OutcomeResolution;
}

/** The statuses every payment flow has (the flow's own status type includes them). */
export type CommonStatus = FinalStatus | 'confirming';

/** The outcomes an operator may give a parked payment. */
export const PAYMENT_RESOLVE_OUTCOMES = ['success', 'failed'] as const;

/** What the payment was asked for, to compare the webhook's and verify's amounts with. */
export const expectedPayment = (input: {
  amount: number;
  currency: string;
  passCharge?: boolean;
}): ExpectedPayment => ({
  amount: input.amount,
  currency: input.currency,
  passCharge: input.passCharge === true,
});

/** A bank or USSD payment's state at its start. */
export const directPaymentState = (input: { transactionRef: string; amount: number }): DirectPaymentState => ({
  transactionRef: input.transactionRef,
  status: 'initiating',
  amount: input.amount,
  webhooksReceived: 0,
  refusedCodes: 0,
});

/** How a flow words its first send's lost answers: "the charge's answer was lost …". */
export interface SendWords {
  /** Whose answer: "the charge's", "the USSD request's". */
  answer: string;
  /** What never reached the service: "the charge", "the USSD request". */
  request: string;
  /** What could not be verified (default "the transaction"). */
  record?: string;
  /** Count the sends in the never-received reason ("sent 2 times") instead of "sent twice". */
  countSends?: boolean;
}

/** What a flow does with the parts of a send's outcome that are its own. */
export interface SentSteps<A> {
  answered(answer: A): void;
  /** The request is at the service, still Pending, but its answer was lost. */
  pending(lost: string): void;
  /** The request is at the service and succeeded (default: confirm it). */
  succeeded?(record: FoundTransaction): void;
}

export abstract class PaymentFlow<S extends PaymentFlowState> {
  // --- state ---

  /** The charge_successful inbox for the reference. */
  protected readonly inbox: WebhookInbox;
  /** What verify's Pending means when the flow confirms at the end. */
  protected pending: PendingAs = { as: 'unknown', reason: 'verified as Pending' };
  /** Where this payment's events go (docs/events.md): set by publish() from the input's `notify`. */
  protected events: MerchantEvents = NO_EVENTS;

  protected constructor(
    protected readonly ref: string,
    protected readonly expected: ExpectedPayment,
    readonly state: S,
    private readonly finals: readonly S['status'][],
  ) {
    this.inbox = listenForWebhook(ref);
  }

  /** What the flow's query answers. */
  snapshot(): S {
    return { ...this.state, webhooksReceived: this.inbox.deliveries };
  }

  /** A final status is final (a late answer cannot reopen it). */
  setStatus(status: S['status'] | CommonStatus, reason?: string): void {
    if (this.finals.includes(this.state.status)) return;
    const changed = status !== this.state.status;
    this.state.status = status as S['status'];
    this.state.reason = reason;
    if (changed) this.showStatus(status);
  }

  /**
   * PaymentStatus is written where an operator filters: the final status and a parked one
   * (`outcome_unknown`). The steps between (awaiting_pin, confirming, …) are the flow's query's
   * to answer: each upsert is a history event and a visibility write (docs/performance.md).
   */
  private showStatus(status: string): void {
    reportStatus(status);
    if (status !== 'unknown' && (this.finals.includes(status as S['status']) || status === 'outcome_unknown'))
      upsertSearchAttributes(paymentSearchAttributes({ status }));
  }

  conclude(c: Confirmation): void {
    this.state.confirmedBy = c.confirmedBy;
    this.setStatus(c.status, c.reason);
  }

  // --- start ---

  /**
   * The search attributes a payment starts with. The starters set them at the start already
   * (src/starters/start-flow.ts): then nothing is written here. A flow started otherwise (the
   * CLI's `temporal workflow start`, a test) writes them once.
   */
  protected publish(flow: string, payment: { amount: number; currency: string; notify?: { url: string } }): void {
    this.events = new MerchantEvents(payment.notify, flow, this.ref);
    if (workflowInfo().typedSearchAttributes.get(PaymentFlowAttribute) !== undefined) return;
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow,
        reference: this.ref,
        amount: payment.amount,
        currency: payment.currency,
        status: this.state.status,
      }),
    );
  }

  // --- the first send ---

  /** Reads the first send's outcome: the flow's own steps for an answer, a pending record or a success. */
  protected readSent<A>(sent: SendOnceResult<A, FoundTransaction>, words: SendWords, steps: SentSteps<A>): void {
    if (sent.outcome === 'answered') steps.answered(sent.answer);
    else if (sent.outcome === 'refused') this.setStatus('failed', sent.failure.message);
    else if (sent.outcome === 'unverified')
      this.setStatus(
        'unknown',
        `${words.answer} answer was lost (${sent.lost}) and ${words.record ?? 'the transaction'} could not be verified`,
      );
    else if (sent.outcome === 'never-received')
      this.setStatus(
        'failed',
        `${words.request} never reached the service (sent ${words.countSends ? `${sent.sends} times` : 'twice'})`,
      );
    else if (sent.record.status === 'Pending') steps.pending(sent.lost);
    else if (sent.record.status !== 'Success') this.conclude(fromLookup(sent.record, this.expected));
    else if (steps.succeeded) steps.succeeded(sent.record);
    else this.setStatus('confirming');
  }

  /**
   * An update-with-start's wait for the first send's answer (`answer()` set), or its failure (`failureType`, the
   * state's reason) once the flow moved on without one.
   */
  protected async awaitFirstAnswer(
    answer: () => string | undefined,
    failureType: string,
    fallback: string,
  ): Promise<void> {
    await condition(() => answer() !== undefined || this.state.status !== 'initiating');
    if (!answer())
      throw ApplicationFailure.create({
        type: failureType,
        message: this.state.reason ?? fallback,
        nonRetryable: true,
      });
  }

  // --- the wait and the end ---

  /**
   * The end of a flow that waits for the payer (checkout, USSD): when `waitMs` is given, waits that long
   * for the webhook, verifying every `verifyEveryMs`, then confirms — without a webhook grace
   * when the webhook came or verify already found the payment final.
   */
  protected async awaitPayerAndFinish(
    waitMs: number | undefined,
    input: { verifyEveryMs?: number; webhookGraceMs?: number },
  ): Promise<S> {
    let verified = false;
    if (waitMs !== undefined) {
      const pollMs = input.verifyEveryMs ?? PAYMENT_DEFAULTS.verifyWhileWaitingMs;
      verified = (await awaitWebhookVerifying(this.ref, this.inbox, waitMs, pollMs)) !== undefined;
      this.setStatus('confirming');
    }
    return this.finish(this.inbox.event || verified ? 0 : (input.webhookGraceMs ?? PAYMENT_DEFAULTS.webhookGraceMs));
  }

  /**
   * The end of every payment: a confirming payment is confirmed (webhook or verify decides, or the
   * record the sending activity read after a Success answer: `alreadyRead`); an
   * unknown outcome is parked, never final; then the flow waits for its handlers and answers its state.
   */
  protected async finish(graceMs: number, alreadyRead?: TransactionLookup): Promise<S> {
    if (this.state.status === 'confirming')
      this.conclude(await confirmPayment(this.ref, this.expected, this.inbox, graceMs, this.pending, alreadyRead));
    if (this.state.status === 'unknown') await this.parkUnknownOutcome();
    await this.emitOutcome();
    // A caller of an Update (update-with-start) sees its answer before the workflow closes.
    await condition(allHandlersFinished);
    return this.snapshot();
  }

  /**
   * An `unknown` payment is not final (docs/money-decisions.md): it is parked as outcome_unknown
   * (PaymentStatus), verified again on a backoff (doubling from 10 s, capped at 10 min) for
   * UNKNOWN_OUTCOME_DEFAULTS.requeryFor (24 h), and ends with the service's answer — Success,
   * Failed or Abandoned, or "does not know the reference" (nothing there: failed) — or with an
   * operator's resolveOutcome, recorded on the state. After the period only the operator ends it.
   */
  protected async parkUnknownOutcome(): Promise<void> {
    const why = this.state.reason ?? 'the outcome is unknown';
    const resolution = listenForResolution(PAYMENT_RESOLVE_OUTCOMES, () => this.state.status === 'outcome_unknown');
    const settled = await awaitFinal<FoundTransaction>({
      requery: requeryTransaction(this.ref),
      isFinal: (r) => r.status !== 'Pending',
      absentIsFinal: () => true,
      startAs: 'outcome_unknown',
      setStatus: (status) =>
        this.forceStatus(
          status,
          `${why}; parked: verified again on a backoff, or resolved by an operator (resolveOutcome)`,
        ),
      resolution,
      onParked: () => this.emitOutcome(),
      ...parkedRequery(),
    });
    if (settled.kind === 'resolved') {
      this.state.resolution = settled.resolution;
      const { outcome, operator, reason } = settled.resolution;
      this.forceStatus(outcome, `resolved by ${operator}: ${reason}`);
      return;
    }
    const c: Confirmation =
      settled.kind === 'final'
        ? fromLookup(settled.record, this.expected)
        : {
            status: 'failed',
            confirmedBy: 'verify',
            reason: 'the service does not know the reference: nothing was paid',
          };
    this.state.confirmedBy = c.confirmedBy;
    this.forceStatus(c.status, `${c.reason ?? c.status} (settled by verify after: ${why})`);
  }

  /**
   * The merchant event of the flow's outcome (final, or parked as outcome_unknown): one local
   * activity when the input has a `notify` target, nothing otherwise (./merchant-events.ts).
   */
  protected emitOutcome(): Promise<void> {
    return this.events.emitFor(PAYMENT_EVENT_TYPES, {
      ...this.expected,
      status: this.state.status,
      reason: this.state.reason,
    });
  }

  // --- cancel ---

  /**
   * Runs the flow's steps; a Temporal cancel (Web UI, CLI) of the flow never ends it "cancelled"
   * while money may have moved. The send in flight finishes (send-once is non-cancellable); then,
   * in a non-cancellable scope, verify decides: nothing at the service → cancelled;
   * Success/Failed/Abandoned → that outcome; Pending or no answer → parked as outcome_unknown
   * until the service (or an operator) settles it. The workflow then completes with its state.
   */
  protected async recordOutcomeOnCancel(steps: () => Promise<S>): Promise<S> {
    try {
      return await steps();
    } catch (err) {
      if (!isCancellation(err)) throw err;
      return CancellationScope.nonCancellable(async () => {
        await this.settleAfterCancel();
        await this.emitOutcome();
        return this.snapshot();
      });
    }
  }

  private async settleAfterCancel(): Promise<void> {
    if (['success', 'failed', 'expired'].includes(this.state.status)) return;
    const cancelled = 'cancelled by the caller';
    const found = await lookup(this.ref);
    if (found && !found.found) {
      this.forceStatus('cancelled', `${cancelled}: the service does not know the reference, nothing was paid`);
      return;
    }
    if (found?.found && found.status !== 'Pending') {
      const c = fromLookup(found, this.expected);
      this.state.confirmedBy = c.confirmedBy;
      this.forceStatus(c.status, `${cancelled}; verified: ${c.reason ?? c.status}`);
      return;
    }
    this.state.reason = found
      ? `${cancelled} while the payment is still pending at the service`
      : `${cancelled}; the payment could not be verified`;
    await this.parkUnknownOutcome();
  }

  /** Sets the status past the final-status guard (parking, cancel), upserting PaymentStatus on a change. */
  private forceStatus(status: string, reason?: string): void {
    const changed = status !== this.state.status;
    this.state.status = status as S['status'];
    if (reason !== undefined) this.state.reason = reason;
    if (changed) this.showStatus(status);
  }
}
