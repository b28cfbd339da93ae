// POS terminal refund (a transaction of type Refund, then its requery), as workflows, starters and tests
// see it: inputs, results, states, the per-sale refund ledger, defined once.
//
//   posRefundWorkflow        one refund of one approved sale: the requery checks the original, the sale's
//                            refund ledger reserves the amount, the Refund transaction through send-once
//   posRefundLedgerWorkflow  one per sale (`pos-refunds-<original merchant_ref>`): the durable
//                            running total of its refunds; a reservation over what is left is refused
//
// A refund's own merchant_ref is derived from the caller's refund request id
// (`RF<digest>`, refundMerchantRef): the same request always names the same refund at the
// service and the same workflow (`pos-refund-<merchant_ref>`). The card read is sealed by the
// starter (claim check, purpose 'pos-card') exactly as for a sale; only its handle, BIN and last
// four enter Temporal.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { z } from 'zod';
import { keyDigest } from './mandate';
import {
  PosTransactionOptionsSchema,
  PosSealedCardSchema,
  PosTransactionInputSchema,
  merchantRefSchema,
  posTransactionStartSearch,
  sealedOmit,
  unsealedCardFields,
  type PosSendState,
  type PosSendStatus,
  type PosTransactionRecord,
} from './pos-terminal';
import type { InputIssue } from './input-error';
import { lazy } from './lazy';
import { pickFinal } from './final-statuses';
import type { PaymentSearchFields } from './search-attributes';

/** The caller's id of one refund request: the same id is the same refund. */
export const REFUND_REQUEST_ID_RULE = 'must be 1 to 100 letters, digits, "_", "-", "." or ":"';
const refundRequestId = lazy('pos-refund.refundRequestId', (z) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : REFUND_REQUEST_ID_RULE) })
    .regex(/^[A-Za-z0-9_.:-]{1,100}$/, REFUND_REQUEST_ID_RULE),
);

/** The refund transaction's merchant_ref: `RF` + a 64-bit digest of the refund request id (15 characters, within the spec's 25). */
export const refundMerchantRef = (refundRequestIdValue: string): string => `RF${keyDigest(refundRequestIdValue)}`;
export const posRefundWorkflowId = (refundMerchantRefValue: string): string => `pos-refund-${refundMerchantRefValue}`;

/** How a refund starts, for the starter and the Nexus operation alike: its workflow, its id and first search attributes. */
export function posRefundStart(v: { refund_request_id: string; amount: string | number; currency?: string }): {
  workflowType: 'posRefundWorkflow';
  workflowId: string;
  search: PaymentSearchFields;
} {
  const merchantRef = refundMerchantRef(v.refund_request_id);
  return {
    workflowType: 'posRefundWorkflow',
    workflowId: posRefundWorkflowId(merchantRef),
    search: { ...posTransactionStartSearch({ ...v, merchant_ref: merchantRef }), flow: 'pos-refund' },
  };
}
/** The sale's refund ledger. */
export const posRefundLedgerWorkflowId = (originalMerchantRef: string): string => `pos-refunds-${originalMerchantRef}`;

/**
 * The refund as the starter takes it: the card read (the card of the original sale, presented
 * again), the amount (lowest unit, ≤ what is left of the sale), the original sale's merchant_ref
 * and the caller's refund request id. No merchant_ref and no transaction_type: both are the flow's.
 */
export const PosRefundInputSchema = lazy('pos-refund.PosRefundInputSchema', () =>
  PosTransactionInputSchema.omit({
    merchant_ref: true,
    transaction_type: true,
    options: true,
  }).extend({
    refund_request_id: refundRequestId,
    /** The merchant_ref of the approved sale (Purchase or Completion) this refund returns money from. */
    original_merchant_ref: merchantRefSchema,
    options: PosTransactionOptionsSchema.optional(),
  }),
);
export type PosRefundInput = z.input<typeof PosRefundInputSchema>;

/** The workflow input: the card read sealed (handle, BIN, last four). */
export const PosSealedRefundInputSchema = lazy('pos-refund.PosSealedRefundInputSchema', () =>
  PosRefundInputSchema.omit(sealedOmit).extend({ card: PosSealedCardSchema }),
);
export type PosSealedRefundInput = z.input<typeof PosSealedRefundInputSchema>;
export type PosSealedRefundParsedInput = z.output<typeof PosSealedRefundInputSchema>;

/** Card-read fields found in a refund or completion workflow input (refused by name, values never named). */
export const unsealedFieldsIn = (raw: unknown, starter: string): InputIssue[] => unsealedCardFields(raw, starter);

/** Why a refund was refused before anything was sent (nothing was refunded). */
export type PosRefundRefusal =
  /** The requery of the original answered 404: no such sale. */
  | 'original_not_found'
  /** The original was declined (or never completed). */
  | 'original_not_approved'
  /** The original is not a Purchase or Completion (e.g. a Pre-Authorization or a Refund). */
  | 'original_not_refundable'
  | 'currency_mismatch'
  /** The card read is not the card of the original sale (BIN and last four differ). */
  | 'card_mismatch'
  /** The amount is over what is left of the sale after its earlier refunds (approved or in flight). */
  | 'over_remaining'
  /** The service's requery (F4) or the refund ledger could not be asked: nothing was sent. */
  | 'unverified';

