import type { PaymentSearchFields } from './search-attributes';
// The POS terminal transaction flow's contract (the transaction, then its requery: "never retry without
// requerying"), as its workflow, starter and tests see it; the refund and pre-authorisation flows
// build on its field rules.
//
// The terminal session (configuration and key exchange) is deliberately NOT a workflow:
// `pin_key` would land in workflow history. See src/starters/pos-terminal.ts and docs/flows-pos-vending.md.
// The card read (PAN, expiry, cardholder name, card sequence number, track2, chip data, PIN
// block) never enters a workflow either: the starter checks every field rule on the full request,
// seals those fields together into the claim-check store (purpose 'pos-card'), and starts the
// workflow with PosSealedTransactionInput: the handle, BIN and last four, and the other fields.
//
// The field rules live here as zod schemas (zod is deterministic and runs in the workflow
// sandbox), so the starters and the workflows check exactly the same rules.
import { defineQuery } from '@temporalio/workflow';
import type { z } from 'zod';
import { CLAIM_HANDLE_PATTERN } from './claim-check';
import type { OutcomeResolution } from './outcome';
import { duration, parkedRequeryOptions } from './duration';
import { required, type InputIssue } from './input-error';
import { merchantRef, POS_CARD_FIELDS, posAccountType, posTransactionType, requiredText } from './pos-card-fields';
import { lazy } from './lazy';
import { merchantEventTargetSchema } from './merchant-event';
import { pickFinal } from './final-statuses';

export { MERCHANT_REF_MAX, POS_ACCOUNT_TYPES, POS_TRANSACTION_TYPES } from './pos-card-fields';

/**
 * The transaction's body fields (the spec's table, F3, and Limits) plus options. Every rule is checked before the
 * first request: by the starter, and again by the workflow as its first step.
 */
export const PosTransactionInputSchema = lazy('pos-terminal.PosTransactionInputSchema', (z) =>
  z.strictObject({
    /** From the terminal configuration (the terminal session). */
    terminal_id: requiredText(z, 'the terminal id from the terminal configuration'),
    /** Lowest unit; an integer or a string of digits; sent as a string. */
    amount: z
      .union([z.number(), z.string()], required('an integer amount in the lowest unit'))
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
    /** Where this transaction's events go (docs/events.md); the starter resolves it. Never sent to the service. */
    notify: merchantEventTargetSchema.optional(),
    options: z
      .strictObject({
        /** Initiations in all, the first included (a retry only ever follows a 404 requery). Default 3. */
        maxAttempts: z.number().int().min(1, 'must be at least 1').max(5, 'must be at most 5').optional(),
        /** Wait before the first retry; doubles each time. Default 2s. */
        retryBackoff: duration.optional(),
        /** Wait after an unknown outcome before requerying, so an in-flight request can land. Default 3s. */
        requerySettleDelay: duration.optional(),
        /** Deadline of one transaction call (the client's timeout). Default 45s. */
        initiateTimeoutMs: z.number().int().min(100).max(300_000).optional(),
        /** How long the requery is retried when the service cannot answer before the flow parks as outcome_unknown. Default 10 minutes. */
        requeryTimeout: duration.optional(),
        ...parkedRequeryOptions(),
      })
      .optional(),
  }),
);
export type PosTransactionInput = z.input<typeof PosTransactionInputSchema>;
export type PosTransactionParsedInput = z.output<typeof PosTransactionInputSchema>;

/** The options every terminal flow takes (sale, refund, pre-authorisation and its completion). */
export const PosTransactionOptionsSchema = lazy('pos-terminal.PosTransactionOptionsSchema', () =>
  PosTransactionInputSchema.shape.options.unwrap(),
);
export type PosTransactionOptions = z.output<typeof PosTransactionOptionsSchema>;

/** A merchant_ref as the transaction takes it (spec: merchant-unique, at most 25 characters). */
export const merchantRefSchema = lazy(
  'pos-terminal.merchantRefSchema',
  () => PosTransactionInputSchema.shape.merchant_ref,
);

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

