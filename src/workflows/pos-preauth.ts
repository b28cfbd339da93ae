// POS terminal pre-authorisation, then its completion (the transaction send (F3) as Pre-Authorization, then as
// Completion tied to it by original_merchant_ref; the requery (F4) by merchant_ref for each).
//
//   validate (zod; card-read fields refused by name)
//   send the Pre-Authorization through send-once (./steps/pos-terminal-send.ts)
//       declined | rejected | not_received | card_data_unavailable → final (nothing held)
//       unknown → parked outcome_unknown (requery on a backoff; resolveOutcome)
//   approved → held: a durable timer runs to the end of the hold window (heldSince + holdWindow,
//       heldSince = the first pre-authorisation send), while the flow waits for
//       completePreAuth (Update: amount ≤ held, a fresh read of the same card) → completing
//       releasePreAuth (Update)                                               → released
//       the window ends                                                       → lapsed
//   completing: send the Completion through send-once, merchant_ref CP<digest of the pre-auth's>
//       approved → completed (money moved); declined / rejected / not_received → completion_*
//       card data gone before it was received → held again (nothing reached the service)
//
// A second completePreAuth is refused by the Update's validator (the flow is no longer held);
// the Completion is sent once, and again only after the requery proved the earlier attempt never arrived.
// A lapse or a release sends nothing: the spec has no call to release a hold, so the funds stay
// held at the issuer until its own hold expires. No money moves beyond the hold.
import { condition, isCancellation, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import { maskedPan, posTransactionStartSearch, type PosTransactionOptions } from '../shared/pos-terminal';
import {
  DEFAULT_HOLD_WINDOW,
  PosCompleteInputSchema,
  PosSealedPreAuthInputSchema,
  completePreAuthUpdate,
  completionMerchantRef,
  holdWindowMs,
  posPreAuthStateQuery,
  releasePreAuthUpdate,
  type PosCompleteInput,
  type PosCompletionState,
  type PosPreAuthResult,
  type PosPreAuthState,
  type PosSealedPreAuthInput,
} from '../shared/pos-preauth';
import { unsealedFieldsIn } from '../shared/pos-refund';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { describeInputIssues, inputIssuesOf } from '../shared/input-error';
import { parseSealedPosInput } from './steps/pos-input';
import {
  linkedWording,
  listenForResolveOutcome,
  sendPosTransaction,
  type ResolutionSlot,
} from './steps/pos-terminal-send';
import { MerchantEvents, posTransactionEventTypes, type EventTypes } from './steps/merchant-events';

export async function posPreAuthWorkflow(raw: PosSealedPreAuthInput): Promise<PosPreAuthResult> {
  const flow = new PosPreAuthFlow(raw);
  flow.listen();
  const result = await flow.run();
  await flow.emitOutcome(result.status, result.action);
  return result;
}

type Fields = Omit<ReturnType<typeof PosSealedPreAuthInputSchema.parse>, 'options' | 'notify'>;

/**
 * A pre-authorisation's merchant events (docs/events.md): the hold placed (`held`), its end without
 * a completion (released, lapsed), then its completion's own outcome.
 */
const PREAUTH_EVENT_TYPES = posTransactionEventTypes('preauth', {
  held: 'pos.preauth.succeeded',
  released: 'pos.preauth.released',
  lapsed: 'pos.preauth.released',
});
const COMPLETION_EVENT_TYPES: EventTypes = {
  completed: 'pos.completion.succeeded',
  completion_declined: 'pos.completion.failed',
  completion_rejected: 'pos.completion.failed',
  completion_not_received: 'pos.completion.failed',
  outcome_unknown: 'pos.completion.needs_attention',
};
type CompleteRequest = ReturnType<typeof PosCompleteInputSchema.parse>;

/** One pre-authorisation and its completion. */
class PosPreAuthFlow {
  // --- state ---

  private readonly fields: Fields;
  /** The send options (the hold window is the flow's own). */
  private readonly sendOptions: PosTransactionOptions;
  private readonly windowMs: number;
  private readonly held: number;
  private readonly completionRef: string;
  private readonly state: PosPreAuthState;
  private holdUntilMs = 0;
  /** The accepted completePreAuth, until the flow takes it. */
  private completeRequest: CompleteRequest | undefined;
  private releaseRequest: { reason?: string } | undefined;
  /** The operator's resolveOutcome, one per phase. */
  private readonly resolutions: Record<PosPreAuthState['phase'], ResolutionSlot> = { preauth: {}, completion: {} };
  /** Where the outcomes are told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;

  constructor(raw: PosSealedPreAuthInput) {
    // Every field rule, before anything is sent; card-read fields refused by name.
    const parsed = parseSealedPosInput(
      PosSealedPreAuthInputSchema,
      raw,
      unsealedFieldsIn(raw, 'startPosPreAuth'),
      'POS pre-authorisation',
    );
    // `notify` is the flow's, never part of the body of the transaction send (F3).
    const { options = {}, notify, ...fields } = parsed;
    this.events = new MerchantEvents(notify, 'pos-preauth', fields.merchant_ref);
    const { holdWindow, ...sendOptions } = options;
    this.fields = fields;
    this.sendOptions = sendOptions;
    this.windowMs = holdWindowMs(holdWindow ?? DEFAULT_HOLD_WINDOW);
    this.held = Number(fields.amount);
    this.completionRef = completionMerchantRef(fields.merchant_ref);
    this.state = {
      merchantRef: fields.merchant_ref,
      status: 'validating',
      phase: 'preauth',
      amount: this.held,
      currency: fields.currency,
      attempt: 0,
      steps: [],
      card: { maskedPan: maskedPan(fields.card) },
    };
  }

  // --- handlers ---

  listen(): void {
    setHandler(posPreAuthStateQuery, () => this.snapshot());
    listenForResolveOutcome(() => this.resolutions[this.state.phase], this.state);
    setHandler(
      completePreAuthUpdate,
      (input) => {
        const request = PosCompleteInputSchema.parse(input);
        this.completeRequest = request;
        return {
          completionMerchantRef: this.completionRef,
          amount: Number(request.amount),
          acceptedAt: new Date(Date.now()).toISOString(),
        };
      },
      { validator: (input) => this.checkComplete(input) },
    );
    setHandler(
      releasePreAuthUpdate,
      (input) => {
        this.releaseRequest = { ...(input?.reason ? { reason: String(input.reason).slice(0, 500) } : {}) };
        return { releasedAt: new Date(Date.now()).toISOString() };
      },
      {
        validator: (_input: { reason?: string }) => {
          if (this.state.status !== 'held' || this.completeRequest !== undefined)
            throw new Error(
              `releasePreAuth refused: the pre-authorisation ${this.state.merchantRef} is ${this.state.status}, not held`,
            );
        },
      },
    );
  }

  /** completePreAuth: only while held and within the window, at most the amount held, the same card. */
  private checkComplete(input: PosCompleteInput): void {
    const { state, held, fields } = this;
    if (state.status !== 'held' || this.completeRequest !== undefined) {
      const why =
        state.completion && state.completion.status !== 'card_data_unavailable'
          ? `the pre-authorisation ${state.merchantRef} is already being completed or was completed (completion ${state.completion.merchantRef}: ${state.completion.status}); a completion is sent once`
          : this.completeRequest !== undefined
            ? `the pre-authorisation ${state.merchantRef} is already being completed (a completion was accepted just before this one); a completion is sent once`
            : `the pre-authorisation ${state.merchantRef} is ${state.status}, not held`;
      throw new Error(`completePreAuth refused: ${why}`);
    }
    if (Date.now() >= this.holdUntilMs)
      throw new Error(`completePreAuth refused: the hold window ended at ${new Date(this.holdUntilMs).toISOString()}`);
    const p = PosCompleteInputSchema.safeParse(input);
    if (!p.success) throw new Error(`completePreAuth refused: ${describeInputIssues(inputIssuesOf(p.error))}`);
    const amount = Number(p.data.amount);
    if (amount > held) throw new Error(`completePreAuth refused: amount ${amount} is more than the ${held} held`);
    if (p.data.card.bin !== fields.card.bin || p.data.card.last4 !== fields.card.last4) {
      throw new Error(
        `completePreAuth refused: the card presented (${maskedPan(p.data.card)}) is not the pre-authorised card (${maskedPan(fields.card)})`,
      );
    }
  }

  // --- the main steps ---

  /**
   * The Pre-Authorization sent (F3); held until completed, released or lapsed; the Completion sent once.
   */
  async run(): Promise<PosPreAuthResult> {
    const { fields, state } = this;
    upsertSearchAttributes(paymentSearchAttributes({ ...posTransactionStartSearch(fields), flow: 'pos-preauth' }));

    // ---- the Pre-Authorization (F3) ----
    const heldSince = Date.now();
    state.heldSince = new Date(heldSince).toISOString();
    this.holdUntilMs = heldSince + this.windowMs;
    state.holdUntil = new Date(this.holdUntilMs).toISOString();
    const pre = await sendPosTransaction({
      wording: linkedWording('pre-authorisation'),
      req: { ...fields, transaction_type: 'Pre-Authorization' },
      options: this.sendOptions,
      track: state,
      setStatus: (status) => this.setStatus(status),
      resolution: () => this.resolutions.preauth.value,
      onParked: () => this.emitOutcome('outcome_unknown'),
    });
    if (pre.resolution) state.resolution = pre.resolution;
    if (pre.transaction) state.transaction = pre.transaction;
    if (pre.status !== 'approved')
      return this.finish(pre.status, pre.action, pre.cancelRequested ? { cancelRequested: true } : {});
    await this.emitOutcome('held', 'Approved: the amount is held until completed, released or lapsed');

    // ---- held until completed, released or lapsed; a completion whose card read was gone holds again ----
    for (;;) {
      const ended = await this.whileHeld();
      if (ended) return ended;
      const completed = await this.complete(this.completeRequest!);
      if (completed) return completed;
      this.completeRequest = undefined;
    }
  }

  /** Held until the window ends (lapsed), a release (released) or a completion (undefined: complete it). */
  private async whileHeld(): Promise<PosPreAuthResult | undefined> {
    this.setStatus('held');
    let woke: boolean;
    try {
      woke =
        Date.now() < this.holdUntilMs &&
        (await condition(
          () => this.completeRequest !== undefined || this.releaseRequest !== undefined,
          this.holdUntilMs - Date.now(),
        ));
    } catch (err) {
      if (!isCancellation(err)) throw err;
      return this.finish(
        'released',
        'Cancelled while held: no completion was sent, nothing moved beyond the hold (it lapses at the issuer)',
        { cancelRequested: true },
      );
    }
    if (!woke) {
      return this.finish(
        'lapsed',
        `The hold window ended (${this.state.holdUntil}) without a completion: nothing moved beyond the hold, which lapses at the issuer`,
      );
    }
    const release = this.releaseRequest;
    if (release !== undefined) {
      if (release.reason) this.state.releaseReason = release.reason;
      return this.finish(
        'released',
        `Released by the merchant${release.reason ? ` (${release.reason})` : ''}: no completion will be sent; the hold lapses at the issuer`,
      );
    }
    return undefined;
  }

  /**
   * The Completion (F3), sent once: the flow's end, or undefined when the card read was gone before it was
   * sent (held again).
   */
  private async complete(request: CompleteRequest): Promise<PosPreAuthResult | undefined> {
    const { fields, state, completionRef, held } = this;
    state.phase = 'completion';
    const completion: PosCompletionState = {
      merchantRef: completionRef,
      amount: Number(request.amount),
      status: 'initiating',
      attempt: state.completion?.attempt ?? 0,
      steps: state.completion?.steps ?? [],
      card: { maskedPan: maskedPan(request.card) },
    };
    state.completion = completion;
    this.setStatus('completing');
    // Sent once (send-once runs non-cancellable); a cancel while its outcome is parked asks the requery (F4) once more
    // and records it.
    const out = await sendPosTransaction({
      wording: linkedWording('completion'),
      req: {
        terminal_id: fields.terminal_id,
        amount: request.amount,
        currency: fields.currency,
        account_type: fields.account_type,
        aid: request.aid,
        ...(request.card_type ? { card_type: request.card_type } : {}),
        card: request.card,
        transaction_type: 'Completion',
        merchant_ref: completionRef,
        original_merchant_ref: fields.merchant_ref,
      },
      options: this.sendOptions,
      track: completion,
      setStatus: (s) => {
        completion.status = s;
        this.setStatus(s === 'outcome_unknown' ? 'outcome_unknown' : 'completing');
      },
      resolution: () => this.resolutions.completion.value,
      onParked: () => this.emitOutcome('outcome_unknown'),
    });
    completion.status = out.status;
    completion.action = out.action;
    if (out.transaction) completion.transaction = out.transaction;
    if (out.resolution) completion.resolution = out.resolution;
    switch (out.status) {
      case 'approved':
        return this.finish(
          'completed',
          `Completed: ${completion.amount} of the ${held} held was captured (completion ${completionRef})`,
        );
      case 'declined':
        return this.finish(
          'completion_declined',
          `${out.action}; nothing moved beyond the hold, which lapses at the issuer`,
        );
      case 'rejected':
        return this.finish('completion_rejected', `${out.action}; the hold lapses at the issuer`);
      case 'not_received':
        return this.finish('completion_not_received', `${out.action} The hold lapses at the issuer.`);
      case 'outcome_unknown':
        return this.finish('outcome_unknown', out.action, out.cancelRequested ? { cancelRequested: true } : {});
      case 'card_data_unavailable':
        // Nothing reached the service: the pre-authorisation is still held; a new completePreAuth (fresh card read) may
        // come.
        state.completionsNotSent = (state.completionsNotSent ?? 0) + 1;
        return undefined;
    }
  }

  // --- helpers ---

  /** The event for `status` in the current phase (one local activity with a target, nothing without). */
  emitOutcome(status: string, reason?: string): Promise<void> {
    // A completion whose card read was gone holds again: its later release or lapse is the pre-authorisation's.
    const completion = this.state.phase === 'completion' ? this.state.completion : undefined;
    const ofCompletion = completion !== undefined && COMPLETION_EVENT_TYPES[status] !== undefined;
    return this.events.emitFor(ofCompletion ? COMPLETION_EVENT_TYPES : PREAUTH_EVENT_TYPES, {
      status,
      reason,
      amount: ofCompletion ? completion.amount : this.held,
      currency: this.fields.currency,
      ...(ofCompletion ? { part: completion.merchantRef } : {}),
    });
  }

  private snapshot(): PosPreAuthState {
    const { state } = this;
    return {
      ...state,
      steps: [...state.steps],
      ...(state.completion ? { completion: { ...state.completion, steps: [...state.completion.steps] } } : {}),
    };
  }

  private finish(
    status: PosPreAuthResult['status'],
    action: string,
    extra: Partial<PosPreAuthResult> = {},
  ): PosPreAuthResult {
    this.setStatus(status);
    return { ...this.snapshot(), ...extra, status, action };
  }

  private setStatus(status: PosPreAuthState['status']): void {
    this.state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  }
}
