// One F3 (Refund, Pre-Authorization or Completion) sent once, for the terminal flows beyond the
// sale: the same decisions as the sale (./pos-terminal.ts), in one place for the new flows.
//
//   F3 answered 00 / 51 / 55 / another code → approved / declined (with the action to show)
//   F3 answered 91 or 96                   → requery (F4) at once, like a lost answer
//   F3 lost (timeout, reset, 5xx, worker)  → settle delay, F4 by merchant_ref (send-once)
//   F3 refused (400, 401/403, 404)         → rejected: nothing happened
//   F4 found it                            → that record is the outcome; never sent again
//   F4 404                                 → resend, same merchant_ref and request, bounded (maxAttempts)
//   F4 cannot answer                       → outcome_unknown, parked: F4 on a backoff, resolveOutcome
//   sealed card read gone before a send    → card_data_unavailable (nothing sent by that attempt)
//   cancelled after F3 may have been sent  → a non-cancellable F4 records the real outcome
//
// The caller owns the state object (attempt, steps) and the status names; this module moves them.
// The send, the requery, parking and the card discard are the steps the sale uses too
// (./pos-f3-steps.ts); this module turns their result into a PosF3Outcome.
import { CancellationScope, isCancellation } from '@temporalio/workflow';
import {
  classifyPosCode,
  type PosF3Options,
  type PosLinkedInitiateRequest,
  type PosResolveOutcome,
  type PosStep,
  type PosTransactionRecord,
} from '../shared/pos';
import type { OutcomeResolution } from '../shared/outcome';
import type { Presence } from './steps/send-once';
import { posF3Steps } from './steps/pos-f3-steps';

export { POS_F3_DEFAULTS, posF4 } from './steps/pos-f3-steps';

export type PosF3Status =
  'approved' | 'declined' | 'rejected' | 'not_received' | 'outcome_unknown' | 'card_data_unavailable';

export interface PosF3Outcome {
  status: PosF3Status;
  action: string;
  transaction?: PosTransactionRecord;
  /** The operator's resolveOutcome, when that ended it. */
  resolution?: OutcomeResolution<PosResolveOutcome>;
  /** The service refused the request (rejected): its message. */
  refusal?: string;
  cancelRequested?: boolean;
}

export interface PosF3Spec {
  /** For messages: "refund", "pre-authorisation", "completion". */
  what: string;
  /** The F3 request: transaction_type, merchant_ref, original_merchant_ref, the sealed card. */
  req: PosLinkedInitiateRequest;
  options: PosF3Options;
  /** Mutated: attempt (F3 requests sent) and steps (every initiate and requery, in order). */
  track: { attempt: number; steps: PosStep[] };
  setStatus: (status: 'initiating' | 'requerying' | 'retry_wait' | 'outcome_unknown') => void;
  /** The operator's resolution while parked (the caller's resolveOutcome handler sets it). */
  resolution: () => OutcomeResolution<PosResolveOutcome> | undefined;
}

export async function sendPosF3(spec: PosF3Spec): Promise<PosF3Outcome> {
  const { req, track } = spec;
  const steps = posF3Steps(spec);

  const fromTransaction = (t: PosTransactionRecord, confirmedByRequery: boolean): PosF3Outcome => {
    const c = classifyPosCode(t.response_code, t.response_message);
    if (c.outcome === 'approved')
      return { status: 'approved', action: `Approved: the ${spec.what} went through`, transaction: t };
    if (c.outcome === 'declined') return { status: 'declined', action: c.action, transaction: t };
    return {
      status: 'declined',
      action: confirmedByRequery
        ? `${c.action}: the service received the ${spec.what} (confirmed by requery) and it did not go through`
        : c.action,
      transaction: t,
    };
  };
  const notReceived = (how: string): PosF3Outcome => ({
    status: 'not_received',
    action: `The service never received the ${spec.what} (${how}); nothing moved.`,
  });

  const park = async (why: string): Promise<PosF3Outcome> => {
    const settled = await steps.park();
    if (settled.kind === 'final') return fromTransaction(settled.record, true);
    if (settled.kind === 'absent') return notReceived(`F4 404 while the outcome was unknown: ${why}`);
    const r = settled.resolution as OutcomeResolution<PosResolveOutcome>;
    track.steps.push({
      op: 'resolve',
      attempt: track.attempt,
      outcome: r.outcome,
      detail: `by ${r.operator}: ${r.reason}`,
    });
    return {
      status: r.outcome,
      resolution: r,
      action: `Resolved by ${r.operator}: ${r.reason} (F4 could not tell the outcome of merchant_ref ${req.merchant_ref})`,
    };
  };

  const decide = async (): Promise<PosF3Outcome> => {
    try {
      const sent = await steps.send(`POS ${spec.what} (F3)`);
      switch (sent.outcome) {
        case 'answered':
          if (sent.answer.kind === 'answer') return fromTransaction(sent.answer.transaction, false);
          return {
            status: 'card_data_unavailable',
            action:
              track.attempt === 0
                ? `The sealed card data expired before the ${spec.what} was sent: nothing was sent. Start again with a fresh card read.`
                : `The sealed card data expired before the retry could be sent; the service never received attempt ${track.attempt} (F4 404): nothing moved. Start again with a fresh card read.`,
          };
        case 'refused':
          return {
            status: 'rejected',
            refusal: sent.failure.message,
            action: `Refused by the service, nothing moved: ${sent.failure.message}`,
          };
        case 'found':
          return fromTransaction(sent.record, true);
        case 'never-received':
          return steps.lastSendRefused()
            ? { status: 'rejected', refusal: sent.lost, action: `Refused by the service, nothing moved: ${sent.lost}` }
            : notReceived(`F4 404 after ${track.attempt} attempt(s)`);
        case 'unverified':
          return await park(sent.lost);
      }
    } catch (err) {
      if (!isCancellation(err)) throw err;
      // Cancelled while the F3 may have moved money: ask F4, record what it says.
      return await CancellationScope.nonCancellable(async () => {
        let found: Presence<PosTransactionRecord> | undefined;
        try {
          found = await steps.requery();
        } catch {
          found = undefined;
        }
        const note = `cancel requested after the ${spec.what} may have been sent`;
        let out: PosF3Outcome;
        if (found?.found) out = fromTransaction(found.record, true);
        else if (found && steps.inFlightOver()) out = notReceived(`${note}; F4 404`);
        else
          out = {
            status: 'outcome_unknown',
            action: `${note}: F4 could not tell; it is NOT sent again. Reconcile by merchant_ref ${req.merchant_ref}.`,
          };
        return {
          ...out,
          action: found?.found ? `${out.action} (${note}; confirmed by F4)` : out.action,
          cancelRequested: true,
        };
      });
    }
  };

  const outcome = await decide();
  if (steps.cardKept()) {
    const handle = req.card.handle;
    await steps.discardCard(handle);
  }
  return outcome;
}
