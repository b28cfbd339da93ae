// POS terminal transaction (F3 initiate, F4 requery by merchant_ref).
//
// Every field rule is checked first; nothing is sent for an input that breaks one.
// F3 is sent by an activity that never retries by itself. Each outcome has one next step:
//
//   F3 answered 00                         → approved
//   F3 answered 51, 55 (or another code)   → declined, with the action to show
//   F3 answered 91 or 96                   → requery (F4)
//   F3 timed out / connection lost / 5xx   → requery (F4), after a short settle delay
//   F3 refused (400, 401/403, 404 terminal) → rejected: nothing happened
//   F4 found the transaction               → that is the outcome (never sent again)
//   F4 404                                 → the service never received it: a retry with the
//                                            same merchant_ref, bounded, with backoff
//   F4 cannot answer (its retries ran out) → outcome_unknown: never sent again
//   a RETRY refused (400 duplicate...)     → F4 once more: found → that outcome; else rejected
//
// "Never retry without requerying first" is structural: the only way to send F3 is
// `send(permit)`, and the only permits are the first one (used once) and the one minted from
// an F4 404 for the attempt just made (`retryPermitFrom`). test/pos checks the ordering.
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
  ActivityFailure,
  ApplicationFailure,
  TimeoutFailure,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { PosActivities } from '../activities/pos';
import {
  FailureTypes,
  POS_SEALED_FIELDS,
  PosSealedTransactionInputSchema,
  PosTransactionInputSchema,
  classifyPosCode,
  activityFailureMessage,
  activityFailureType,
  describeIssues,
  durationMs,
  issuesOf,
  maskedPan,
  posTransactionStateQuery,
  unsealedCardFields,
  type FieldIssue,
  type PosInitiateRequest,
  type PosSealedInitiateRequest,
  type PosSealedTransactionInput,
  type PosTransactionParsedInput,
  type PosRequeryOutcome,
  type PosStep,
  type PosTransactionInput,
  type PosTransactionRecord,
  type PosTransactionResult,
  type PosTransactionState,
} from '../shared/pos';
import { SECRET_UNAVAILABLE } from '../shared/claim-check';
import { paymentSearchAttributes } from '../shared/search-attributes';

/** Flows started after the claim check take only a sealed card read (see the header). */
const SEALED_CARD_PATCH = 'pos-sealed-card';

const DEFAULTS = {
  maxAttempts: 3,
  retryBackoff: '2s',
  requerySettleDelay: '3s',
  initiateTimeoutMs: 45_000,
  requeryTimeout: '10 minutes',
} as const;

/** Permission to send F3. Only two kinds exist; see the header comment. */
type InitiatePermit =
  | { readonly kind: 'first' }
  | { readonly kind: 'after-not-found'; readonly requeriedAttempt: number };

type Sent =
  | { kind: 'response'; transaction: PosTransactionRecord }
  | { kind: 'unknown'; detail: string }
  | { kind: 'rejected'; detail: string }
  /** The sealed card read did not open: this F3 was not sent. */
  | { kind: 'not_sent'; detail: string };

type Requeried =
  | { kind: 'found'; transaction: PosTransactionRecord }
  | { kind: 'not_found'; attempt: number }
  | { kind: 'error'; detail: string };

