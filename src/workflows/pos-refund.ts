// POS terminal refund of one approved sale (F3 transaction_type Refund, tied to the sale by
// original_merchant_ref; F4 requery by merchant_ref).
//
//   validate (zod; card-read fields refused by name)
//   F4 original ── 404 → refused original_not_found; declined → original_not_approved;
//                  not a Purchase/Completion → original_not_refundable; other currency or card
//                  (BIN/last four) → currency_mismatch / card_mismatch; F4 unanswerable → unverified
//   F4 own merchant_ref ── found → that record is the outcome (the same request, already sent)
//   reserve in the sale's refund ledger ── over what is left → refused over_remaining
//   F3 Refund through send-once (./pos-f3.ts): approved | declined | rejected | not_received |
//                  card_data_unavailable | outcome_unknown (parked, resolveOutcome)
//   settle the ledger: approved keeps the amount, no money moved releases it, unknown holds it
//
// Nothing is sent before the original was checked and the amount reserved. The refund's own
// merchant_ref is derived from the caller's refund request id (RF<digest>), so the same request
// is the same refund at the service, whatever Temporal still retains.
import {
  ApplicationFailure,
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
  POS_RESOLVE_OUTCOMES,
  POS_SEALED_FIELDS,
  classifyPosCode,
  maskedPan,
  type PosRequeryOutcome,
  type PosResolveOutcome,
} from '../shared/pos';
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
import { checkResolveOutcome, resolveOutcomeUpdate, type OutcomeResolution } from '../shared/outcome';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { posF4, sendPosF3, type PosF3Outcome } from './pos-f3';
import {
  FailureTypes,
  activityFailureMessage,
  activityFailureType,
  describeIssues,
  issuesOf,
  type FieldIssue,
} from '../shared/failures';

/** Transaction types a refund may return money from. */
const REFUNDABLE = ['Purchase', 'Completion'];

