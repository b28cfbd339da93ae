// POS terminal refund of one approved sale (the transaction send (F3) with transaction_type Refund, tied to the sale by
// original_merchant_ref; the requery (F4) by merchant_ref).
//
//   validate (zod; card-read fields refused by name)
//   requery of the original ── 404 → refused original_not_found; declined → original_not_approved;
//                  not a Purchase/Completion → original_not_refundable; other currency or card
//                  (BIN/last four) → currency_mismatch / card_mismatch; requery unanswerable → unverified
//   requery of our own merchant_ref ── found → that record is the outcome (the same request, already sent)
//   reserve in the sale's refund ledger ── over what is left → refused over_remaining
//   send the Refund through send-once (./steps/pos-terminal-send.ts): approved | declined | rejected |
//                  not_received | card_data_unavailable | outcome_unknown (parked, resolveOutcome)
//   settle the ledger: approved keeps the amount, no money moved releases it, unknown holds it
//
// Nothing is sent before the original was checked and the amount reserved. The refund's own
// merchant_ref is derived from the caller's refund request id (RF<digest>), so the same request
// is the same refund at the service, whatever Temporal still retains.
import {
  CancellationScope,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { PosRefundActivities } from '../activities/pos-refund';
import {
  classifyPosCode,
  maskedPan,
  posTransactionStartSearch,
  type PosTransactionOptions,
  type PosTransactionRecord,
} from '../shared/pos-terminal';
import {
  PosSealedRefundInputSchema,
  REFUND_LEDGER_CLOSED,
  REFUND_OVER_REMAINING,
  posRefundLedgerWorkflowId,
  posRefundStateQuery,
  refundMerchantRef,
  settleRefundSignal,
  unsealedFieldsIn,
  type PosRefundRefusal,
  type PosRefundResult,
  type PosRefundState,
  type PosSealedRefundInput,
} from '../shared/pos-refund';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { FailureTypes, failureMessage, failureOf } from '../shared/failures';
import { ledgerUpdate } from './steps/activity-options';
import { parseSealedPosInput } from './steps/pos-input';
import {
  linkedWording,
  listenForResolveOutcome,
  posTransactionLookup,
  sendPosTransaction,
  type ResolutionSlot,
} from './steps/pos-terminal-send';
import { MerchantEvents, posTransactionEventTypes } from './steps/merchant-events';
import { stateCopy } from './steps/state-copy';

/** Transaction types a refund may return money from. */
const REFUNDABLE = ['Purchase', 'Completion'];

/** An Update of the ledger workflow: a ledger that cannot be asked refuses the refund (unverified). */
const { posRefundReserve } = proxyActivities<PosRefundActivities>(
  ledgerUpdate([REFUND_OVER_REMAINING, REFUND_LEDGER_CLOSED]),
);

export async function posRefundWorkflow(raw: PosSealedRefundInput): Promise<PosRefundResult> {
  const flow = new PosRefundFlow(raw);
  flow.listen();
  return flow.run();
}

type Fields = Omit<ReturnType<typeof PosSealedRefundInputSchema.parse>, 'options' | 'refund_request_id' | 'notify'>;

/** A refund's merchant events (docs/events.md): refused before anything was sent is a failure too. */
const REFUND_EVENT_TYPES = posTransactionEventTypes('refund', { refused: 'pos.refund.failed' });

/** One refund request. */
class PosRefundFlow {
  // --- state ---

  private readonly fields: Fields;
  private readonly options: PosTransactionOptions;
  private readonly merchantRef: string;
  private readonly amount: number;
  private readonly ledgerId: string;
  private readonly state: PosRefundState;
  /** The operator's resolveOutcome while the refund is parked. */
  private readonly resolution: ResolutionSlot = {};
  private readonly lookup: ReturnType<typeof posTransactionLookup>;
  /** Where the refund's outcome is told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;

  constructor(raw: PosSealedRefundInput) {
    // Every field rule, before anything is sent; card-read fields refused by name.
    const parsed = parseSealedPosInput(
      PosSealedRefundInputSchema,
      raw,
      unsealedFieldsIn(raw, 'startPosRefund'),
      'POS refund',
    );
    // `notify` is the flow's, never part of the body of the transaction send (F3).
    const { options = {}, refund_request_id, notify, ...fields } = parsed;
    this.fields = fields;
    this.options = options;
    this.merchantRef = refundMerchantRef(refund_request_id);
    this.events = new MerchantEvents(notify, 'pos-refund', this.merchantRef);
    this.amount = Number(fields.amount);
    this.ledgerId = posRefundLedgerWorkflowId(fields.original_merchant_ref);
    this.state = {
      refundRequestId: refund_request_id,
      merchantRef: this.merchantRef,
      originalMerchantRef: fields.original_merchant_ref,
      amount: this.amount,
      currency: fields.currency,
      status: 'validating',
      attempt: 0,
      steps: [],
      card: { maskedPan: maskedPan(fields.card) },
    };
    this.lookup = posTransactionLookup(options);
  }

  // --- handlers ---

  listen(): void {
    setHandler(posRefundStateQuery, () => stateCopy(this.state));
    listenForResolveOutcome(() => this.resolution, this.state);
  }

  // --- the main steps ---

  /** The refund decided, then its outcome told (docs/events.md). */
  async run(): Promise<PosRefundResult> {
    const result = await this.decide();
    await this.emitOutcome(result.status, result.action);
    return result;
  }

  /** The refund's event for `status` (one local activity with a target, nothing without). */
  private emitOutcome(status: string, reason?: string): Promise<void> {
    const { amount, fields } = this;
    return this.events.emitFor(REFUND_EVENT_TYPES, { status, reason, amount, currency: fields.currency });
  }

  /**
   * The checks and the reservation (nothing sent yet), then the Refund (F3) sent once, then the ledger
   * settled.
   */
  private async decide(): Promise<PosRefundResult> {
    const { fields, merchantRef, state } = this;
    const start = posTransactionStartSearch({ ...fields, merchant_ref: merchantRef });
    upsertSearchAttributes(paymentSearchAttributes({ ...start, flow: 'pos-refund' }));
    try {
      const ended = await this.beforeSend();
      if (ended) return ended;
    } catch (err) {
      if (isCancellation(err))
        return this.finish('refused', 'Cancelled before anything was sent: nothing was refunded', {
          cancelRequested: true,
        });
      throw err;
    }

    // ---- the Refund (F3), sent once ----
    const out = await sendPosTransaction({
      wording: linkedWording('refund'),
      req: { ...fields, transaction_type: 'Refund', merchant_ref: merchantRef },
      options: this.options,
      track: state,
      setStatus: (status) => this.setStatus(status),
      resolution: () => this.resolution.value,
      onParked: () => this.emitOutcome('outcome_unknown'),
    });
    if (out.resolution) state.resolution = out.resolution;
    // ---- settle the ledger ----
    if (out.status === 'approved') await this.settle('approved');
    else if (out.status !== 'outcome_unknown') await this.settle('released');
    return this.finish(out.status, out.action, {
      ...(out.transaction ? { transaction: out.transaction, responseCode: out.transaction.response_code } : {}),
      ...(out.cancelRequested ? { cancelRequested: true } : {}),
    });
  }

  /** The original sale, this request sent earlier, the reservation: the refund's end if one of them ends it. */
  private async beforeSend(): Promise<PosRefundResult | undefined> {
    this.setStatus('checking_original');
    const original = await this.checkOriginal();
    if ('ended' in original) return original.ended;
    const earlier = await this.sentEarlier();
    if (earlier) return earlier;
    return this.reserve(original.sale);
  }

  /**
   * The requery (F4) of the original: it must be an approved Purchase or Completion of this card and currency, at least
   * this amount.
   */
  private async checkOriginal(): Promise<{ sale: PosTransactionRecord } | { ended: PosRefundResult }> {
    const { fields, amount } = this;
    const ref = fields.original_merchant_ref;
    let original;
    try {
      original = await this.lookup.requery(ref);
    } catch (err) {
      return this.refuse(
        'unverified',
        `the original sale ${ref} could not be checked (requery (F4): ${failureMessage(err)})`,
      );
    }
    if (!original.found)
      return this.refuse(
        'original_not_found',
        `the service has no transaction with merchant_ref ${ref} (requery (F4): 404)`,
      );
    const o = original.transaction;
    this.state.original = {
      amount: o.amount,
      responseCode: o.response_code,
      ...(o.transaction_type ? { transactionType: o.transaction_type } : {}),
      ...(o.card_pan_masked ? { maskedPan: o.card_pan_masked } : {}),
    };
    if (o.transaction_type !== undefined && !REFUNDABLE.includes(o.transaction_type))
      return this.refuse('original_not_refundable', `${ref} is a ${o.transaction_type}, not a Purchase or Completion`);
    if (o.status !== 'success' || classifyPosCode(o.response_code).outcome !== 'approved') {
      return this.refuse(
        'original_not_approved',
        `the sale ${ref} was not approved (response code ${o.response_code || 'none'})`,
      );
    }
    if (o.currency !== undefined && o.currency !== fields.currency)
      return this.refuse('currency_mismatch', `the sale was in ${o.currency}, the refund in ${fields.currency}`);
    const card = o.card_pan_masked ?? '';
    if (card && (card.slice(0, 6) !== fields.card.bin || card.slice(-4) !== fields.card.last4)) {
      return this.refuse(
        'card_mismatch',
        `the card presented (${maskedPan(fields.card)}) is not the card of the sale (${card})`,
      );
    }
    if (amount > o.amount)
      return this.refuse('over_remaining', `the refund of ${amount} is more than the sale's ${o.amount}`);
    return { sale: o };
  }

  /**
   * The requery (F4) of the refund's own merchant_ref (the request's): found, it was sent earlier and that record is
   * the outcome.
   */
  private async sentEarlier(): Promise<PosRefundResult | undefined> {
    const { merchantRef } = this;
    let own;
    try {
      own = await this.lookup.requery(merchantRef);
    } catch (err) {
      return this.refuse(
        'unverified',
        `the refund's own merchant_ref ${merchantRef} could not be checked (requery (F4): ${failureMessage(err)})`,
      ).ended;
    }
    if (!own.found) return undefined;
    this.state.steps.push({
      op: 'requery',
      attempt: 0,
      outcome: 'found',
      response_code: own.transaction.response_code,
      detail: 'before the first send: this refund request was sent earlier',
    });
    const c = classifyPosCode(own.transaction.response_code, own.transaction.response_message);
    if (c.outcome === 'approved') await this.settle('approved');
    return this.finish(
      c.outcome === 'approved' ? 'approved' : 'declined',
      `This refund request (merchant_ref ${merchantRef}) reached the service earlier: ${c.action}; it is not sent again`,
      { transaction: own.transaction, responseCode: own.transaction.response_code },
    );
  }

  /** Reserve the amount in the sale's refund ledger (refused over what is left). */
  private async reserve(sale: PosTransactionRecord): Promise<PosRefundResult | undefined> {
    this.setStatus('reserving');
    try {
      const granted = await posRefundReserve({
        ledgerWorkflowId: this.ledgerId,
        original_merchant_ref: this.fields.original_merchant_ref,
        sale_amount: sale.amount,
        currency: this.fields.currency,
        merchant_ref: this.merchantRef,
        amount: this.amount,
      });
      this.state.ledger = {
        saleAmount: granted.saleAmount,
        remainingBefore: granted.remainingBefore,
        remainingAfter: granted.remainingAfter,
      };
      return undefined;
    } catch (err) {
      if (failureOf(err)?.type === REFUND_OVER_REMAINING)
        return this.refuse('over_remaining', failureMessage(err)).ended;
      // The reservation may have landed while its answer was lost: give it back (nothing is sent).
      await this.settle('released');
      return this.refuse('unverified', `the sale's refund ledger could not be asked (${failureMessage(err)})`).ended;
    }
  }

  // --- helpers ---

  private async settle(outcome: 'approved' | 'released'): Promise<void> {
    const { ledgerId, merchantRef, amount } = this;
    await CancellationScope.nonCancellable(async () => {
      try {
        await getExternalWorkflowHandle(ledgerId).signal(settleRefundSignal, {
          merchant_ref: merchantRef,
          amount,
          outcome,
        });
      } catch (err) {
        // The ledger is not running (never started: nothing was reserved). The service's own rule still holds.
        log.warn('refund ledger not settled', {
          ledgerId,
          outcome,
          error: failureMessage(err),
          type: failureOf(err)?.type ?? FailureTypes.ServiceError,
        });
      }
    });
  }

  private refuse(refusal: PosRefundRefusal, why: string): { ended: PosRefundResult } {
    this.state.refusal = refusal;
    return {
      ended: this.finish('refused', `Refund refused before anything was sent, nothing was refunded: ${why}`),
    };
  }

  private finish(
    status: PosRefundResult['status'],
    action: string,
    extra: Partial<PosRefundResult> = {},
  ): PosRefundResult {
    this.setStatus(status);
    return { ...stateCopy(this.state), ...extra, status, action };
  }

  private setStatus(status: PosRefundState['status']): void {
    this.state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  }
}
