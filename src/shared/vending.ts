// Electricity vending as workflows, starters and tests see it.
//
//   vendElectricityWorkflow: providers (cached) → meter lookup (checks minimum_vend) → purchase
//   with the lookup's reference → token. An unknown purchase outcome is checked by reference
//   before any new attempt; a retry reuses the reference and is sent only when the lookup proved
//   the first never arrived (src/workflows/steps/send-once.ts). A purchase the service holds as pending
//   is requeried until it is final; one whose outcome cannot be read parks as outcome_unknown
//   and accepts the operator Update resolveOutcome (src/shared/outcome.ts).
import { defineQuery } from '@temporalio/workflow';
import type { z } from 'zod';
import type { OutcomeResolution } from './outcome';
import { lazy } from './lazy';
import { flowReference, required } from './input-error';
import { duration, parkedRequeryOptions } from './duration';
import { merchantEventTargetSchema } from './merchant-event';
import { pickFinal } from './final-statuses';

export const VendInputSchema = lazy('vending.VendInputSchema', (z) =>
  z.strictObject({
    /** The merchant's own reference for this sale (order id). Workflow id: `vend-<order_ref>`. */
    order_ref: flowReference,
    /** Provider code from the provider list (H1), e.g. EKEDC. */
    provider: z
      .string(required('a provider code'))
      .transform((v) => v.trim().toUpperCase())
      .pipe(z.string().regex(/^[A-Z]{2,10}$/, 'must be a provider code such as EKEDC')),
    meter_no: z
      .union([z.string(), z.number()], required('the meter number'))
      .transform((v) => String(v).trim())
      .pipe(z.string().regex(/^\d{6,20}$/, 'must be the meter number (6 to 20 digits)')),
    meter_type: z
      .string(required('prepaid or postpaid'))
      .transform((v) => v.trim().toLowerCase())
      .pipe(z.enum(['prepaid', 'postpaid'], { error: 'must be prepaid or postpaid' })),
    /** Amount to vend, in the unit of the lookup's minimum_vend (whole units; never a fraction). */
    amount: z
      .number(required('a number'))
      .refine((v) => Number.isSafeInteger(v), 'must be a whole amount; a fractional amount is refused, never rounded')
      .refine((v) => v > 0, 'must be greater than 0'),
    /** Receives the token by SMS. */
    phone_number: z
      .string(required('a phone number'))
      .regex(/^\+?\d{7,15}$/, 'must be a phone number (digits, optional leading +)'),
    /** Receives the token by e-mail. */
    email: z.email(required('an e-mail address')),
    /** Where this sale's events go (docs/events.md); the starter resolves it. */
    notify: merchantEventTargetSchema.optional(),
    options: z
      .strictObject({
        /** Purchases in all, the first included; a retry only follows a "not found" by reference. Default 2. */
        maxPurchaseAttempts: z.number().int().min(1, 'must be at least 1').max(3, 'must be at most 3').optional(),
        /** Wait after an unknown outcome before checking by reference. Default 3s. */
        checkSettleDelay: duration.optional(),
        /** Wait before the retry. Default 2s. */
        retryBackoff: duration.optional(),
        /** Deadline of one purchase call. Default 45s. */
        purchaseTimeoutMs: z.number().int().min(100).max(300_000).optional(),
        /** How long the lookup by reference is retried when the service cannot answer. Default 10 minutes. */
        checkTimeout: duration.optional(),
        /** How long a pending purchase is requeried before the sale parks as outcome_unknown. Default 10 minutes. */
        pendingFor: duration.optional(),
        ...parkedRequeryOptions(),
      })
      .optional(),
  }),
);
export type VendInput = z.input<typeof VendInputSchema>;
export type VendParsedInput = z.output<typeof VendInputSchema>;

export const vendWorkflowId = (orderRef: string): string => `vend-${orderRef}`;

export type VendStatus =
  | 'validating'
  | 'looking_up'
  | 'purchasing'
  | 'checking'
  | 'retry_wait'
  /** The service holds the purchase as pending: requeried (H4) until vended or failed. */
  | 'pending'
  | 'vended'
  | 'failed'
  | 'rejected'
  | 'not_vended'
  | 'outcome_unknown';

/**
 * The status a vend shows from its start: its first step. The starter writes it in the start
 * request, so the flow need not upsert it (src/workflows/steps/visible-attributes.ts).
 */
export const VEND_FIRST_STATUS: VendStatus = 'looking_up';

/** Final statuses. outcome_unknown is not one while the flow runs: it is parked, requerying and waiting for resolveOutcome. */
export const VEND_FINAL_STATUSES: readonly VendStatus[] = pickFinal(['vended', 'failed', 'rejected', 'not_vended']);

/** The outcomes an operator may give resolveOutcome for a vend. */
export const VEND_RESOLVE_OUTCOMES = ['vended', 'failed', 'not_vended'] as const;
export type VendResolveOutcome = (typeof VEND_RESOLVE_OUTCOMES)[number];

/** Vending statuses the service may answer that are final; anything else (pending, processing…) is not. */
export function vendRecordOutcome(status: string): 'vended' | 'failed' | 'pending' {
  const s = status.trim().toLowerCase();
  if (s === 'success' || s === 'successful') return 'vended';
  if (s === 'failed' || s === 'failure' || s === 'declined' || s === 'reversed') return 'failed';
  return 'pending';
}

/** The parts of a vending transaction the flow keeps. */
export interface VendRecord {
  reference: string;
  status: string;
  amount: string;
  token?: string;
  units?: string;
  receipt_number?: string;
  meter_number?: string;
  transaction_id?: string;
  createdAt?: string;
}

/** What the provider-list step's failures say first (the one-step lookup's failure names its step by it); flows match on this value, so it stays as recorded histories carry it. */
export const VEND_PROVIDER_LIST_STEP = 'H1 electricity providers';

/** The one-step lookup: the provider is not in the provider list (nothing else was asked), or the meter found (H2). */
export type ListedMeterLookup = { listed: false } | { listed: true; meter: MeterInfo };

export interface MeterInfo {
  reference: string;
  customer_name?: string;
  minimum_vend?: number;
  meter_type?: string;
  provider?: string;
  outstanding_debt?: string;
}

export type VendStep =
  | { op: 'lookup'; outcome: 'found' | 'rejected'; detail?: string }
  | { op: 'purchase'; attempt: number; outcome: 'response' | 'unknown' | 'rejected'; detail?: string }
  | { op: 'check'; attempt: number; outcome: 'found' | 'not_found' | 'error'; detail?: string }
  | { op: 'resolve'; attempt: number; outcome: VendResolveOutcome; detail: string };

export interface VendState {
  orderRef: string;
  status: VendStatus;
  /** The lookup's reference: the purchase's idempotency key, reused by any retry. */
  reference?: string;
  attempt: number;
  steps: VendStep[];
  /** Set when an operator resolved an unknown outcome (resolveOutcome). */
  resolution?: OutcomeResolution<VendResolveOutcome>;
}

export interface VendResult extends VendState {
  status: 'vended' | 'failed' | 'rejected' | 'not_vended' | 'outcome_unknown';
  message: string;
  /** The electricity token (vended only). */
  token?: string;
  meter?: MeterInfo;
  transaction?: VendRecord;
  /** The workflow was cancelled after the purchase may have been sent: the status is what the service said then. */
  cancelRequested?: boolean;
}

export const vendStateQuery = defineQuery<VendState>('vendState');

/** The check by reference (H4): found (the service has the purchase) or not. */
export type VendCheckOutcome = { found: true; transaction: VendRecord } | { found: false };