export async function posRefundWorkflow(raw: PosSealedRefundInput): Promise<PosRefundResult> {
  // ---- 1. every field rule, before anything is sent ----
  const rest = Object.fromEntries(
    Object.entries(raw ?? {}).filter(([k]) => !(POS_SEALED_FIELDS as readonly string[]).includes(k)),
  );
  const parsed = PosSealedRefundInputSchema.safeParse(rest);
  const issues: FieldIssue[] = [
    ...unsealedFieldsIn(raw, 'startPosRefund'),
    ...(parsed.success ? [] : issuesOf(parsed.error)),
  ];
  if (!parsed.success || issues.length > 0) {
    throw ApplicationFailure.create({
      type: 'InvalidInput',
      message: `invalid POS refund: ${describeIssues(issues)}`,
      nonRetryable: true,
      details: [issues],
    });
  }
  const { options = {}, refund_request_id, original_merchant_ref, ...fields } = parsed.data;
  const merchantRef = refundMerchantRef(refund_request_id);
  const amount = Number(fields.amount);
  const ledgerId = posRefundLedgerWorkflowId(original_merchant_ref);

  const state: PosRefundState = {
    refundRequestId: refund_request_id,
    merchantRef,
    originalMerchantRef: original_merchant_ref,
    amount,
    currency: fields.currency,
    status: 'validating',
    attempt: 0,
    steps: [],
    card: { maskedPan: maskedPan(fields.card) },
  };
  setHandler(posRefundStateQuery, () => ({ ...state, steps: [...state.steps] }));
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
  const setStatus = (status: PosRefundState['status']) => {
    state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'pos-refund',
      reference: merchantRef,
      status: 'validating',
      amount,
      currency: fields.currency,
    }),
  );

  const { posRefundReserve } = proxyActivities<PosRefundActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: '2 minutes',
    retry: {
      initialInterval: '1s',
      maximumInterval: '10s',
      nonRetryableErrorTypes: [REFUND_OVER_REMAINING, REFUND_LEDGER_CLOSED],
    },
  });
  const f4 = posF4(options);

  const finish = (
    status: PosRefundResult['status'],
    action: string,
    extra: Partial<PosRefundResult> = {},
  ): PosRefundResult => {
    setStatus(status);
    return { ...state, steps: [...state.steps], ...extra, status, action };
  };
  const refuse = (refusal: PosRefundRefusal, why: string): PosRefundResult => {
    state.refusal = refusal;
    return finish('refused', `Refund refused before anything was sent, nothing was refunded: ${why}`);
  };

  try {
    // ---- 2. the original sale, by F4 ----
    setStatus('checking_original');
    let original: PosRequeryOutcome;
    try {
      original = await f4.requery(original_merchant_ref);
    } catch (err) {
      return refuse(
        'unverified',
        `the original sale ${original_merchant_ref} could not be checked (F4: ${activityFailureMessage(err)})`,
      );
    }
    if (!original.found)
      return refuse(
        'original_not_found',
        `the service has no transaction with merchant_ref ${original_merchant_ref} (F4 404)`,
      );
    const o = original.transaction;
    state.original = {
      amount: o.amount,
      responseCode: o.response_code,
      ...(o.transaction_type ? { transactionType: o.transaction_type } : {}),
      ...(o.card_pan_masked ? { maskedPan: o.card_pan_masked } : {}),
    };
    if (o.transaction_type !== undefined && !REFUNDABLE.includes(o.transaction_type)) {
      return refuse(
        'original_not_refundable',
        `${original_merchant_ref} is a ${o.transaction_type}, not a Purchase or Completion`,
      );
    }
    if (o.status !== 'success' || classifyPosCode(o.response_code).outcome !== 'approved') {
      return refuse(
        'original_not_approved',
        `the sale ${original_merchant_ref} was not approved (response code ${o.response_code || 'none'})`,
      );
    }
    if (o.currency !== undefined && o.currency !== fields.currency)
      return refuse('currency_mismatch', `the sale was in ${o.currency}, the refund in ${fields.currency}`);
    const card = o.card_pan_masked ?? '';
    if (card && (card.slice(0, 6) !== fields.card.bin || card.slice(-4) !== fields.card.last4)) {
      return refuse(
        'card_mismatch',
        `the card presented (${maskedPan(fields.card)}) is not the card of the sale (${card})`,
      );
    }
    if (amount > o.amount)
      return refuse('over_remaining', `the refund of ${amount} is more than the sale's ${o.amount}`);

    // ---- 3. the same request already sent? (its merchant_ref is the request's) ----
    let own: PosRequeryOutcome;
    try {
      own = await f4.requery(merchantRef);
    } catch (err) {
      return refuse(
        'unverified',
        `the refund's own merchant_ref ${merchantRef} could not be checked (F4: ${activityFailureMessage(err)})`,
      );
    }
    if (own.found) {
      state.steps.push({
        op: 'requery',
        attempt: 0,
        outcome: 'found',
        response_code: own.transaction.response_code,
        detail: 'before the first send: this refund request was sent earlier',
      });
      const c = classifyPosCode(own.transaction.response_code, own.transaction.response_message);
      if (c.outcome === 'approved') await settle('approved');
      const status = c.outcome === 'approved' ? 'approved' : 'declined';
      return finish(
        status,
        `This refund request (merchant_ref ${merchantRef}) reached the service earlier: ${c.action}; it is not sent again`,
        { transaction: own.transaction, responseCode: own.transaction.response_code },
      );
    }

    // ---- 4. reserve the amount in the sale's refund ledger ----
    setStatus('reserving');
    try {
      const granted = await posRefundReserve({
        ledgerWorkflowId: ledgerId,
        original_merchant_ref,
        sale_amount: o.amount,
        currency: fields.currency,
        merchant_ref: merchantRef,
        amount,
      });
      state.ledger = {
        saleAmount: granted.saleAmount,
        remainingBefore: granted.remainingBefore,
        remainingAfter: granted.remainingAfter,
      };
    } catch (err) {
      if (activityFailureType(err) === REFUND_OVER_REMAINING)
        return refuse('over_remaining', activityFailureMessage(err));
      // The reservation may have landed while its answer was lost: give it back (nothing is sent).
      await settle('released');
      return refuse('unverified', `the sale's refund ledger could not be asked (${activityFailureMessage(err)})`);
    }
  } catch (err) {
    if (isCancellation(err))
      return finish('refused', 'Cancelled before anything was sent: nothing was refunded', { cancelRequested: true });
    throw err;
  }

  // ---- 5. F3 Refund, once ----
  const out: PosF3Outcome = await sendPosF3({
    what: 'refund',
    req: { ...fields, transaction_type: 'Refund', merchant_ref: merchantRef, original_merchant_ref },
    options,
    track: state,
    setStatus,
    resolution: () => resolution,
  });
  if (out.resolution) state.resolution = out.resolution;
  // ---- 6. settle the ledger ----
  if (out.status === 'approved') await settle('approved');
  else if (out.status !== 'outcome_unknown') await settle('released');
  const status = out.status === 'rejected' ? 'rejected' : out.status;
  return finish(status, out.action, {
    ...(out.transaction ? { transaction: out.transaction, responseCode: out.transaction.response_code } : {}),
    ...(out.cancelRequested ? { cancelRequested: true } : {}),
  });

  async function settle(outcome: 'approved' | 'released'): Promise<void> {
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
          error: activityFailureMessage(err),
          type: activityFailureType(err) ?? FailureTypes.ServiceError,
        });
      }
    });
  }
}
