// POS terminal pre-authorisation and its completion (transactions of type Pre-Authorization, then
// Completion, with their requery), as workflows, starters and tests see it.
//
//   posPreAuthWorkflow   the Pre-Authorization through send-once → held, waiting (a durable timer)
//                        for the completePreAuth Update (a fresh read of the same card, amount ≤ held)
//                        or releasePreAuth, until the hold window ends (lapsed) → the Completion
//                        through send-once, tied to the pre-authorisation by original_merchant_ref
//
// The completion's merchant_ref is derived from the pre-authorisation's (`CP<digest>`,
// completionMerchantRef): one pre-authorisation has one completion, and every attempt of it
// carries the same reference. A second completePreAuth is refused by the Update's validator.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { z } from 'zod';
import { keyDigest } from './mandate';
import {
  PosTransactionOptionsSchema,
  PosSealedCardSchema,
  PosTransactionInputSchema,
  posTransactionStartSearch,
  sealedOmit,
  type PosSendState,
  type PosSendStatus,
  type PosTransactionRecord,
} from './pos-terminal';
import { lazy } from './lazy';
import { durationField, durationMs } from './duration';
import { pickFinal } from './final-statuses';
import type { PaymentSearchFields } from './search-attributes';

export const posPreAuthWorkflowId = (merchantRef: string): string => `pos-preauth-${merchantRef}`;

/** How a pre-authorisation starts, for the starter and the Nexus operation alike: its workflow, id and first search attributes. */
export function posPreAuthStart(v: { merchant_ref: string; amount: string | number; currency?: string }): {
  workflowType: 'posPreAuthWorkflow';
  workflowId: string;
  search: PaymentSearchFields;
} {
  return {
    workflowType: 'posPreAuthWorkflow',
    workflowId: posPreAuthWorkflowId(v.merchant_ref),
    search: { ...posTransactionStartSearch(v), flow: 'pos-preauth' },
  };
}
/** The completion transaction's merchant_ref: `CP` + a 64-bit digest of the pre-authorisation's (15 characters). */
export const completionMerchantRef = (preAuthMerchantRef: string): string => `CP${keyDigest(preAuthMerchantRef)}`;

/** How long a pre-authorisation is held for its completion by default (docs/choices.md). */
export const DEFAULT_HOLD_WINDOW = '7 days';

const holdWindow = lazy('pos-preauth.holdWindow', (z) =>
  durationField(
    z,
    true,
    '"30 minutes", "48h" or "7 days"',
    z.number().int('must be whole milliseconds').min(1_000, 'must be at least 1000 ms'),
  ).optional(),
);

/** The pre-authorisation as the starter takes it: the sale's fields (the card read) without transaction_type. */
export const PosPreAuthInputSchema = lazy('pos-preauth.PosPreAuthInputSchema', () =>
  PosTransactionInputSchema.omit({ transaction_type: true, options: true }).extend({
    options: PosTransactionOptionsSchema.extend({
      /** How long after the pre-authorisation was sent a completion is accepted; then the flow ends `lapsed`. Default 7 days. */
      holdWindow,
    }).optional(),
  }),
);
export type PosPreAuthInput = z.input<typeof PosPreAuthInputSchema>;
export const PosSealedPreAuthInputSchema = lazy('pos-preauth.PosSealedPreAuthInputSchema', () =>
  PosPreAuthInputSchema.omit(sealedOmit).extend({ card: PosSealedCardSchema }),
);
export type PosSealedPreAuthInput = z.input<typeof PosSealedPreAuthInputSchema>;
export type PosSealedPreAuthParsedInput = z.output<typeof PosSealedPreAuthInputSchema>;

/** The completion's card read as the starter takes it: the same card presented again, and the amount to capture. */
export const PosCompletionCardReadSchema = PosTransactionInputSchema.pick({
  amount: true,
  card_pan: true,
  card_expiry_month: true,
  card_expiry_year: true,
  card_type: true,
  cardholder_name: true,
  card_sequence_number: true,
  track2: true,
  chipdata: true,
  aid: true,
  pin_block: true,
});
export type PosCompletionCardRead = z.input<typeof PosCompletionCardReadSchema>;

