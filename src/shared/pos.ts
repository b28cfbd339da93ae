// POS flows as workflows, starters and tests see them: inputs, results, states, and the
// signals and queries, defined once.
//
//   posRemoteRequestWorkflow      E1 create + E2 polling (in a heartbeating activity)
//   posTerminalTransactionWorkflow F3 initiate + F4 requery, "never retry without requerying"
//
// The terminal session (F1 configuration, F2 key exchange) is deliberately NOT a workflow:
// `pin_key` would land in workflow history. See src/starters/pos.ts and docs/flows-pos-vending.md.
// The card read (PAN, expiry, cardholder name, card sequence number, track2, chip data, PIN
// block) never enters a workflow either: the starter checks every F3 rule on the full request,
// seals those fields together into the claim-check store (purpose 'pos-card'), and starts the
// workflow with PosSealedTransactionInput: the handle, BIN and last four, and the other fields.
//
// The field rules live here as zod schemas (zod is deterministic and runs in the workflow
// sandbox), so the starters and the workflows check exactly the same rules.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { z } from 'zod';
import { CLAIM_HANDLE_PATTERN } from './claim-check';
import type { OutcomeResolution } from './outcome';
import { duration } from './duration';
import type { InputIssue } from './input-error';
import { merchantRef, POS_CARD_FIELDS, posAccountType, posTransactionType } from './pos-card-fields';
import { lazy, type Zod } from './lazy';

const koboInteger = (z: Zod, min: number, minMessage: string) =>
  z
    .number({
      error: (iss) =>
        iss.input === undefined ? 'is required' : 'must be an integer in the lowest currency unit (kobo)',
    })
    .refine(
      (v) => Number.isSafeInteger(v),
      'must be an integer in the lowest currency unit (kobo); a fractional amount is refused, never rounded',
    )
    .refine((v) => v >= min, minMessage);

const requiredText = (z: Zod, what: string) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : `must be ${what}`) })
    .trim()
    .min(1, 'must not be empty');

// ---- E. POS remote request ------------------------------------------------------------------

export const POS_REMOTE_ACCOUNT_TYPES = ['default', 'savings', 'current', 'credit'] as const;

export const PosRemoteInputSchema = lazy('pos.PosRemoteInputSchema', (z) =>
  z.strictObject({
    /** The merchant's own reference for this payment (order id). Workflow id: `pos-remote-<reference>`. */
    reference: z
      .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
      .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1 to 100 letters, digits, "_", "-" or "."'),
    terminal_id: requiredText(z, 'the terminal id'),
    /** Kobo, greater than 0. */
    amount: koboInteger(z, 1, 'must be greater than 0'),
    currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }).default('NGN'),
    account_type: z
      .string({ error: 'must be default, savings, current or credit' })
      .transform((v) => v.trim().toLowerCase())
      .pipe(z.enum(POS_REMOTE_ACCOUNT_TYPES, { error: 'must be default, savings, current or credit' }))
      .optional(),
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
         * A 404 that follows a stretch without any E2 answer longer than this (or the first answer
         * after a lost worker) is reported as expired_unobserved: the request may have completed and
         * been deleted meanwhile. Default 30000 ms.
         */
        unobservedGapMs: z.number().int().min(100).max(600_000).optional(),
        /** Heartbeat timeout of the polling activity: how fast a dead worker is noticed and a cancel arrives (heartbeats are sent every 0.8 × this). Default 10s. */
        heartbeatTimeout: duration.optional(),
        /** Heartbeat timeout of E1's activity while its HTTP call is open: a killed worker's E1 is noticed this fast. Default 5s. */
        createHeartbeatTimeout: duration.optional(),
        /** The request's lifetime (spec: 5 minutes). An E2 404 before it ended (counted from creation) is an error, not expiry. */
        requestLifetime: duration.optional(),
        /** After a lost E1 answer the service's records are searched until lifetime + this grace. Default 2 minutes. */
        searchGrace: duration.optional(),
        /** Wait between two searches of the service's records after a lost E1 answer. Default 5s. */
        searchInterval: duration.optional(),
        /**
         * A lost E1 answer whose request the service's records (A6) never showed, read successfully
         * after its lifetime + grace: 'not_sent' (default; A6 lists every remote request from its
         * creation, docs/choices.md, so its absence proves E1 never arrived and nobody could pay) or
         * 'outcome_unknown' (for a service whose A6 does not list remote requests).
         */
        lostCreateAbsentIs: z.enum(['not_sent', 'outcome_unknown']).optional(),
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
  /** E1's answer was lost after it may have been processed: the service's records are searched. */
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
  /** A lost E1 answer whose request could not be found (or not told apart) within lifetime + grace. */
  | 'outcome_unknown'
  /** Nothing was sent: E1 failed before it left, or the terminal stayed busy, or the baseline could not be read. */
  | 'not_sent';

export const POS_REMOTE_FINAL_STATUSES: readonly PosRemoteStatus[] = [
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
];

/** E2's full record (status success | failed), as the API client parsed it. */
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
  /** Workflow time (ms) by which the request surely existed: E1's answer, or the failure of a lost E1. Its lifetime counts from here. */
  createdAt?: number;
  /** The request_ref was found in the service's transaction records after E1's answer was lost. */
  recovered?: boolean;
  /** The caller asked to cancel (the request itself cannot be withdrawn). */
  cancelRequested?: boolean;
  /** E1 requests sent (more than 1 only after attempts that provably never left). */
  createAttempts?: number;
}

