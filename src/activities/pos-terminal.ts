// Activities of the POS terminal transaction flow (and of the refund and pre-authorisation flows,
// which send a transaction the same way): the transaction, its requery, and the deletion of a sealed card read.
//
// The transaction moves money: sent once, its failures typed for the workflow (sendOnce, ./calls.ts),
// which requeries first; the requery is a read, retried by its policy.
// The terminal configuration and key exchange are not activities: pin_key must never enter
// Temporal (see src/starters/pos-terminal.ts). The card read arrives as a claim-check handle
// (purpose 'pos-card') and is redeemed right before the call (withSealed); the requery needs no card
// data. Nothing here logs a request or response body: only references, attempts and outcomes.
import { Context } from '@temporalio/activity';
import type { PosTerminalTransaction } from '../api';
import { flowDeps, type ActivityDeps, type FlowDeps } from './deps';
import { keptForResend, withSealed } from './claim-check';
import { bindActivities } from './bind';
import { attemptRequestId, read, sendOnce } from './calls';
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

/** The parts of a terminal transaction (sent or requeried) the flow keeps: no card data beyond the masked PAN. */
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

type PosTerminalDeps = FlowDeps & Pick<ActivityDeps, 'claimCheck'>;

/**
 * Initiates the terminal transaction (F3), once, with the sealed card read (redeemed here). The
 * workflow never calls it again unless the requery answered 404 for this merchant_ref. A flow started before the claim check passes the card
 * read in clear (PosInitiateRequest). A Refund or Completion names its original
 * (`original_merchant_ref`, PosLinkedInitiateRequest), passed on as it is.
 */
async function posTerminalInitiateTransaction(
  { api, log, claimCheck }: PosTerminalDeps,
  req: PosSealedInitiateRequest | PosLinkedInitiateRequest | PosInitiateRequest,
  o: { attempt: number; timeoutMs?: number },
): Promise<PosInitiateResponse> {
  const call = { timeoutMs: o.timeoutMs, requestId: `${Context.current().info.activityId}-a${o.attempt}` };
  const initiate = () => {
    if (!('card' in req)) return api.posTerminal.initiate(req, call);
    const { card: sealed, ...fields } = req;
    return withSealed(
      claimCheck,
      sealed.handle,
      'pos-card',
      (card: PosSealedCardData) => api.posTerminal.initiate({ ...fields, ...card }, call),
      // Kept for a resend that the requery may prove safe: after a 91/96 answer, or an unclear failure.
      {
        afterAnswer: (r) =>
          classifyPosCode(r.data.response_code, r.data.response_message ?? undefined).outcome === 'unknown',
        afterError: keptForResend,
      },
    );
  };
  const once = {
    log,
    what: 'initiate POS transaction (F3)',
    where: { merchantRef: req.merchant_ref, attempt: o.attempt },
    call: 'POS transaction',
  };
  const send = async () => ({ transaction: toPosTransactionRecord((await initiate()).data) });
  return sendOnce(once, send, ({ transaction: t }) => ({ responseCode: t.response_code, status: t.status }));
}

/** Deletes a sealed card read the flow no longer needs (kept for a resend that did not happen). */
async function posDiscardSealedCard({ claimCheck }: PosTerminalDeps, handle: string): Promise<void> {
  await claimCheck.discard(handle);
}

/** Requeries the terminal transaction (F4). 404 is an answer ("never received"), not a failure. */
function posTerminalRequeryTransaction(
  { api }: PosTerminalDeps,
  req: { merchant_ref: string },
): Promise<PosRequeryOutcome> {
  const absent = {
    notFound: 'posTerminalRequery' as const,
    answer: { found: false as const },
    otherNotFound: 'requery 404 that is not the documented "transaction unknown"',
  };
  const requery = async (): Promise<PosRequeryOutcome> => {
    const res = await api.posTerminal.requery(req, { requestId: attemptRequestId() });
    return { found: true, transaction: toPosTransactionRecord(res.data) };
  };
  return read('requery POS transaction (F4)', requery, absent);
}

export function createPosTerminalActivities(deps: ActivityDeps) {
  const d: PosTerminalDeps = { ...flowDeps(deps, 'pos'), claimCheck: deps.claimCheck };
  return bindActivities(d, { posTerminalInitiateTransaction, posDiscardSealedCard, posTerminalRequeryTransaction });
}

export type PosTerminalActivities = ReturnType<typeof createPosTerminalActivities>;
