// Activities of the POS terminal transaction flow (and of the refund and pre-authorisation flows,
// which send F3 the same way): F3 initiate, F4 requery, and the deletion of a sealed card read.
//
// F3 is money-moving: made once per activity attempt, scheduled with maximumAttempts 1; every
// failure becomes an ApplicationFailure with a type from FailureTypes and nonRetryable set, so the
// workflow decides (requery first). F4 is a read and may be retried by its retry policy.
// F1/F2 (terminal configuration, key exchange) are not activities: pin_key must never enter
// Temporal (see src/starters/pos-terminal.ts). The card read arrives as a claim-check handle
// (purpose 'pos-card') and F3 redeems it right before the call (withSealed); F4 needs no card
// data. Nothing here logs a request or response body: only references, attempts and outcomes.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { isDocumentedNotFound, NotFoundError, PaymentsApiError, type PosTerminalTransaction } from '../api';
import type { ActivityDeps } from './deps';
import { withSealed } from './claim-check';
import { heartbeatWhile } from './heartbeat';
import {
  classifyPosCode,
  type PosInitiateRequest,
  type PosLinkedInitiateRequest,
  type PosSealedCardData,
  type PosSealedInitiateRequest,
  type PosInitiateResponse,
  type PosRequeryOutcome,
  type PosTransactionRecord,
} from '../shared/pos-terminal';
import { FailureTypes } from '../shared/failures';
import { toActivityFailure } from './failures';

/** The parts of F3/F4's transaction the flow keeps: no card data beyond the masked PAN. */
export function toPosTransactionRecord(t: PosTerminalTransaction): PosTransactionRecord {
  return {
    status: t.status,
    response_code: t.response_code,
    response_message: t.response_message ?? undefined,
    amount: t.amount,
    currency: t.currency ?? undefined,
    merchant_ref: t.merchant_ref ?? undefined,
    transaction_reference: t.transaction_reference ?? undefined,
    terminal_id: t.terminal_id != null ? String(t.terminal_id) : undefined,
    rrn: t.rrn ?? undefined,
    stan: t.stan ?? undefined,
    receipt_no: t.receipt_no != null ? String(t.receipt_no) : undefined,
    card_pan_masked: t.payment_info?.card_pan ?? undefined,
    card_type: t.payment_info?.card_type ?? undefined,
    created_at: t.created_at ?? undefined,
    transaction_type: t.transaction_type ?? undefined,
  };
}

/**
 * F3 may be sent again only after F4 proved the attempt never arrived, which follows a lost answer
 * (or a call that failed before it was sent) or a 91/96: the sealed card read is kept for that
 * resend then. A refusal or a final answer deletes it.
 */
const keepCardAfterError = (err: unknown): boolean => {
  const type = toActivityFailure(err, { moneyMoving: true, what: 'F3' }).type;
  return type === FailureTypes.OutcomeUnknown || type === FailureTypes.Transient;
};

export function createPosTerminalActivities(deps: ActivityDeps) {
  const { api, logger, claimCheck } = deps;
  const log = logger.child({ flow: 'pos' });

  return {
    /**
     * F3, once, with the sealed card read (redeemed here). The workflow never calls it again unless
     * F4 answered 404 for this merchant_ref. A flow started before the claim check passes the card
     * read in clear (PosInitiateRequest). A Refund or Completion names its original
     * (`original_merchant_ref`, PosLinkedInitiateRequest), passed on as it is.
     */
    async posTerminalInitiateTransaction(
      req: PosSealedInitiateRequest | PosLinkedInitiateRequest | PosInitiateRequest,
      o: { attempt: number; timeoutMs?: number },
    ): Promise<PosInitiateResponse> {
      const ctx = Context.current();
      const where = {
        workflowId: ctx.info.workflowExecution?.workflowId,
        merchantRef: req.merchant_ref,
        attempt: o.attempt,
      };
      const call = { timeoutMs: o.timeoutMs, requestId: `${ctx.info.activityId}-a${o.attempt}` };
      try {
        // Heartbeats while the call is open: a worker lost mid-call is noticed within the heartbeat timeout.
        const res = await heartbeatWhile(
          'card' in req
            ? withSealed(
                claimCheck,
                req.card.handle,
                'pos-card',
                (card: PosSealedCardData) => {
                  const { card: _sealed, ...fields } = req;
                  void _sealed;
                  return api.posTerminal.initiate({ ...fields, ...card }, call);
                },
                {
                  afterAnswer: (r) =>
                    classifyPosCode(r.data.response_code, r.data.response_message ?? undefined).outcome === 'unknown',
                  afterError: keepCardAfterError,
                },
              )
            : api.posTerminal.initiate(req, call),
        );
        const transaction = toPosTransactionRecord(res.data);
        log.info(
          { ...where, responseCode: transaction.response_code, status: transaction.status },
          'POS transaction answered',
        );
        return { transaction };
      } catch (err) {
        const failure = toActivityFailure(err, { moneyMoving: true, what: 'F3 initiate POS transaction' });
        log.warn(
          { ...where, type: failure.type, status: err instanceof PaymentsApiError ? err.status : undefined },
          'POS transaction without an answer',
        );
        throw failure;
      }
    },

    /** Deletes a sealed card read the flow no longer needs (kept for a resend that did not happen). */
    async posDiscardSealedCard(handle: string): Promise<void> {
      await claimCheck.discard(handle);
    },

    /** F4. 404 is an answer ("never received"), not a failure. */
    async posTerminalRequeryTransaction(req: { merchant_ref: string }): Promise<PosRequeryOutcome> {
      const ctx = Context.current();
      try {
        const res = await api.posTerminal.requery(req, { requestId: `${ctx.info.activityId}-${ctx.info.attempt}` });
        return { found: true, transaction: toPosTransactionRecord(res.data) };
      } catch (err) {
        if (isDocumentedNotFound('posTerminalRequery', err)) return { found: false };
        throw toActivityFailure(
          err instanceof NotFoundError
            ? ApplicationFailure.create({
                type: FailureTypes.ServiceError,
                message: `F4 404 that is not the documented "transaction unknown": ${err.message}`,
                nonRetryable: true,
              })
            : err,
          { moneyMoving: false, what: 'F4 requery POS transaction' },
        );
      }
    },
  };
}

export type PosTerminalActivities = ReturnType<typeof createPosTerminalActivities>;
