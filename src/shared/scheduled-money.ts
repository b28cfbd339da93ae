// Recurring money on Temporal Schedules: recurring card charges (on a token, A4) and fixed mandate
// debits (through the mandate flow, D3), each run a workflow whose money request is keyed by the
// run's nominal period, so a catch-up, a backfill or a double trigger never moves money for a
// period twice.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Set by the server on every workflow a Schedule starts: the run's nominal (scheduled) time. */
export const TemporalScheduledStartTime = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);

/** The period key of a nominal time: UTC to the minute, e.g. 202611230900 (sortable, reference-safe). */
export function periodKey(nominal: Date): string {
  return nominal.toISOString().slice(0, 16).replace(/[-:T]/g, '');
}

export interface ScheduledChargeInput {
  planRef: string;
  tokenId: string;
  /** Lowest unit. */
  amount: number;
  currency: 'NGN' | 'USD';
  webhookGraceMs?: number;
  /** Only when started by hand (not by the Schedule): the period this run is for (ISO). */
  period?: string;
}

export interface ScheduledMandateDebitInput {
  mandateRef: string;
  /** Lowest unit (kobo). */
  amount: number;
  narration?: string;
  /** Only when started by hand: the period this run is for (ISO). */
  period?: string;
}

/** What one scheduled run did. */
export interface ScheduledRunResult {
  period: string;
  /** The money request's reference (A4) or idempotency key (D3). */
  reference: string;
  /** charged / debited / failed / expired / unknown: the request's outcome; duplicate: another run holds this period. */
  status: string;
  reason?: string;
}

/** The token charge's reference of one period: `<planRef>-S<yyyyMMddHHmm>`; its workflow id is paymentWorkflowId(reference). */
export const scheduledChargeReference = (planRef: string, nominal: Date): string => `${planRef}-S${periodKey(nominal)}`;
/** The mandate debit's idempotency key of one period. */
export const scheduledDebitKey = (nominal: Date): string => `S${periodKey(nominal)}`;

export const recurringChargeScheduleId = (planRef: string): string => `recurring-schedule-${planRef}`;
export const mandateDebitScheduleId = (mandateRef: string): string => `mandate-debit-schedule-${mandateRef}`;