export interface PosRemoteResult extends PosRemoteState {
  status: Exclude<PosRemoteStatus, 'creating' | 'pending' | 'cancelling' | 'locking' | 'searching'>;
  /** The full E2 record when the terminal completed the payment (success or failed). */
  record?: PosRemoteRecord;
  /** E2 calls made by the polling activity, over all its attempts (as far as its heartbeats recorded). */
  polls?: number;
  /** Attempts of the polling activity: more than 1 when a worker was lost and another resumed. */
  pollAttempts?: number;
}

/** What the polling activity returns. */
export type PosRemotePollOutcome =
  | { status: 'success' | 'failed'; record: PosRemoteRecord; polls: number; attempt: number }
  /** unobserved: E2 was not watched right before the 404 (lost worker, long outage). */
  | { status: 'expired'; polls: number; attempt: number; unobserved?: boolean; unobservedMs?: number };

/** Heartbeat details of the polling activity: a retried attempt continues from them. */
export interface PosRemotePollProgress {
  polls: number;
  startedAt: number;
  lastStatus?: string;
  /** Wall-clock ms of the last E2 answer (pending) this flow saw. */
  lastObservedAt?: number;
  /** E2 404s before the request's lifetime ended (errors, not expiry). */
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
 * Sent by E1's activity, and acknowledged by the server, right before the HTTP call: after it, E1
 * may have reached the service and is never sent again; without it, E1 provably never left.
 */
export const posRemoteE1SendingSignal = defineSignal<[{ activityId: string; attempt: number }]>('posRemoteE1Sending');

/** Pages of 100 rows a POS remote request reads of A6 (two days around now) at most. */
export const POS_REMOTE_A6_MAX_PAGES = 20;

/**
 * What the search of the service's transaction records found for a lost E1 answer. `incomplete`:
 * A6 listed more than POS_REMOTE_A6_MAX_PAGES pages, so nothing can be told from what was read.
 */
export type PosRemoteSearchOutcome =
  | { kind: 'incomplete'; scanned: number }
  | { kind: 'none'; scanned: number }
  | { kind: 'one'; request_ref: string; status: string }
  | { kind: 'many'; request_refs: string[] };

/** The final look at the service's transaction record (A6 by reference) after a 404 or a cancel. */
export type PosRemoteRecordLookup =
  | { found: false }
  | {
      found: true;
      status: string;
      record: PosRemoteRecord | { status: string; transaction_ref: string; amount?: number; created_at?: string };
    };

/** How the sandbox (docs/choices.md) marks a POS remote request in A6's meta_data: source and terminal. */
export const POS_REMOTE_TXN_SOURCE = 'pos_remote';

// ---- Terminal lock: one open remote request per terminal ---------------------------------

/** The lock's workflow id: per terminal, and per task queue (one deployment's flows share a lock; separate deployments or test runs on one server do not). */
export const posTerminalLockWorkflowId = (terminalId: string, taskQueue?: string): string =>
  taskQueue === undefined ? `pos-terminal-lock-${terminalId}` : `pos-terminal-lock-${taskQueue}-${terminalId}`;

export const PosTerminalLockInputSchema = lazy('pos.PosTerminalLockInputSchema', (z) =>
  z.strictObject({
    terminal_id: requiredText(z, 'the terminal id'),
    /** How often the holder is checked (a signal to it fails once it is closed). */
    checkIntervalMs: z.number().int().min(100).max(3_600_000).default(60_000),
    /** Request refs of recent holders (carried over continue-as-new). */
    recent: z.array(z.string()).max(50).default([]),
    /** Waiting holders (carried over continue-as-new). */
    queue: z.array(z.strictObject({ workflowId: z.string().min(1), runId: z.string().min(1) })).default([]),
  }),
);
export type PosTerminalLockInput = z.input<typeof PosTerminalLockInputSchema>;

export interface TerminalLockHolder {
  workflowId: string;
  runId: string;
}
/** To the lock: queue me (idempotent). */
export const acquireTerminalLockSignal = defineSignal<[TerminalLockHolder]>('acquireTerminalLock');
/** To the lock: I am done (or gave up waiting); request_ref is what my request was, if known. */
export const releaseTerminalLockSignal =
  defineSignal<[TerminalLockHolder & { requestRef?: string }]>('releaseTerminalLock');
/** To the holder: the terminal is yours. recentRefs: requests of earlier holders (never ours). */
export const terminalLockGrantedSignal =
  defineSignal<[{ terminalId: string; recentRefs: string[] }]>('terminalLockGranted');
/** To the holder: a liveness check; a closed holder makes the signal fail and the lock moves on. */
export const terminalLockCheckSignal = defineSignal('terminalLockCheck');
export interface TerminalLockState {
  terminalId: string;
  holder?: TerminalLockHolder;
  queue: TerminalLockHolder[];
  recent: string[];
}
export const terminalLockStateQuery = defineQuery<TerminalLockState>('terminalLockState');

// ---- F. POS terminal transaction ------------------------------------------------------------

export { MERCHANT_REF_MAX, POS_ACCOUNT_TYPES, POS_TRANSACTION_TYPES } from './pos-card-fields';

/**
 * F3's body fields (spec F3 table and Limits) plus options. Every rule is checked before the
 * first request: by the starter, and again by the workflow as its first step.
 */
export const PosTransactionInputSchema = lazy('pos.PosTransactionInputSchema', (z) =>
  z.strictObject({
    /** From F1 (the terminal session). */
    terminal_id: requiredText(z, 'the terminal id from F1'),
    /** Lowest unit; an integer or a string of digits; sent as a string. */
    amount: z
      .union([z.number(), z.string()], {
        error: (iss) => (iss.input === undefined ? 'is required' : 'must be an integer amount in the lowest unit'),
      })
      .superRefine((v, ctx) => {
        const ok = typeof v === 'number' ? Number.isSafeInteger(v) : /^\d+$/.test(v) && Number.isSafeInteger(Number(v));
        if (!ok)
          ctx.addIssue({
            code: 'custom',
            message: 'must be an integer in the lowest currency unit; a fractional amount is refused, never rounded',
          });
        else if (Number(v) <= 0) ctx.addIssue({ code: 'custom', message: 'must be greater than 0' });
      })
      .transform((v) => String(Number(v))),
    currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }).default('NGN'),
    ...POS_CARD_FIELDS,
    transaction_type: posTransactionType,
    account_type: posAccountType,
    merchant_ref: merchantRef,
    options: z
      .strictObject({
        /** Initiations in all, the first included (a retry only ever follows a 404 requery). Default 3. */
        maxAttempts: z.number().int().min(1, 'must be at least 1').max(5, 'must be at most 5').optional(),
        /** Wait before the first retry; doubles each time. Default 2s. */
        retryBackoff: duration.optional(),
        /** Wait after an unknown outcome before requerying, so an in-flight request can land. Default 3s. */
        requerySettleDelay: duration.optional(),
        /** Deadline of one F3 call (the client's timeout). Default 45s. */
        initiateTimeoutMs: z.number().int().min(100).max(300_000).optional(),
        /** How long F4 is retried when the service cannot answer before the flow parks as outcome_unknown. Default 10 minutes. */
        requeryTimeout: duration.optional(),
        /** How long a parked unknown outcome keeps being requeried (the flow then waits for resolveOutcome). Default 24h. */
        unknownRequeryFor: duration.optional(),
        /** First wait between requeries of a parked unknown outcome; doubles each time. Default 10s. */
        requeryBackoff: duration.optional(),
        /** Cap of that wait. Default 10 minutes. */
        requeryMaxBackoff: duration.optional(),
      })
      .optional(),
  }),
);
export type PosTransactionInput = z.input<typeof PosTransactionInputSchema>;
export type PosTransactionParsedInput = z.output<typeof PosTransactionInputSchema>;