export async function posTerminalTransactionWorkflow(raw: PosSealedTransactionInput | PosTransactionInput): Promise<PosTransactionResult> {
  // ---- 1. every field rule, before anything is sent ----
  const sealedCard = patched(SEALED_CARD_PATCH);
  const invalid = (issues: FieldIssue[]) =>
    ApplicationFailure.create({ type: 'InvalidInput', message: `invalid POS transaction: ${describeIssues(issues)}`, nonRetryable: true, details: [issues] });
  let req: PosSealedInitiateRequest | PosInitiateRequest;
  let options: NonNullable<PosTransactionParsedInput['options']>;
  if (sealedCard) {
    // Card-read fields are refused by name (never by value); the rest is checked as usual.
    const rest = Object.fromEntries(Object.entries(raw ?? {}).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)));
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
  const maxAttempts = options.maxAttempts ?? DEFAULTS.maxAttempts;
  const initiateTimeoutMs = options.initiateTimeoutMs ?? DEFAULTS.initiateTimeoutMs;

  const { posTerminalInitiateTransaction } = proxyActivities<PosActivities>({
    startToCloseTimeout: initiateTimeoutMs + 15_000,
    retry: { maximumAttempts: 1 }, // never retried by Temporal: the workflow requeries first
  });
  const { posDiscardSealedCard } = proxyActivities<PosActivities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 3 } });
  const { posTerminalRequeryTransaction } = proxyActivities<PosActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: durationMs(options.requeryTimeout ?? DEFAULTS.requeryTimeout),
    // F4 is read-only: retried until it answers (found or 404) or the requery timeout ends.
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', nonRetryableErrorTypes: [FailureTypes.Unauthorized, FailureTypes.InvalidRequest, FailureTypes.BadRequest] },
  });

  const state: PosTransactionState = { merchantRef: req.merchant_ref, status: 'validating', attempt: 0, steps: [], ...('card' in req ? { card: { maskedPan: maskedPan(req.card) } } : {}) };
  /** The F3 activity kept the sealed card read for a resend (lost answer, 91/96): discarded when the flow ends. */
  let cardKept = false;
  setHandler(posTransactionStateQuery, () => ({ ...state, steps: [...state.steps] }));
  const setStatus = (status: PosTransactionState['status']) => {
    state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const record = (step: PosStep) => state.steps.push(step);
  upsertSearchAttributes(
    paymentSearchAttributes({ flow: 'pos-terminal', reference: req.merchant_ref, status: 'validating', amount: Number(req.amount), currency: req.currency }),
  );

  // ---- the only path to F3 ----
  let firstPermitUsed = false;
  async function send(permit: InitiatePermit): Promise<Sent> {
    if (permit.kind === 'first') {
      if (firstPermitUsed) throw ApplicationFailure.nonRetryable('the first-attempt permit was used twice', 'PermitViolation');
      firstPermitUsed = true;
    } else if (permit.requeriedAttempt !== state.attempt) {
      throw ApplicationFailure.nonRetryable('a retry permit must come from the requery of the attempt just made', 'PermitViolation');
    }
    state.attempt += 1;
    setStatus('initiating');
    try {
      const res = await posTerminalInitiateTransaction(req, { attempt: state.attempt, timeoutMs: initiateTimeoutMs });
      record({ op: 'initiate', attempt: state.attempt, outcome: 'response', response_code: res.transaction.response_code });
      cardKept = classifyPosCode(res.transaction.response_code, res.transaction.response_message).outcome === 'unknown';
      return { kind: 'response', transaction: res.transaction };
    } catch (err) {
      const type = activityFailureType(err);
      const detail = activityFailureMessage(err);
      if (type === SECRET_UNAVAILABLE) {
        // Nothing was sent: this attempt does not count.
        state.attempt -= 1;
        return { kind: 'not_sent', detail };
      }
      cardKept = type !== FailureTypes.BadRequest && type !== FailureTypes.Unauthorized && type !== FailureTypes.InvalidRequest && type !== FailureTypes.NotFound;
      if (type === FailureTypes.BadRequest || type === FailureTypes.Unauthorized || type === FailureTypes.InvalidRequest || type === FailureTypes.NotFound) {
        record({ op: 'initiate', attempt: state.attempt, outcome: 'rejected', detail: type });
        return { kind: 'rejected', detail };
      }
      // OutcomeUnknown (timeout, lost connection, 5xx, unreadable answer), an activity timeout,
      // a lost worker, anything else: it may have reached the service.
      record({ op: 'initiate', attempt: state.attempt, outcome: 'unknown', detail: type ?? (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure ? 'ActivityTimeout' : 'Unknown') });
      return { kind: 'unknown', detail };
    }
  }

  async function requery(): Promise<Requeried> {
    setStatus('requerying');
    let out: PosRequeryOutcome;
    try {
      out = await posTerminalRequeryTransaction({ merchant_ref: req.merchant_ref });
    } catch (err) {
      record({ op: 'requery', attempt: state.attempt, outcome: 'error', detail: activityFailureType(err) ?? 'Unknown' });
      return { kind: 'error', detail: activityFailureMessage(err) };
    }
    if (out.found) {
      record({ op: 'requery', attempt: state.attempt, outcome: 'found', response_code: out.transaction.response_code });
      return { kind: 'found', transaction: out.transaction };
    }
    record({ op: 'requery', attempt: state.attempt, outcome: 'not_found' });
    return { kind: 'not_found', attempt: state.attempt };
  }

  /** The only way to obtain a retry permit: a 404 requery of the attempt just made. */
  function retryPermitFrom(proof: Extract<Requeried, { kind: 'not_found' }>): InitiatePermit {
    return { kind: 'after-not-found', requeriedAttempt: proof.attempt };
  }

  const finish = (status: PosTransactionResult['status'], action: string, transaction?: PosTransactionRecord): PosTransactionResult => {
    setStatus(status);
    return { ...state, steps: [...state.steps], status, action, ...(transaction ? { transaction, responseCode: transaction.response_code } : {}) };
  };
  const fromTransaction = (t: PosTransactionRecord, confirmedByRequery: boolean): PosTransactionResult => {
    const c = classifyPosCode(t.response_code, t.response_message);
    if (c.outcome === 'approved') return finish('approved', c.action, t);
    if (c.outcome === 'declined') return finish('declined', c.action, t);
    // 91/96 confirmed by F4: the service has it and it did not go through. Never sent again.
    return finish('declined', confirmedByRequery ? `${c.action}: the service received the transaction (confirmed by requery); try again later as a new sale` : c.action, t);
  };

  // ---- 2. the flow ----
  const result = await decide();
  if (cardKept && 'card' in req) {
    try {
      await posDiscardSealedCard(req.card.handle);
    } catch (err) {
      log.warn('sealed card read not discarded; its TTL ends it', { error: activityFailureMessage(err) });
    }
  }
  return result;

  async function decide(): Promise<PosTransactionResult> {
    let permit: InitiatePermit = { kind: 'first' };
    for (;;) {
      const sent = await send(permit);
      if (sent.kind === 'not_sent') {
        return finish(
          'card_data_unavailable',
          state.attempt === 0
            ? 'The sealed card data expired before the transaction was sent: nothing was sent and nothing was charged. Start again with a fresh card read and a new merchant_ref.'
            : `The sealed card data expired before the retry could be sent; the service never received attempt ${state.attempt} (F4 404): nothing was charged. Start again with a fresh card read and a new merchant_ref.`,
        );
      }
      if (sent.kind === 'rejected') {
        if (state.attempt === 1) return finish('rejected', `Refused by the service, nothing was charged: ${sent.detail}`);
        // A retry refused (e.g. 'Duplicate merchant_ref'): the first attempt may have landed after
        // all. Look once more; never send again from here.
        const again = await requery();
        if (again.kind === 'found') return fromTransaction(again.transaction, true);
        if (again.kind === 'error') return finish('outcome_unknown', `A retry was refused (${sent.detail}) and the requery could not be answered; the transaction is NOT sent again. Reconcile by merchant_ref ${req.merchant_ref}.`);
        return finish('rejected', `Refused by the service, nothing was charged: ${sent.detail}`);
      }
      if (sent.kind === 'response') {
        const c = classifyPosCode(sent.transaction.response_code, sent.transaction.response_message);
        if (c.outcome !== 'unknown') return fromTransaction(sent.transaction, false);
        // 91 or 96: outcome unknown until verified.
      } else {
        // No answer: let an in-flight request land before asking for it.
        await sleep(durationMs(options.requerySettleDelay ?? DEFAULTS.requerySettleDelay));
      }

      const rq = await requery();
      if (rq.kind === 'found') return fromTransaction(rq.transaction, true);
      if (rq.kind === 'error') {
        return finish('outcome_unknown', `The requery by merchant_ref could not be answered (${rq.detail}); the transaction is NOT sent again. Reconcile by merchant_ref ${req.merchant_ref}.`);
      }
      // 404: the service never received attempt N.
      if (state.attempt >= maxAttempts) {
        return finish('not_received', `The service never received the transaction (F4 404 after ${state.attempt} attempt(s)); nothing was charged. Start again with a fresh card read.`);
      }
      setStatus('retry_wait');
      await sleep(backoff(options.retryBackoff ?? DEFAULTS.retryBackoff, state.attempt));
      permit = retryPermitFrom(rq);
    }
  }
}

function backoff(base: string | number, attempt: number): number {
  const ms = typeof base === 'number' ? base : durationMs(base);
  return ms * 2 ** (attempt - 1);
}
