// Recurring card charges (a tokenised first payment, then charges of the token, then its cancel): the flows' contract.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CheckoutInput } from './checkout';
import type { OutcomeResolution } from './outcome';
import type { PaymentConfirmation } from './payment-common';
import type { MerchantEventInput } from './merchant-event';

export interface RecurringInput extends MerchantEventInput {
  planRef: string;
  /** Lowest unit, each cycle. */
  amount: number;
  currency: 'NGN' | 'USD';
  email: string;
  /** Time between charges (ms), on durable timers. */
  intervalMs: number;
  /** Stop after this many charges (the first payment included); unlimited when absent. */
  maxCycles?: number;
  /** Cycles per run before continue-as-new. Default 24. */
  cyclesPerRun?: number;
  /** The plan fails after this many failed cycles in a row. Default 3. */
  maxConsecutiveFailures?: number;
  /** Per cycle: how long the webhook may take after a token charge before verify decides. Default 30 s. */
  webhookGraceMs?: number;
  /** Options of the first payment's hosted checkout. */
  checkout?: Partial<
    Pick<
      CheckoutInput,
      'callbackUrl' | 'metadata' | 'expiryMs' | 'webhookGraceMs' | 'customerName' | 'passCharge' | 'subMerchantId'
    >
  >;
}

export interface RecurringCycle {
  cycle: number;
  reference: string;
  status: 'success' | 'failed' | 'expired' | 'unknown';
  confirmedBy?: 'webhook' | 'verify';
  reason?: string;
}

export interface RecurringState {
  planRef: string;
  /**
   * outcome_unknown: the token cancel was refused twice, or kept failing (5xx, timeouts) for about a quarter of an
   * hour: the token may still be live; parked for an operator (resolveOutcome), the cancel still asked in the
   * background after failures.
   */
  status: 'awaiting_first_payment' | 'active' | 'cancelled' | 'completed' | 'failed' | 'outcome_unknown';
  /** Set when an operator resolved a plan parked after the token cancel was refused (resolveOutcome). */
  resolution?: OutcomeResolution;
  /** The card token from the first payment's webhook (payment_information.token_id). */
  tokenId?: string;
  /** Cycles done, the first payment included. */
  cycle: number;
  /** The last cycles (bounded; the whole list lives in the cycles' own workflows). */
  recentCycles: RecurringCycle[];
  consecutiveFailures: number;
  nextChargeAt?: string;
  cancelRequested: boolean;
  /** Set by moveRecurringToScheduleSignal: charges stop here without a token cancel (a Schedule takes over with the token). */
  movedToSchedule?: boolean;
  reason?: string;
}

/**
 * What an operator may say of a plan parked on the token cancel (refused, or failing): `cancelled`, the token was
 * cancelled by hand (or found cancelled); `failed`, the token is still live and could not be cancelled.
 */
export const RECURRING_CANCEL_RESOLVE_OUTCOMES = ['cancelled', 'failed'] as const;

/**
 * The token cancel's answer (A5): the token cancelled by this call, or refused by the service (any 400, its message
 * kept: the token was not cancelled by this call and may still be live).
 */
export type TokenCancelAnswer = { cancelled: true } | { cancelled: false; refusal: string };

export const recurringStateQuery = defineQuery<RecurringState>('recurringState');
/** Stops the plan: no further charge, the token is cancelled (after the first payment, if it is still open). */
export const cancelRecurringSignal = defineSignal('cancelRecurring');
/** Stops the plan's own timer without cancelling the token: a Schedule (src/starters/scheduled-money.ts) charges it from now on. */
export const moveRecurringToScheduleSignal = defineSignal('moveRecurringToSchedule');
export const recurringWorkflowId = (planRef: string): string => `recurring-${planRef}`;
/** The first payment's reference (`<planRef>-C1`) and later cycles' (`-C2`, `-C3`, …): stable per cycle. */
export const cycleReference = (planRef: string, cycle: number): string => `${planRef}-C${cycle}`;

/** One token charge (A4) under a stable reference; its workflow id is paymentWorkflowId(reference). */
export interface TokenChargeInput extends MerchantEventInput {
  reference: string;
  tokenId: string;
  amount: number;
  currency: 'NGN' | 'USD';
  webhookGraceMs?: number;
}

export interface TokenChargeState extends PaymentConfirmation {
  reference: string;
  status: 'checking' | 'charging' | 'confirming' | 'success' | 'failed' | 'expired' | 'unknown' | 'outcome_unknown';
  /** false when verify-first found the reference already at the service (nothing sent). */
  charged: boolean;
}
export const tokenChargeStateQuery = defineQuery<TokenChargeState>('tokenChargeState');