/** The F3 options every terminal flow takes (sale, refund, pre-authorisation and its completion). */
export const PosTransactionOptionsSchema = lazy('pos.PosTransactionOptionsSchema', () =>
  PosTransactionInputSchema.shape.options.unwrap(),
);
export type PosTransactionOptions = z.output<typeof PosTransactionOptionsSchema>;

/** A merchant_ref as F3 takes it (spec: merchant-unique, at most 25 characters). */
export const merchantRefSchema = lazy('pos.merchantRefSchema', () => PosTransactionInputSchema.shape.merchant_ref);

/**
 * Refund and Completion name the transaction they refer to with `original_merchant_ref`; Purchase
 * and Pre-Authorization never do. The spec does not show the field: our choice (docs/choices.md),
 * equal to the API client's rule (src/api/schemas/pos.ts; a test keeps them equal).
 */
export function linkedTransactionIssues(v: {
  transaction_type: string;
  merchant_ref: string;
  original_merchant_ref?: string;
}): InputIssue[] {
  const linked = v.transaction_type === 'Refund' || v.transaction_type === 'Completion';
  if (linked && v.original_merchant_ref === undefined)
    return [
      {
        field: 'original_merchant_ref',
        rule: 'is required for Refund and Completion (the merchant_ref of the sale or pre-authorisation)',
      },
    ];
  if (!linked && v.original_merchant_ref !== undefined)
    return [{ field: 'original_merchant_ref', rule: 'is only for Refund and Completion' }];
  if (linked && v.original_merchant_ref === v.merchant_ref)
    return [{ field: 'original_merchant_ref', rule: 'must differ from merchant_ref (each transaction has its own)' }];
  return [];
}

