// POS terminal transaction (F3 initiate, F4 requery by merchant_ref).
//
// Every field rule is checked first; nothing is sent for an input that breaks one.
// F3 is sent through the one send-once rule (./send-once.ts): send = F3 (an activity that never
// retries by itself, heartbeating while its call is open), requery = F4 by merchant_ref. What
// this flow keeps:
//
//   F3 answered 00                         → approved
//   F3 answered 51, 55 (or another code)   → declined, with the action to show
//   F3 answered 91 or 96 (or no code)      → not an answer: requeried (F4) at once, like a lost one
//   F3 timed out / connection lost / 5xx   → requery (F4), after a short settle delay
//   F3 refused (400, 401/403, 404 terminal) → rejected: nothing happened
//   F4 found the transaction               → that is the outcome (never sent again)
//   F4 404                                 → the service never received it: a resend with the
//                                            same merchant_ref, bounded (maxAttempts), after a
//                                            doubling backoff and, if the last F3 was lost by its
//                                            heartbeat timeout, after its HTTP call can no longer
//                                            be in flight
//   F4 cannot answer (its retries ran out) → outcome_unknown, parked: never sent again, F4 asked
//                                            on a backoff for `unknownRequeryFor` (24 h), the
//                                            operator Update resolveOutcome (src/shared/outcome.ts:
//                                            approved | declined | not_received) ends it
//   a RETRY refused (400 duplicate...)     → F4 decides (send-once)
//   cancelled after F3 may have been sent  → a non-cancellable cleanup asks F4 and records what
//                                            it says (cancelRequested); never "cancelled"
//
// The card read (PAN, expiry, cardholder name, card sequence number, track2, chip data, PIN
// block) never reaches the workflow: the starter sealed it into the claim-check store and the
// input carries its handle plus BIN and last four. The F3 activity redeems the handle; the record
// is deleted once the service answered with an outcome, and kept while a resend may still be
// proved safe (a lost answer, 91/96), then discarded when the flow ends (its TTL ends it anyway).
// A card read that no longer opens (expired before F3 was sent) ends the flow as
// card_data_unavailable: nothing was sent, nothing charged; start again with a fresh card read.
// Flows started before the claim check (no patch marker) replay with their in-clear input.
import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import {
  POS_RESOLVE_OUTCOMES,
  POS_SEALED_FIELDS,
  PosSealedTransactionInputSchema,
  PosTransactionInputSchema,
  classifyPosCode,
  maskedPan,
  posTransactionStateQuery,
  unsealedCardFields,
  type PosInitiateRequest,
  type PosSealedInitiateRequest,
  type PosSealedTransactionInput,
  type PosTransactionParsedInput,
  type PosResolveOutcome,
  type PosTransactionInput,
  type PosTransactionRecord,
  type PosTransactionResult,
  type PosTransactionState,
} from '../shared/pos';
import { checkResolveOutcome, resolveOutcomeUpdate, type OutcomeResolution } from '../shared/outcome';
import { paymentSearchAttributes } from '../shared/search-attributes';
import type { Presence } from './steps/send-once';
import { posF3Steps } from './steps/pos-f3-steps';
import { describeIssues, issuesOf, type FieldIssue } from '../shared/failures';

/** Flows started after the claim check take only a sealed card read (see the header). */
const SEALED_CARD_PATCH = 'pos-sealed-card';

