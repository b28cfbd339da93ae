import type { PaymentSearchFields } from './search-attributes';
// The POS remote request flow's contract (create, then polling), as its workflow, starter and
// tests see it: the input's field rules, the states and results, the signals and the query.
//
// The field rules are zod schemas (zod is deterministic and runs in the workflow sandbox), so the
// starter and the workflow check exactly the same rules.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { z } from 'zod';
import { duration, parkedRequeryOptions } from './duration';
import { flowReference, required, requiredText } from './input-error';
import { lazy, type Zod } from './lazy';
import type { OutcomeResolution } from './outcome';
import { merchantEventTargetSchema } from './merchant-event';
import { pickFinal } from './final-statuses';

const koboInteger = (z: Zod, min: number, minMessage: string) =>
  z
    .number(required('an integer in the lowest currency unit (kobo)'))
    .refine(
      (v) => Number.isSafeInteger(v),
      'must be an integer in the lowest currency unit (kobo); a fractional amount is refused, never rounded',
    )
    .refine((v) => v >= min, minMessage);

export const POS_REMOTE_ACCOUNT_TYPES = ['default', 'savings', 'current', 'credit'] as const;

export const PosRemoteInputSchema = lazy('pos-remote.PosRemoteInputSchema', (z) =>
  z.strictObject({
    /** The merchant's own reference for this payment (order id). Workflow id: `pos-remote-<reference>`. */
    reference: flowReference,
    terminal_id: requiredText(z, 'the terminal id'),
    /** Kobo, greater than 0. */
    amount: koboInteger(z, 1, 'must be greater than 0'),
    currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }).default('NGN'),
    account_type: z
      .string({ error: 'must be default, savings, current or credit' })
      .transform((v) => v.trim().toLowerCase())
      .pipe(z.enum(POS_REMOTE_ACCOUNT_TYPES, { error: 'must be default, savings, current or credit' }))
      .optional(),
    /** Where this request's events go (docs/events.md); the starter resolves it. */
    notify: merchantEventTargetSchema.optional(),
    options: z
      .strictObject({
        /** Spec advice: every 2-3 s. Tests shorten it. */
        pollIntervalMs: z
          .number()
          .int()
          .min(10, 'must be at least 10 ms')
          .max(60_000, 'must be at most 60000 ms')
          .optional(),
        /** Upper bound of the whole polling (the request lives 5 minutes). Default 7 minutes. */
        pollTimeout: duration.optional(),
        /**
         * A 404 that follows a stretch without any requery answer longer than this (or the first answer
         * after a lost worker) is reported as expired_unobserved: the request may have completed and
         * been deleted meanwhile. Default 30000 ms.
         */
        unobservedGapMs: z.number().int().min(100).max(600_000).optional(),
        /** Heartbeat timeout of the polling activity: how fast a dead worker is noticed and a cancel arrives (heartbeats are sent every 0.8 × this). Default 10s. */
        heartbeatTimeout: duration.optional(),
        /** Heartbeat timeout of the create's activity while its HTTP call is open: a killed worker's create is noticed this fast. Default 5s. */
        createHeartbeatTimeout: duration.optional(),
        /** The request's lifetime (spec: 5 minutes). A requery 404 before it ended (counted from creation) is an error, not expiry. */
        requestLifetime: duration.optional(),
        /** After a lost create answer the service's records are searched until lifetime + this grace. Default 2 minutes. */
        searchGrace: duration.optional(),
        /** Wait between two searches of the service's records after a lost create answer. Default 5s. */
        searchInterval: duration.optional(),
        /**
         * A lost create answer whose request the service's transaction records (A6) never showed, read successfully
         * after its lifetime + grace: 'outcome_unknown' (default: parked, the safe reading for a real
         * service, whose transaction list is not documented to list remote requests) or 'not_sent' (only for a
         * deployment whose transaction list shows every remote request from its creation, such as the sandbox:
         * POS_REMOTE_IN_TRANSACTION_LIST=true; docs/choices.md). The starter sets it from the config.
         */
        lostCreateAbsentIs: z.enum(['not_sent', 'outcome_unknown']).optional(),
        ...parkedRequeryOptions(),
        /** How long to wait for the terminal (another request holds it) before giving up with nothing sent. Default 15 minutes. */
        lockTimeout: duration.optional(),
        /** How often the terminal lock checks that its holder still runs (only used by the flow that starts the lock). Default 60s. */
        lockCheckInterval: duration.optional(),
      })
      .optional(),
  }),
);
export type PosRemoteInput = z.input<typeof PosRemoteInputSchema>;
export type PosRemoteParsedInput = z.output<typeof PosRemoteInputSchema>;

export const posRemoteWorkflowId = (reference: string): string => `pos-remote-${reference}`;

export type PosRemoteStatus =
  /** Waiting for the terminal: another remote request holds it (one open request per terminal). */
  | 'locking'
  | 'creating'
  /** The create's answer was lost after it may have been processed: the service's records are searched. */
  | 'searching'
  | 'pending'
  | 'success'
  | 'failed'
  | 'expired'
  | 'cancelling'
  | 'cancelled'
  | 'rejected'
  | 'create_outcome_unknown'
  | 'expired_unobserved'
  | 'poll_error'
  /** The caller cancelled, but the payer approved on the terminal afterwards: money moved. */
  | 'success_after_cancel'
  /** A lost create answer whose request could not be found (or not told apart) within lifetime + grace. */
  | 'outcome_unknown'
  /** Nothing was sent: the create failed before it left, or the terminal stayed busy, or the baseline could not be read. */
  | 'not_sent';

