// POS terminal pre-authorisation, then its completion (F3 Pre-Authorization, then F3 Completion
// tied to it by original_merchant_ref; F4 requery by merchant_ref for each).
//
//   validate (zod; card-read fields refused by name)
//   F3 Pre-Authorization through send-once (./pos-f3.ts)
//       declined | rejected | not_received | card_data_unavailable → final (nothing held)
//       unknown → parked outcome_unknown (F4 on a backoff; resolveOutcome)
//   approved → held: a durable timer runs to the end of the hold window (heldSince + holdWindow,
//       heldSince = the first pre-authorisation send), while the flow waits for
//       completePreAuth (Update: amount ≤ held, a fresh read of the same card) → completing
//       releasePreAuth (Update)                                               → released
//       the window ends                                                       → lapsed
//   completing: F3 Completion through send-once, merchant_ref CP<digest of the pre-auth's>
//       approved → completed (money moved); declined / rejected / not_received → completion_*
//       card data gone before it was received → held again (nothing reached the service)
//
// A second completePreAuth is refused by the Update's validator (the flow is no longer held);
// the Completion is sent once, and again only after F4 proved the earlier attempt never arrived.
// A lapse or a release sends nothing: the spec has no call to release a hold, so the funds stay
// held at the issuer until its own hold expires. No money moves beyond the hold.
import {
  ApplicationFailure,
  condition,
  isCancellation,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { POS_RESOLVE_OUTCOMES, POS_SEALED_FIELDS, maskedPan, type PosResolveOutcome } from '../shared/pos';
import {
  DEFAULT_HOLD_WINDOW,
  PosCompleteInputSchema,
  PosSealedPreAuthInputSchema,
  completePreAuthUpdate,
  completionMerchantRef,
  holdWindowMs,
  posPreAuthStateQuery,
  releasePreAuthUpdate,
  type PosCompletionState,
  type PosPreAuthResult,
  type PosPreAuthState,
  type PosSealedPreAuthInput,
} from '../shared/pos-preauth';
import { unsealedFieldsIn } from '../shared/pos-refund';
import { checkResolveOutcome, resolveOutcomeUpdate, type OutcomeResolution } from '../shared/outcome';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { sendPosF3 } from './pos-f3';
import { describeIssues, issuesOf, type FieldIssue } from '../shared/failures';

export async function posPreAuthWorkflow(raw: PosSealedPreAuthInput): Promise<PosPreAuthResult> {
  // ---- 1. every field rule, before anything is sent ----
  const rest = Object.fromEntries(
    Object.entries(raw ?? {}).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)),
  );
  const parsed = PosSealedPreAuthInputSchema.safeParse(rest);
  const issues: FieldIssue[] = [
    ...unsealedFieldsIn(raw, 'startPosPreAuth'),
    ...(parsed.success ? [] : issuesOf(parsed.error)),
  ];
  if (!parsed.success || issues.length > 0) {
    throw ApplicationFailure.create({
      type: 'InvalidInput',
      message: `invalid POS pre-authorisation: ${describeIssues(issues)}`,
      nonRetryable: true,
      details: [issues],
    });
  }
  const { options = {}, ...fields } = parsed.data;
  const { holdWindow, ...f3Options } = options;
  const windowMs = holdWindowMs(holdWindow ?? DEFAULT_HOLD_WINDOW);
  const held = Number(fields.amount);
  const completionRef = completionMerchantRef(fields.merchant_ref);

  const state: PosPreAuthState = {
    merchantRef: fields.merchant_ref,
    status: 'validating',
    phase: 'preauth',
    amount: held,
    currency: fields.currency,
    attempt: 0,
    steps: [],
    card: { maskedPan: maskedPan(fields.card) },
  };
  let holdUntilMs = 0;
  /** The accepted completePreAuth, until the flow takes it. */
  let completeRequest: ReturnType<typeof PosCompleteInputSchema.parse> | undefined;
  let releaseRequest: { reason?: string } | undefined;
  const resolutions: {
    preauth?: OutcomeResolution<PosResolveOutcome>;
    completion?: OutcomeResolution<PosResolveOutcome>;
  } = {};

  const snapshot = (): PosPreAuthState => ({
    ...state,
    steps: [...state.steps],
    ...(state.completion ? { completion: { ...state.completion, steps: [...state.completion.steps] } } : {}),
  });
  setHandler(posPreAuthStateQuery, snapshot);
  setHandler(
    resolveOutcomeUpdate,
    (r) => {
      const resolution = {
        outcome: r.outcome as PosResolveOutcome,
        reason: r.reason.trim(),
        operator: r.operator.trim(),
        resolvedAt: new Date(Date.now()).toISOString(),
      };
      resolutions[state.phase] ??= resolution;
      return resolutions[state.phase]!;
    },
    {
      validator: (r) =>
        checkResolveOutcome(
          r,
          POS_RESOLVE_OUTCOMES,
          state.status === 'outcome_unknown' && resolutions[state.phase] === undefined,
        ),
    },
  );
  setHandler(
    completePreAuthUpdate,
    (input) => {
      completeRequest = PosCompleteInputSchema.parse(input);
      return {
        completionMerchantRef: completionRef,
        amount: Number(completeRequest.amount),
        acceptedAt: new Date(Date.now()).toISOString(),
      };
    },
    {
      validator: (input) => {
        if (state.status !== 'held' || completeRequest !== undefined) {
          const why =
            state.completion && state.completion.status !== 'card_data_unavailable'
              ? `the pre-authorisation ${state.merchantRef} is already being completed or was completed (completion ${state.completion.merchantRef}: ${state.completion.status}); a completion is sent once`
              : `the pre-authorisation ${state.merchantRef} is ${state.status}, not held`;
          throw new Error(`completePreAuth refused: ${why}`);
        }
        if (Date.now() >= holdUntilMs)
          throw new Error(`completePreAuth refused: the hold window ended at ${new Date(holdUntilMs).toISOString()}`);
        const p = PosCompleteInputSchema.safeParse(input);
        if (!p.success) throw new Error(`completePreAuth refused: ${describeIssues(issuesOf(p.error))}`);
        const amount = Number(p.data.amount);
        if (amount > held) throw new Error(`completePreAuth refused: amount ${amount} is more than the ${held} held`);
        if (p.data.card.bin !== fields.card.bin || p.data.card.last4 !== fields.card.last4) {
          throw new Error(
            `completePreAuth refused: the card presented (${maskedPan(p.data.card)}) is not the pre-authorised card (${maskedPan(fields.card)})`,
          );
        }
      },
    },
  );
  setHandler(
    releasePreAuthUpdate,
    (input) => {
      releaseRequest = { ...(input?.reason ? { reason: String(input.reason).slice(0, 500) } : {}) };
      return { releasedAt: new Date(Date.now()).toISOString() };
    },
    {
      validator: (_input: { reason?: string }) => {
        if (state.status !== 'held' || completeRequest !== undefined)
          throw new Error(
            `releasePreAuth refused: the pre-authorisation ${state.merchantRef} is ${state.status}, not held`,
          );
      },
    },
  );

  const setStatus = (status: PosPreAuthState['status']) => {
    state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const finish = (
    status: PosPreAuthResult['status'],
    action: string,
    extra: Partial<PosPreAuthResult> = {},
  ): PosPreAuthResult => {
    setStatus(status);
    return { ...snapshot(), ...extra, status, action };
  };
  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'pos-preauth',
      reference: fields.merchant_ref,
      status: 'validating',
      amount: held,
      currency: fields.currency,
    }),
  );

  // ---- 2. F3 Pre-Authorization ----
  const heldSince = Date.now();
  state.heldSince = new Date(heldSince).toISOString();
  holdUntilMs = heldSince + windowMs;
  state.holdUntil = new Date(holdUntilMs).toISOString();
  const pre = await sendPosF3({
    what: 'pre-authorisation',
    req: { ...fields, transaction_type: 'Pre-Authorization' },
    options: f3Options,
    track: state,
    setStatus,
    resolution: () => resolutions.preauth,
  });
  if (pre.resolution) state.resolution = pre.resolution;
  if (pre.transaction) state.transaction = pre.transaction;
  if (pre.status !== 'approved')
    return finish(pre.status, pre.action, pre.cancelRequested ? { cancelRequested: true } : {});

  // ---- 3. held until completed, released or lapsed ----
  for (;;) {
    setStatus('held');
    let woke: boolean;
    try {
      woke =
        Date.now() < holdUntilMs &&
        (await condition(
          () => completeRequest !== undefined || releaseRequest !== undefined,
          holdUntilMs - Date.now(),
        ));
    } catch (err) {
      if (!isCancellation(err)) throw err;
      return finish(
        'released',
        'Cancelled while held: no completion was sent, nothing moved beyond the hold (it lapses at the issuer)',
        { cancelRequested: true },
      );
    }
    if (!woke) {
      return finish(
        'lapsed',
        `The hold window ended (${state.holdUntil}) without a completion: nothing moved beyond the hold, which lapses at the issuer`,
      );
    }
    if (releaseRequest !== undefined) {
      if (releaseRequest.reason) state.releaseReason = releaseRequest.reason;
      return finish(
        'released',
        `Released by the merchant${releaseRequest.reason ? ` (${releaseRequest.reason})` : ''}: no completion will be sent; the hold lapses at the issuer`,
      );
    }

    // ---- 4. F3 Completion, once ----
    const request = completeRequest!;
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
    setStatus('completing');
    // Sent once (send-once runs non-cancellable); a cancel while its outcome is parked asks F4 once more and records it.
    const out = await sendPosF3({
      what: 'completion',
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
      options: f3Options,
      track: completion,
      setStatus: (s) => {
        completion.status = s;
        setStatus(s === 'outcome_unknown' ? 'outcome_unknown' : 'completing');
      },
      resolution: () => resolutions.completion,
    });
    completion.status = out.status;
    completion.action = out.action;
    if (out.transaction) completion.transaction = out.transaction;
    if (out.resolution) completion.resolution = out.resolution;
    switch (out.status) {
      case 'approved':
        return finish(
          'completed',
          `Completed: ${completion.amount} of the ${held} held was captured (completion ${completionRef})`,
        );
      case 'declined':
        return finish(
          'completion_declined',
          `${out.action}; nothing moved beyond the hold, which lapses at the issuer`,
        );
      case 'rejected':
        return finish('completion_rejected', `${out.action}; the hold lapses at the issuer`);
      case 'not_received':
        return finish('completion_not_received', `${out.action} The hold lapses at the issuer.`);
      case 'outcome_unknown':
        return finish('outcome_unknown', out.action, out.cancelRequested ? { cancelRequested: true } : {});
      case 'card_data_unavailable':
        // Nothing reached the service: the pre-authorisation is still held; a new completePreAuth (fresh card read) may come.
        state.completionsNotSent = (state.completionsNotSent ?? 0) + 1;
        completeRequest = undefined;
        continue;
    }
  }
}