export async function posTerminalTransactionWorkflow(
  raw: PosSealedTransactionInput | PosTransactionInput,
): Promise<PosTransactionResult> {
  // ---- 1. every field rule, before anything is sent ----
  const sealedCard = patched(SEALED_CARD_PATCH);
  const invalid = (issues: FieldIssue[]) =>
    ApplicationFailure.create({
      type: 'InvalidInput',
      message: `invalid POS transaction: ${describeIssues(issues)}`,
      nonRetryable: true,
      details: [issues],
    });
  let req: PosSealedInitiateRequest | PosInitiateRequest;
  let options: NonNullable<PosTransactionParsedInput['options']>;
  if (sealedCard) {
    // Card-read fields are refused by name (never by value); the rest is checked as usual.
    const rest = Object.fromEntries(
      Object.entries(raw ?? {}).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)),
    );
    const parsed = PosSealedTransactionInputSchema.safeParse(rest);
    const issues = [...unsealedCardFields(raw), ...(parsed.success ? [] : issuesOf(parsed.error))];
    if (!parsed.success || issues.length > 0) throw invalid(issues);
    ({ options = {}, ...req } = parsed.data);
  } else {
    // A flow started before the claim check: its input holds the card read (encrypted by the codec).
    const parsed = PosTransactionInputSchema.safeParse(raw);
    if (!parsed.success) throw invalid(issuesOf(parsed.error));
    ({ options = {}, ...req } = parsed.data);
  }

  const state: PosTransactionState = {
    merchantRef: req.merchant_ref,
    status: 'validating',
    attempt: 0,
    steps: [],
    ...('card' in req ? { card: { maskedPan: maskedPan(req.card) } } : {}),
  };
  setHandler(posTransactionStateQuery, () => ({ ...state, steps: [...state.steps] }));
  let resolution: OutcomeResolution<PosResolveOutcome> | undefined;
  setHandler(
    resolveOutcomeUpdate,
    (r) => {
      resolution ??= {
        outcome: r.outcome as PosResolveOutcome,
        reason: r.reason.trim(),
        operator: r.operator.trim(),
        resolvedAt: new Date(Date.now()).toISOString(),
      };
      return resolution;
    },
    {
      validator: (r) =>
        checkResolveOutcome(r, POS_RESOLVE_OUTCOMES, state.status === 'outcome_unknown' && resolution === undefined),
    },
  );
  const setStatus = (status: PosTransactionState['status']) => {
    state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'pos-terminal',
      reference: req.merchant_ref,
      status: 'validating',
      amount: Number(req.amount),
      currency: req.currency,
    }),
  );

  // ---- F3 through send-once; F4 by merchant_ref is its requery (./pos-f3-steps.ts) ----
  const steps = posF3Steps({ req, options, track: state, setStatus, resolution: () => resolution });

  const finish = (
    status: PosTransactionResult['status'],
    action: string,
    transaction?: PosTransactionRecord,
  ): PosTransactionResult => {
    setStatus(status);
    return {
      ...state,
      steps: [...state.steps],
      status,
      action,
      ...(transaction ? { transaction, responseCode: transaction.response_code } : {}),
    };
  };
  const fromTransaction = (t: PosTransactionRecord, confirmedByRequery: boolean): PosTransactionResult => {
    const c = classifyPosCode(t.response_code, t.response_message);
    if (c.outcome === 'approved') return finish('approved', c.action, t);
    if (c.outcome === 'declined') return finish('declined', c.action, t);
    // 91/96 confirmed by F4: the service has it and it did not go through. Never sent again.
    return finish(
      'declined',
      confirmedByRequery
        ? `${c.action}: the service received the transaction (confirmed by requery); try again later as a new sale`
        : c.action,
      t,
    );
  };
  const notReceived = (how: string) =>
    finish(
      'not_received',
      `The service never received the transaction (${how}); nothing was charged. Start again with a fresh card read.`,
    );

  /** Unknown outcome: parked, F4 on a backoff, resolveOutcome accepted. */
  const park = async (why: string): Promise<PosTransactionResult> => {
    const settled = await steps.park();
    if (settled.kind === 'final') return fromTransaction(settled.record, true);
    if (settled.kind === 'absent') return notReceived(`F4 404 while the outcome was unknown: ${why}`);
    const r = settled.resolution as OutcomeResolution<PosResolveOutcome>;
    state.resolution = r;
    state.steps.push({
      op: 'resolve',
      attempt: state.attempt,
      outcome: r.outcome,
      detail: `by ${r.operator}: ${r.reason}`,
    });
    return finish(
      r.outcome,
      `Resolved by ${r.operator}: ${r.reason} (F4 could not tell the outcome of merchant_ref ${req.merchant_ref})`,
    );
  };

  // ---- 2. the flow ----
  const result = await decide();
  if (steps.cardKept() && 'card' in req) {
    const handle = req.card.handle;
    await steps.discardCard(handle);
  }
  return result;

  async function decide(): Promise<PosTransactionResult> {
    // Everything from here may follow an F3 that moved money.
    try {
      const sent = await steps.send('POS transaction (F3)');
      switch (sent.outcome) {
        case 'answered':
          if (sent.answer.kind === 'answer') return fromTransaction(sent.answer.transaction, false);
          return finish(
            'card_data_unavailable',
            state.attempt === 0
              ? 'The sealed card data expired before the transaction was sent: nothing was sent and nothing was charged. Start again with a fresh card read and a new merchant_ref.'
              : `The sealed card data expired before the retry could be sent; the service never received attempt ${state.attempt} (F4 404): nothing was charged. Start again with a fresh card read and a new merchant_ref.`,
          );
        case 'refused':
          return finish('rejected', `Refused by the service, nothing was charged: ${sent.failure.message}`);
        case 'found':
          return fromTransaction(sent.record, true);
        case 'never-received':
          return steps.lastSendRefused()
            ? finish('rejected', `Refused by the service, nothing was charged: ${sent.lost}`)
            : notReceived(`F4 404 after ${state.attempt} attempt(s)`);
        case 'unverified':
          return await park(sent.lost);
      }
    } catch (err) {
      if (!isCancellation(err)) throw err;
      // Cancelled while a sale may have moved money: ask F4, record what it says.
      return await CancellationScope.nonCancellable(async () => {
        let found: Presence<PosTransactionRecord> | undefined;
        try {
          found = await steps.requery();
        } catch {
          found = undefined;
        }
        const note = 'cancel requested after F3 may have been sent';
        let out: PosTransactionResult;
        if (found?.found) out = fromTransaction(found.record, true);
        else if (found && steps.inFlightOver()) out = notReceived(`${note}; F4 404`);
        else
          out = finish(
            'outcome_unknown',
            `${note}: F4 could not tell; the transaction is NOT sent again. Reconcile by merchant_ref ${req.merchant_ref}.`,
          );
        return {
          ...out,
          action: found?.found ? `${out.action} (${note}; confirmed by F4)` : out.action,
          cancelRequested: true,
        };
      });
    }
  }
}