/** The F3 body as any of the terminal flows sends it (no options): the sale's fields and `original_merchant_ref`, with the link rule. */
export const PosTransactionRequestSchema = lazy('pos.PosTransactionRequestSchema', () =>
  PosTransactionInputSchema.omit({ options: true })
    .extend({ original_merchant_ref: merchantRefSchema.optional() })
    .superRefine((v, ctx) => {
      for (const i of linkedTransactionIssues(v)) ctx.addIssue({ code: 'custom', path: [i.field], message: i.rule });
    }),
);
/** The F3 request the API client sends (no options); the initiating activity rebuilds it from the sealed card. */
export type PosInitiateRequest = Omit<PosTransactionParsedInput, 'options'>;

/** The card-read fields sealed together (purpose 'pos-card') by the starter; never in a workflow input. */
export const POS_SEALED_FIELDS = [
  'card_pan',
  'card_expiry_month',
  'card_expiry_year',
  'cardholder_name',
  'card_sequence_number',
  'track2',
  'chipdata',
  'pin_block',
] as const;
export type PosSealedField = (typeof POS_SEALED_FIELDS)[number];
/** What the claim-check record holds. */
export type PosSealedCardData = Pick<PosTransactionParsedInput, PosSealedField>;

/** The card as the workflow knows it: the handle of the sealed card read, and what may be shown (BIN, last four). */
export const PosSealedCardSchema = lazy('pos.PosSealedCardSchema', (z) =>
  z.strictObject({
    handle: z
      .string({ error: 'must be the claim-check handle the starter made' })
      .regex(
        CLAIM_HANDLE_PATTERN,
        'must be the claim-check handle the starter made (card data is sealed, never sent to the workflow)',
      ),
    bin: z
      .string({ error: 'must be the first six digits of the PAN' })
      .regex(/^\d{6}$/, 'must be the first six digits of the PAN'),
    last4: z
      .string({ error: 'must be the last four digits of the PAN' })
      .regex(/^\d{4}$/, 'must be the last four digits of the PAN'),
  }),
);
export type PosSealedCard = z.output<typeof PosSealedCardSchema>;