/** The refund's own statuses come before the send (checking_original: the requery of the sale; reserving: its ledger) or instead of it (refused). */
export type PosRefundStatus = 'validating' | 'checking_original' | 'reserving' | 'refused' | PosSendStatus;

export const POS_REFUND_FINAL_STATUSES: readonly PosRefundStatus[] = pickFinal([
  'approved',
  'declined',
  'rejected',
  'refused',
  'not_received',
  'card_data_unavailable',
]);

/** A refund's state; its `merchantRef` is its own (refundMerchantRef). */
export interface PosRefundState extends PosSendState {
  refundRequestId: string;
  originalMerchantRef: string;
  /** Lowest unit. */
  amount: number;
  currency: string;
  status: PosRefundStatus;
  /** What the requery said about the original sale. */
  original?: { amount: number; responseCode: string; transactionType?: string; maskedPan?: string };
  /** What the sale's refund ledger granted: the amount left before and after this refund. */
  ledger?: { saleAmount: number; remainingBefore: number; remainingAfter: number };
  refusal?: PosRefundRefusal;
}

export interface PosRefundResult extends PosRefundState {
  status: Exclude<
    PosRefundStatus,
    'validating' | 'checking_original' | 'reserving' | 'initiating' | 'requerying' | 'retry_wait'
  >;
  action: string;
  responseCode?: string;
  transaction?: PosTransactionRecord;
  cancelRequested?: boolean;
}

export const posRefundStateQuery = defineQuery<PosRefundState>('posRefundState');

// ---- The sale's refund ledger --------------------------------------------------------------

export interface RefundLedgerEntry {
  merchantRef: string;
  amount: number;
  /** reserved: its transaction may be under way or its outcome unknown; approved: money returned; released: nothing was refunded. */
  status: 'reserved' | 'approved' | 'released';
}

export const PosRefundLedgerInputSchema = lazy('pos-refund.PosRefundLedgerInputSchema', (z) =>
  z.strictObject({
    original_merchant_ref: merchantRefSchema,
    /** The sale's amount as the requery showed it (lowest unit). */
    sale_amount: z.number().int().positive(),
    currency: z.enum(['NGN', 'USD']),
    /** Carried over continue-as-new. */
    entries: z
      .array(
        z.strictObject({
          merchantRef: z.string().min(1),
          amount: z.number().int().positive(),
          status: z.enum(['reserved', 'approved', 'released']),
        }),
      )
      .default([]),
  }),
);
export type PosRefundLedgerInput = z.input<typeof PosRefundLedgerInputSchema>;

export interface RefundLedgerState {
  originalMerchantRef: string;
  saleAmount: number;
  currency: string;
  /** Approved refunds. */
  refunded: number;
  /** Reserved by refunds whose outcome is not known yet. */
  reserved: number;
  /** What a new refund may still take: saleAmount − refunded − reserved. */
  remaining: number;
  entries: RefundLedgerEntry[];
}

/** What a reservation granted. */
export interface RefundReservation {
  merchantRef: string;
  amount: number;
  saleAmount: number;
  remainingBefore: number;
  remainingAfter: number;
}

/** Reserve a refund's amount (idempotent per refund merchant_ref). The validator refuses it over what is left. */
export const reserveRefundUpdate = defineUpdate<RefundReservation, [{ merchant_ref: string; amount: number }]>(
  'reserveRefund',
);
/** A refund's outcome: approved (money returned) or released (nothing refunded). */
export const settleRefundSignal =
  defineSignal<[{ merchant_ref: string; amount: number; outcome: 'approved' | 'released' }]>('settleRefund');
/** Sent with signalWithStart to make sure the ledger runs; does nothing else. */
export const openRefundLedgerSignal = defineSignal('openRefundLedger');
export const refundLedgerStateQuery = defineQuery<RefundLedgerState>('refundLedgerState');

/** The failure type of a reservation the ledger refused (over what is left). */
export const REFUND_OVER_REMAINING = 'RefundExceedsRemaining';
/** The failure type when the sale's ledger has ended (it never ends by itself): its total cannot be trusted. */
export const REFUND_LEDGER_CLOSED = 'RefundLedgerClosed';

/** The ledger's arithmetic, shared by its validator, its handler and tests. */
export function ledgerTotals(
  saleAmount: number,
  entries: readonly RefundLedgerEntry[],
  except?: string,
): { refunded: number; reserved: number; remaining: number } {
  let refunded = 0;
  let reserved = 0;
  for (const e of entries) {
    if (e.merchantRef === except) continue;
    if (e.status === 'approved') refunded += e.amount;
    else if (e.status === 'reserved') reserved += e.amount;
  }
  return { refunded, reserved, remaining: saleAmount - refunded - reserved };
}