/** The transaction's body as any of the terminal flows sends it (no options): the sale's fields and `original_merchant_ref`, with the link rule. */
export const PosTransactionRequestSchema = lazy('pos-terminal.PosTransactionRequestSchema', () =>
  PosTransactionInputSchema.omit({ options: true, notify: true })
    .extend({ original_merchant_ref: merchantRefSchema.optional() })
    .superRefine((v, ctx) => {
      for (const i of linkedTransactionIssues(v)) ctx.addIssue({ code: 'custom', path: [i.field], message: i.rule });
    }),
);
/** The transaction request the API client sends (no options); the initiating activity rebuilds it from the sealed card. */
export type PosInitiateRequest = Omit<PosTransactionParsedInput, 'options' | 'notify'>;

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
export const PosSealedCardSchema = lazy('pos-terminal.PosSealedCardSchema', (z) =>
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

/** `omit` of the card-read fields: a starter's input without them is the workflow's (with `card`). */
export const sealedOmit = Object.fromEntries(POS_SEALED_FIELDS.map((f) => [f, true])) as {
  [K in PosSealedField]: true;
};

/** The workflow input: the transaction's fields without the card read, plus the sealed card. */
export const PosSealedTransactionInputSchema = lazy('pos-terminal.PosSealedTransactionInputSchema', () =>
  PosTransactionInputSchema.omit(sealedOmit).extend({
    card: PosSealedCardSchema,
  }),
);
export type PosSealedTransactionInput = z.input<typeof PosSealedTransactionInputSchema>;
export type PosSealedTransactionParsedInput = z.output<typeof PosSealedTransactionInputSchema>;
/** What the initiating activity receives: the transaction request with the card as a handle. */
export type PosSealedInitiateRequest = Omit<PosSealedTransactionParsedInput, 'options' | 'notify'>;
/** The same for a Refund or Completion: it names its original (`original_merchant_ref`). */
export type PosLinkedInitiateRequest = PosSealedInitiateRequest & { original_merchant_ref?: string };

/** Card-read fields found in a workflow input (each is a rule broken; values never named); `starter` seals them. */
export function unsealedCardFields(raw: unknown, starter = 'startPosTransaction'): InputIssue[] {
  if (!raw || typeof raw !== 'object') return [];
  return POS_SEALED_FIELDS.filter((f) => f in raw).map((f) => ({
    field: f,
    rule: `must not be in the workflow input: start with ${starter}, which seals the card read`,
  }));
}

export const posTransactionWorkflowId = (merchantRef: string): string => `pos-txn-${merchantRef}`;

/** The parts of a transaction (sent or requeried) the flow keeps (no card data beyond the masked PAN). */
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

/** The statuses of one transaction send (F3) with its requery (F4), the sale's and the refund's alike: sending, its answer, or why none came. */
export type PosSendStatus =
  | 'initiating'
  | 'requerying'
  | 'retry_wait'
  | 'approved'
  | 'declined'
  | 'rejected'
  | 'not_received'
  | 'outcome_unknown'
  /** The sealed card read expired (or was used) before the transaction could be sent: nothing was sent, nothing charged. */
  | 'card_data_unavailable';

export type PosTransactionStatus = 'validating' | PosSendStatus;

/** Final statuses. outcome_unknown is not one while the flow runs: it is parked, requerying and waiting for resolveOutcome. */
export const POS_TRANSACTION_FINAL_STATUSES: readonly PosTransactionStatus[] = pickFinal([
  'approved',
  'declined',
  'rejected',
  'not_received',
  'card_data_unavailable',
]);

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

/** What every terminal flow's state (and a pre-authorisation's completion) shows of its transaction's sends. */
export interface PosSendState {
  /** The transaction's merchant_ref (a refund's and a completion's own, derived from the caller's). */
  merchantRef: string;
  /** Transaction requests sent (a sealed card that no longer opened sent none). */
  attempt: number;
  steps: PosStep[];
  /** The masked PAN (BIN and last four) of a sealed card read. */
  card?: { maskedPan: string };
  /** Set when an operator resolved an unknown outcome (resolveOutcome). */
  resolution?: OutcomeResolution<PosResolveOutcome>;
}

export interface PosTransactionState extends PosSendState {
  status: PosTransactionStatus;
}

export interface PosTransactionResult extends PosTransactionState {
  status: 'approved' | 'declined' | 'rejected' | 'not_received' | 'outcome_unknown' | 'card_data_unavailable';
  /** What to show or do next (spec: 51 ask for another card, 55 retry with a fresh card read...). */
  action: string;
  responseCode?: string;
  transaction?: PosTransactionRecord;
  /** The workflow was cancelled after the transaction may have been sent: the status is what the requery said then. */
  cancelRequested?: boolean;
}

export const posTransactionStateQuery = defineQuery<PosTransactionState>('posTransactionState');

/** The initiating activity's outcome when the service answered (F3, 200). */
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

/** A POS transaction's search attributes at its start (the starter's and the Nexus operation's). */
export const posTransactionStartSearch = (v: {
  merchant_ref: string;
  amount: number | string;
  currency?: string;
}): PaymentSearchFields => ({
  flow: 'pos-terminal',
  reference: v.merchant_ref,
  status: 'validating',
  amount: Number(v.amount),
  currency: v.currency,
});