/** The display form of a sealed card: BIN and last four, the middle masked. */
export const maskedPan = (card: Pick<PosSealedCard, 'bin' | 'last4'>): string => `${card.bin}******${card.last4}`;

const sealedOmit = Object.fromEntries(POS_SEALED_FIELDS.map((f) => [f, true])) as { [K in PosSealedField]: true };

/** The workflow input: the F3 fields without the card read, plus the sealed card. */
export const PosSealedTransactionInputSchema = lazy('pos.PosSealedTransactionInputSchema', () =>
  PosTransactionInputSchema.omit(sealedOmit).extend({
    card: PosSealedCardSchema,
  }),
);
export type PosSealedTransactionInput = z.input<typeof PosSealedTransactionInputSchema>;
export type PosSealedTransactionParsedInput = z.output<typeof PosSealedTransactionInputSchema>;
/** What the initiating activity receives: the F3 request with the card as a handle. */
export type PosSealedInitiateRequest = Omit<PosSealedTransactionParsedInput, 'options'>;
/** The same for a Refund or Completion: it names its original (`original_merchant_ref`). */
export type PosLinkedInitiateRequest = PosSealedInitiateRequest & { original_merchant_ref?: string };

/** Card-read fields found in a workflow input (each is a rule broken; values never named). */
export function unsealedCardFields(raw: unknown): InputIssue[] {
  if (!raw || typeof raw !== 'object') return [];
  return POS_SEALED_FIELDS.filter((f) => f in raw).map((f) => ({
    field: f,
    rule: 'must not be in the workflow input: start with startPosTransaction, which seals the card read',
  }));
}

export const posTransactionWorkflowId = (merchantRef: string): string => `pos-txn-${merchantRef}`;

/** The parts of an F3/F4 transaction the flow keeps (no card data beyond the masked PAN). */
export interface PosTransactionRecord {
  status: 'success' | 'failed';
  response_code: string;
  response_message?: string;
  amount: number;
  currency?: string;
  merchant_ref?: string;
  transaction_reference?: string;
  terminal_id?: string;
  rrn?: string;
  stan?: string;
  receipt_no?: string;
  card_pan_masked?: string;
  card_type?: string;
  created_at?: string;
  /** Purchase, Refund, Pre-Authorization or Completion (as the service recorded it). */
  transaction_type?: string;
}

export type PosTransactionStatus =
  | 'validating'
  | 'initiating'
  | 'requerying'
  | 'retry_wait'
  | 'approved'
  | 'declined'
  | 'rejected'
  | 'not_received'
  | 'outcome_unknown'
  /** The sealed card read expired (or was used) before F3 could be sent: nothing was sent, nothing charged. */
  | 'card_data_unavailable';