/** The completePreAuth Update's argument: the amount and the sealed card read (never card data). */
export const PosCompleteInputSchema = lazy('pos-preauth.PosCompleteInputSchema', (z) =>
  z.strictObject({
    amount: PosTransactionInputSchema.shape.amount,
    card: PosSealedCardSchema,
    aid: PosTransactionInputSchema.shape.aid,
    card_type: PosTransactionInputSchema.shape.card_type,
  }),
);
export type PosCompleteInput = z.input<typeof PosCompleteInputSchema>;

export interface PosCompletionAccepted {
  completionMerchantRef: string;
  amount: number;
  /** Workflow time (ISO) at which the Update was accepted. */
  acceptedAt: string;
}

/** Asks the held pre-authorisation to complete (once). Refused unless the flow is `held`, the hold window is open, the amount ≤ held and the card is the pre-authorisation's. */
export const completePreAuthUpdate = defineUpdate<PosCompletionAccepted, [PosCompleteInput]>('completePreAuth');
/** The merchant will not complete: the flow ends `released` (the spec has no call to release a hold; it lapses at the issuer). */
export const releasePreAuthUpdate = defineUpdate<{ releasedAt: string }, [{ reason?: string }]>('releasePreAuth');

export type PosPreAuthStatus =
  | 'validating'
  // the pre-authorisation's send; declined, rejected, not_received, card_data_unavailable: it did not hold
  | Exclude<PosSendStatus, 'approved'>
  /** Approved: the funds are held; waiting for completePreAuth or releasePreAuth until the window ends. */
  | 'held'
  | 'completing'
  /** The completion was approved: money moved (the completion's amount). */
  | 'completed'
  /** The window ended without a completion: no money moved beyond the hold, which lapses at the issuer. */
  | 'lapsed'
  /** The merchant released it: no completion will be sent. */
  | 'released'
  // the completion did not move money (the hold lapses at the issuer)
  | 'completion_declined'
  | 'completion_rejected'
  | 'completion_not_received';

export const POS_PREAUTH_FINAL_STATUSES: readonly PosPreAuthStatus[] = pickFinal([
  'completed',
  'lapsed',
  'released',
  'declined',
  'rejected',
  'not_received',
  'card_data_unavailable',
  'completion_declined',
  'completion_rejected',
  'completion_not_received',
]);

export interface PosCompletionState extends PosSendState {
  amount: number;
  status: PosSendStatus;
  card: { maskedPan: string };
  transaction?: PosTransactionRecord;
  action?: string;
}

export interface PosPreAuthState extends PosSendState {
  status: PosPreAuthStatus;
  /** Which transaction the flow is at. */
  phase: 'preauth' | 'completion';
  /** The pre-authorised (held) amount, lowest unit. */
  amount: number;
  currency: string;
  /** The pre-authorisation's record (F3/F4). */
  transaction?: PosTransactionRecord;
  /** Workflow time (ISO) of the first pre-authorisation send: the window counts from it. */
  heldSince?: string;
  /** A completion is accepted until then (ISO). */
  holdUntil?: string;
  completion?: PosCompletionState;
  /** Completions whose card read expired before the service received them (nothing sent; a new one may follow). */
  completionsNotSent?: number;
  releaseReason?: string;
}

export interface PosPreAuthResult extends PosPreAuthState {
  status: Exclude<PosPreAuthStatus, 'validating' | 'initiating' | 'requerying' | 'retry_wait' | 'held' | 'completing'>;
  action: string;
  cancelRequested?: boolean;
}

export const posPreAuthStateQuery = defineQuery<PosPreAuthState>('posPreAuthState');

/** '7 days', '48h', '30 minutes', or milliseconds → milliseconds (the one duration reader). */
export const holdWindowMs = (d: string | number): number => durationMs(d);
