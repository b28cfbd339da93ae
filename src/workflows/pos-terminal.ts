// POS terminal transaction: the sale (the transaction send (F3) as initiate, the requery (F4) by merchant_ref).
//
// Every field rule is checked first; nothing is sent for an input that breaks one.
// The sale is sent through the one send-once rule (./steps/send-once.ts) by the terminal send
// (./steps/pos-terminal-send.ts): send = the transaction send (an activity that never retries by itself,
// heartbeating while its call is open), requery = the requery by merchant_ref. What this flow keeps:
//
//   send answered 00                         → approved
//   send answered 51, 55 (or another code)   → declined, with the action to show
//   send answered 91 or 96 (or no code)      → not an answer: requeried at once, like a lost one
//   send timed out / connection lost / 5xx   → requery, after a short settle delay
//   send refused (400, 401/403, 404 terminal) → rejected: nothing happened
//   requery found the transaction            → that is the outcome (never sent again)
//   requery 404                              → the service never received it: a resend with the
//                                              same merchant_ref, bounded (maxAttempts), after a
//                                              doubling backoff and, if the last send was lost by its
//                                              heartbeat timeout, after its HTTP call can no longer
//                                              be in flight
//   requery cannot answer (retries ran out)  → outcome_unknown, parked: never sent again, the requery
//                                              asked on a backoff for `unknownRequeryFor` (24 h), the
//                                              operator Update resolveOutcome (src/shared/outcome.ts:
//                                              approved | declined | not_received) ends it
//   a RETRY refused (400 duplicate...)       → the requery decides (send-once)
//   cancelled after the send may have left   → a non-cancellable cleanup asks the requery and records
//                                              what it says (cancelRequested); never "cancelled"
//
// The card read (PAN, expiry, cardholder name, card sequence number, track2, chip data, PIN
// block) never reaches the workflow: the starter sealed it into the claim-check store and the
// input carries its handle plus BIN and last four. The transaction send activity redeems the handle; the record
// is deleted once the service answered with an outcome, and kept while a resend may still be
// proved safe (a lost answer, 91/96), then discarded when the flow ends (its TTL ends it anyway).
// A card read that no longer opens (expired before the transaction send was sent) ends the flow as
// card_data_unavailable: nothing was sent, nothing charged; start again with a fresh card read.
import { setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import {
  PosSealedTransactionInputSchema,
  maskedPan,
  posTransactionStartSearch,
  posTransactionStateQuery,
  unsealedCardFields,
  type PosSealedInitiateRequest,
  type PosSealedTransactionInput,
  type PosTransactionOptions,
  type PosTransactionResult,
  type PosTransactionState,
} from '../shared/pos-terminal';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { parseSealedPosInput } from './steps/pos-input';
import {
  PosTransactionSend,
  listenForResolveOutcome,
  type PosTransactionOutcome,
  type PosTransactionWording,
  type ResolutionSlot,
} from './steps/pos-terminal-send';
import { MerchantEvents, posTransactionEventTypes } from './steps/merchant-events';
import { stateCopy } from './steps/state-copy';

/** A sale's merchant events (docs/events.md). */
const SALE_EVENT_TYPES = posTransactionEventTypes('sale');

/** How the sale words its outcomes (the other terminal flows: linkedWording). */
const SALE_WORDING: PosTransactionWording = {
  approved: (action) => action,
  receivedNotThrough: (action) =>
    `${action}: the service received the transaction (confirmed by requery); try again later as a new sale`,
  notReceived: (how) =>
    `The service never received the transaction (${how}); nothing was charged. Start again with a fresh card read.`,
  cardGone: (attempt) =>
    attempt === 0
      ? 'The sealed card data expired before the transaction was sent: nothing was sent and nothing was charged. Start again with a fresh card read and a new merchant_ref.'
      : `The sealed card data expired before the retry could be sent; the service never received attempt ${attempt} (the requery answered 404): nothing was charged. Start again with a fresh card read and a new merchant_ref.`,
  refused: (message) => `Refused by the service, nothing was charged: ${message}`,
  cancelNote: 'cancel requested after the transaction may have been sent',
  notSentAgain: 'the transaction',
};

export async function posTerminalTransactionWorkflow(raw: PosSealedTransactionInput): Promise<PosTransactionResult> {
  const flow = new PosTerminalTransactionFlow(raw);
  flow.listen();
  return flow.run();
}

/** One sale. */
class PosTerminalTransactionFlow {
  // --- state ---

  private readonly req: PosSealedInitiateRequest;
  private readonly options: PosTransactionOptions;
  private readonly state: PosTransactionState;
  /** The operator's resolveOutcome while the sale is parked. */
  private readonly resolution: ResolutionSlot = {};
  /** Where the sale's outcome is told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;

  constructor(raw: PosSealedTransactionInput) {
    // Every field rule, before anything is sent; card-read fields refused by name.
    const parsed = parseSealedPosInput(
      PosSealedTransactionInputSchema,
      raw,
      unsealedCardFields(raw),
      'POS transaction',
    );
    // `notify` is the flow's, never part of the body of the transaction send (F3).
    const { options = {}, notify, ...req } = parsed;
    this.req = req;
    this.options = options;
    this.events = new MerchantEvents(notify, 'pos-sale', req.merchant_ref);
    this.state = {
      merchantRef: req.merchant_ref,
      status: 'validating',
      attempt: 0,
      steps: [],
      card: { maskedPan: maskedPan(req.card) },
    };
  }

  // --- handlers ---

  listen(): void {
    setHandler(posTransactionStateQuery, () => stateCopy(this.state));
    listenForResolveOutcome(() => this.resolution, this.state);
  }

  // --- the main steps ---

  /**
   * The transaction send (F3) through send-once (the requery (F4) as its requery), the result, then the kept card read
   * discarded.
   */
  async run(): Promise<PosTransactionResult> {
    const { req } = this;
    upsertSearchAttributes(paymentSearchAttributes(posTransactionStartSearch(req)));
    const send = new PosTransactionSend({
      wording: SALE_WORDING,
      req,
      options: this.options,
      track: this.state,
      setStatus: (status) => this.setStatus(status),
      resolution: () => this.resolution.value,
      onParked: () => this.emitOutcome('outcome_unknown'),
    });
    const result = this.finish(await send.decide());
    await this.emitOutcome(result.status, result.action);
    await send.discardKeptCard();
    return result;
  }

  /** The sale's event for `status` (one local activity with a target, nothing without). */
  private emitOutcome(status: string, reason?: string): Promise<void> {
    const { req } = this;
    return this.events.emitFor(SALE_EVENT_TYPES, {
      status,
      reason,
      amount: Number(req.amount),
      currency: req.currency,
    });
  }

  // --- helpers ---

  private finish(out: PosTransactionOutcome): PosTransactionResult {
    if (out.resolution) this.state.resolution = out.resolution;
    this.setStatus(out.status);
    return {
      ...stateCopy(this.state),
      status: out.status,
      action: out.action,
      ...(out.transaction ? { transaction: out.transaction, responseCode: out.transaction.response_code } : {}),
      ...(out.cancelRequested ? { cancelRequested: true } : {}),
    };
  }

  private setStatus(status: PosTransactionState['status']): void {
    this.state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  }
}