/** Final statuses. outcome_unknown is not one while the flow runs: it is parked, requerying and waiting for resolveOutcome. */
export const POS_TRANSACTION_FINAL_STATUSES: readonly PosTransactionStatus[] = [
  'approved',
  'declined',
  'rejected',
  'not_received',
  'card_data_unavailable',
];

/** The outcomes an operator may give resolveOutcome (src/shared/outcome.ts) for a POS sale. */
export const POS_RESOLVE_OUTCOMES = ['approved', 'declined', 'not_received'] as const;
export type PosResolveOutcome = (typeof POS_RESOLVE_OUTCOMES)[number];

/** One step of the flow, in order: the record that proves "never retry without requerying". */
export type PosStep =
  | {
      op: 'initiate';
      attempt: number;
      outcome: 'response' | 'unknown' | 'rejected';
      response_code?: string;
      detail?: string;
    }
  | {
      op: 'requery';
      attempt: number;
      outcome: 'found' | 'not_found' | 'error';
      response_code?: string;
      detail?: string;
    }
  | { op: 'resolve'; attempt: number; outcome: PosResolveOutcome; detail: string; response_code?: undefined };

export interface PosTransactionState {
  merchantRef: string;
  status: PosTransactionStatus;
  /** F3 requests sent (a sealed card that no longer opened sent none). */
  attempt: number;
  steps: PosStep[];
  /** The masked PAN (BIN and last four) of a sealed card read. */
  card?: { maskedPan: string };
  /** Set when an operator resolved an unknown outcome (resolveOutcome). */
  resolution?: OutcomeResolution<PosResolveOutcome>;
}

export interface PosTransactionResult extends PosTransactionState {
  status: 'approved' | 'declined' | 'rejected' | 'not_received' | 'outcome_unknown' | 'card_data_unavailable';
  /** What to show or do next (spec: 51 ask for another card, 55 retry with a fresh card read...). */
  action: string;
  responseCode?: string;
  transaction?: PosTransactionRecord;
  /** The workflow was cancelled after F3 may have been sent: the status is what F4 said then. */
  cancelRequested?: boolean;
}

export const posTransactionStateQuery = defineQuery<PosTransactionState>('posTransactionState');

/** The initiating activity's outcome when the service answered (F3 200). */
export interface PosInitiateResponse {
  transaction: PosTransactionRecord;
}

/** The requery activity's outcome: found (the service has it) or not found (404: never received). */
export type PosRequeryOutcome = { found: true; transaction: PosTransactionRecord } | { found: false };

/**
 * The spec's processor codes (F3): 00 approved; 51 and 55 declined with their action; 91 and 96
 * unknown until requeried; any other code declined with the processor's message. Mirrors
 * src/api/pos-codes.ts (workflows may not import the client); a test keeps them equal.
 */
export function classifyPosCode(
  code: string,
  processorMessage?: string,
): { outcome: 'approved' | 'declined' | 'unknown'; action: string } {
  const c = String(code ?? '').trim();
  switch (c) {
    case '00':
      return { outcome: 'approved', action: 'Approved: complete the sale' };
    case '51':
      return { outcome: 'declined', action: 'Insufficient funds: ask for another card' };
    case '55':
      return { outcome: 'declined', action: 'Incorrect PIN: retry with a fresh card read' };
    case '91':
      return { outcome: 'unknown', action: 'Issuer or switch unavailable' };
    case '96':
      return { outcome: 'unknown', action: 'System malfunction' };
    case '':
      return { outcome: 'unknown', action: 'No response code: requery by merchant_ref' };
    default: {
      const msg = processorMessage?.trim();
      return { outcome: 'declined', action: msg ? `Declined (${c}): ${msg}` : `Declined by the processor (code ${c})` };
    }
  }
}