/**
 * The statuses at which the service could not say whether money moved: the flow stays open (parked),
 * looks the request up again on a backoff and takes the operator's resolveOutcome.
 */
export const POS_REMOTE_PARKED_STATUSES = ['outcome_unknown', 'poll_error', 'expired_unobserved'] as const;

/** The outcomes an operator may give a parked remote request (resolveOutcome). */
export const POS_REMOTE_RESOLVE_OUTCOMES = ['success', 'failed', 'expired'] as const;

export const POS_REMOTE_FINAL_STATUSES: readonly PosRemoteStatus[] = pickFinal([
  'success',
  'failed',
  'expired',
  'expired_unobserved',
  'cancelled',
  'rejected',
  'create_outcome_unknown',
  'poll_error',
  'success_after_cancel',
  'outcome_unknown',
  'not_sent',
]);

/** The requery's full record (status success | failed), as the API client parsed it. */
export type PosRemoteRecord = Record<string, unknown> & {
  status: 'success' | 'failed';
  response_code?: string;
  amount?: number;
};

export interface PosRemoteState {
  reference: string;
  status: PosRemoteStatus;
  requestRef?: string;
  amount: number;
  /** Human-readable detail of a final non-success state. */
  message?: string;
  /** Workflow time (ms) by which the request surely existed: the create's answer, or the failure of a lost create. Its lifetime counts from here. */
  createdAt?: number;
  /** The request_ref was found in the service's transaction records after the create's answer was lost. */
  recovered?: boolean;
  /** The caller asked to cancel (the request itself cannot be withdrawn). */
  cancelRequested?: boolean;
  /** Create requests sent (more than 1 only after attempts that provably never left). */
  createAttempts?: number;
  /** Set when an operator resolved a parked request (resolveOutcome). */
  resolution?: OutcomeResolution;
}

export interface PosRemoteResult extends PosRemoteState {
  status: Exclude<PosRemoteStatus, 'creating' | 'pending' | 'cancelling' | 'locking' | 'searching'>;
  /** The full requery record when the terminal completed the payment (success or failed). */
  record?: PosRemoteRecord;
  /** Requeries made by the polling activity, over all its attempts (as far as its heartbeats recorded). */
  polls?: number;
  /** Attempts of the polling activity: more than 1 when a worker was lost and another resumed. */
  pollAttempts?: number;
}

/** What the polling activity returns. */
export type PosRemotePollOutcome =
  | { status: 'success' | 'failed'; record: PosRemoteRecord; polls: number; attempt: number }
  /** unobserved: the request was not watched right before the 404 (lost worker, long outage). */
  | { status: 'expired'; polls: number; attempt: number; unobserved?: boolean; unobservedMs?: number };

/** Heartbeat details of the polling activity: a retried attempt continues from them. */
export interface PosRemotePollProgress {
  polls: number;
  startedAt: number;
  lastStatus?: string;
  /** Wall-clock ms of the last requery answer (pending) this flow saw. */
  lastObservedAt?: number;
  /** Requery 404s before the request's lifetime ended (errors, not expiry). */
  earlyNotFound?: number;
}

export const posRemoteStateQuery = defineQuery<PosRemoteState>('posRemoteState');
/**
 * Cancels the payment on our side. The request cannot be withdrawn (no such call), so the flow
 * keeps watching it until its lifetime ends: cancelled, or success_after_cancel when the payer
 * approved anyway.
 */
export const cancelPosRemoteSignal = defineSignal<[{ reason?: string }?]>('cancelPosRemote');
/**
 * Sent by the create's activity, and acknowledged by the server, right before the HTTP call: after it, the create
 * may have reached the service and is never sent again; without it, it provably never left.
 */
export const posRemoteCreateSendingSignal =
  defineSignal<[{ activityId: string; attempt: number }]>('posRemoteE1Sending');

/** Pages of 100 rows a POS remote request reads of the transaction list (two days around now) at most. */
export const POS_REMOTE_RECORDS_MAX_PAGES = 20;

/**
 * What the search of the service's transaction records found for a lost create answer. `incomplete`:
 * The list had more than POS_REMOTE_RECORDS_MAX_PAGES pages, so nothing can be told from what was read.
 */
export type PosRemoteSearchOutcome =
  | { kind: 'incomplete'; scanned: number }
  | { kind: 'none'; scanned: number }
  | { kind: 'one'; request_ref: string; status: string }
  | { kind: 'many'; request_refs: string[] };

/** The final look at the service's transaction record, by reference (A6), after a 404 or a cancel. */
export type PosRemoteRecordLookup =
  | { found: false }
  | {
      found: true;
      status: string;
      record: PosRemoteRecord | { status: string; transaction_ref: string; amount?: number; created_at?: string };
    };

/** How the sandbox (docs/choices.md) marks a POS remote request in the transaction list's meta_data: source and terminal. */
export const POS_REMOTE_TXN_SOURCE = 'pos_remote';

/** A POS remote request's search attributes at its start (the starter's and the Nexus operation's). */
export const posRemoteStartSearch = (v: {
  reference: string;
  amount: number;
  currency?: string;
}): PaymentSearchFields => ({
  flow: 'pos-remote',
  reference: v.reference,
  status: 'creating',
  amount: v.amount,
  currency: v.currency,
});
