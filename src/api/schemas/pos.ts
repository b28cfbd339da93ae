// E. POS remote requests (E1, E2) and F. POS terminal API (F1-F4).
import { z } from 'zod';
import { currency, idString, kobo, koboAmount, koboAmountAsString, opt, pathParam, requiredString } from './common';
import {
  MERCHANT_REF_MAX,
  merchantRef,
  POS_ACCOUNT_TYPES,
  POS_CARD_FIELDS,
  POS_TRANSACTION_TYPES,
  posAccountType,
  posTransactionType,
} from '../../shared/pos-card-fields';

// The terminal transaction's field rules are defined once in src/shared/pos-card-fields.ts (the workflows check the same).
export { MERCHANT_REF_MAX, POS_ACCOUNT_TYPES, POS_TRANSACTION_TYPES, posAccountType };

// ---- E. Remote request ---------------------------------------------------------------------

export const REMOTE_ACCOUNT_TYPES = ['default', 'savings', 'current', 'credit'] as const;

export const PosRemoteCreateRequestSchema = z.strictObject({
  terminal_id: requiredString(),
  /** Kobo, greater than 0. */
  amount: koboAmount({ min: 1, minMessage: 'must be greater than 0' }),
  /** default, savings, current or credit (sent lowercase; any case accepted). */
  account_type: z
    .string({ error: 'must be default, savings, current or credit' })
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.enum(REMOTE_ACCOUNT_TYPES, { error: 'must be default, savings, current or credit' }))
    .optional(),
});
export type PosRemoteCreateRequest = z.input<typeof PosRemoteCreateRequestSchema>;

export const PosRemoteCreationSchema = z.looseObject({ request_ref: idString });
export type PosRemoteCreation = z.output<typeof PosRemoteCreationSchema>;

export const PosRemoteRequeryRequestSchema = z.strictObject({ request_ref: pathParam });
export type PosRemoteRequeryRequest = z.input<typeof PosRemoteRequeryRequestSchema>;

const paymentInfo = z.looseObject({
  card_pan: opt(z.string()),
  card_exp: opt(z.string()),
  card_type: opt(z.string()),
  cardholder_name: opt(z.string()),
});

/** The payment fields a remote request's record and a terminal transaction both carry. */
const posPaymentFields = {
  amount: kobo,
  currency: opt(z.string()),
  payment_method: opt(z.string()),
  transaction_type: opt(z.string()),
  payment_info: opt(paymentInfo),
  transaction_reference: opt(z.string()),
  virtual_account_number: opt(z.string()),
  rrn: opt(z.string()),
  stan: opt(z.string()),
  aid: opt(z.string()),
};

const lowerStatus = <const T extends readonly [string, ...string[]]>(values: T) =>
  z
    .string()
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(values, { error: `must be ${values.join(' or ')}` }));

export const PosRemoteCompletedSchema = z.looseObject({
  status: lowerStatus(['success', 'failed'] as const),
  id: opt(z.number()),
  merchant_request_ref: opt(z.string()),
  merchant_id: opt(z.string()),
  terminal_id: opt(z.string()),
  ...posPaymentFields,
  response_code: opt(idString),
  response_message: opt(z.string()),
  processor: opt(z.string()),
  meta: opt(z.unknown()),
  pc_code: opt(z.string()),
  created_at: opt(z.string()),
});
export const PosRemotePendingSchema = z.looseObject({ status: lowerStatus(['pending'] as const) });

/** The remote request's requery (E2): `{status:'pending'}` or the full record with status success | failed. */
export const PosRemoteRequestRecordSchema = z.union([PosRemotePendingSchema, PosRemoteCompletedSchema]);
export type PosRemoteRequestRecord = z.output<typeof PosRemoteRequestRecordSchema>;

// ---- F. Terminal API -----------------------------------------------------------------------

const serialNo = requiredString('the device serial number');

export const PosTerminalConfigRequestSchema = z.strictObject({ serial_no: serialNo });
export type PosTerminalConfigRequest = z.input<typeof PosTerminalConfigRequestSchema>;

export const PosTerminalConfigurationSchema = z.looseObject({
  terminal: z.looseObject({
    terminal_id: idString,
    serial_no: opt(z.string()),
    terminal_type: opt(z.string()),
    status: opt(z.string()),
    currency: opt(z.string()),
    mcc_code: opt(idString),
    address: opt(
      z.looseObject({
        street: opt(z.string()),
        city: opt(z.string()),
        region: opt(z.string()),
        country_code: opt(z.string()),
      }),
    ),
    latitude: opt(idString),
    longitude: opt(idString),
  }),
  merchant: opt(z.looseObject({ merchant_id: opt(z.string()), name: opt(z.string()) })),
  logo: opt(
    z.looseObject({
      key: opt(z.string()),
      url: opt(z.string()),
      file_name: opt(z.string()),
      ext: opt(z.string()),
      verified_at: opt(z.string()),
    }),
  ),
});
export type PosTerminalConfiguration = z.output<typeof PosTerminalConfigurationSchema>;

export const PosKeyExchangeRequestSchema = z.strictObject({
  serial_no: serialNo,
  /** Forces a fresh exchange with the processor; slower; only when keys seem stale. Default false. */
  refresh: z.boolean().default(false),
});
export type PosKeyExchangeRequest = z.input<typeof PosKeyExchangeRequestSchema>;

const hex32 = z.string().regex(/^[0-9A-Fa-f]{32}$/, 'must be 32 hex characters');

/** Terminal keys. Hold in memory only; never log or persist (treat a leak like a card-data leak). */
export const PosTerminalKeysSchema = z.looseObject({
  terminal_id: opt(idString),
  pin_key: hex32,
  master_key: opt(hex32),
  session_key: opt(z.string()),
  working_key: opt(hex32),
  response_code: opt(idString),
  response_message: opt(z.string()),
});
export type PosTerminalKeys = z.output<typeof PosTerminalKeysSchema>;

const PosTerminalInitiateRequestObjectSchema = z.strictObject({
  /** From the terminal configuration (F1); the client sends it in the body (docs/choices.md). */
  terminal_id: requiredString(),
  /** Lowest unit; the spec types it as a string: sent as a string of digits. */
  amount: koboAmountAsString(),
  currency: currency.default('NGN'),
  ...POS_CARD_FIELDS,
  transaction_type: posTransactionType,
  account_type: posAccountType,
  merchant_ref: merchantRef,
  /**
   * Refund and Completion only: the merchant_ref of the transaction they refer to (the sale a
   * refund returns money from; the Pre-Authorization a completion captures). The spec lists the
   * four transaction types without showing how a Refund or Completion names its original: this
   * field is our choice (docs/choices.md), and the sandbox follows it.
   */
  original_merchant_ref: z
    .string({ error: 'must be the merchant_ref of the original transaction' })
    .min(1, 'must not be empty')
    .max(MERCHANT_REF_MAX, `must be at most ${MERCHANT_REF_MAX} characters`)
    .optional(),
});

/** Transaction types that refer to an earlier transaction by `original_merchant_ref`. */
export const POS_LINKED_TRANSACTION_TYPES: readonly string[] = ['Refund', 'Completion'];

/** The terminal transaction's body (F3); Refund and Completion name their original, Purchase and Pre-Authorization never do. */
export const PosTerminalInitiateRequestSchema = PosTerminalInitiateRequestObjectSchema.superRefine((v, ctx) => {
  const linked = POS_LINKED_TRANSACTION_TYPES.includes(v.transaction_type);
  if (linked && v.original_merchant_ref === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['original_merchant_ref'],
      message: 'is required for Refund and Completion (the merchant_ref of the sale or pre-authorisation)',
    });
  } else if (!linked && v.original_merchant_ref !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['original_merchant_ref'], message: 'is only for Refund and Completion' });
  } else if (linked && v.original_merchant_ref === v.merchant_ref) {
    ctx.addIssue({
      code: 'custom',
      path: ['original_merchant_ref'],
      message: 'must differ from merchant_ref (each transaction has its own)',
    });
  }
});
export type PosTerminalInitiateRequest = z.input<typeof PosTerminalInitiateRequestSchema>;

export const PosTerminalTransactionSchema = z.looseObject({
  ...posPaymentFields,
  meta: opt(
    z.looseObject({ merchant_name: opt(z.string()), processor_amount: opt(z.union([z.string(), z.number()])) }),
  ),
  merchant_id: opt(z.string()),
  status: lowerStatus(['success', 'failed'] as const),
  /** Two characters; a number is padded ("0" → "00"). */
  response_code: z
    .union([z.string(), z.number()])
    .transform((v) => (typeof v === 'number' ? String(v).padStart(2, '0') : v)),
  terminal_id: opt(idString),
  response_message: opt(z.string()),
  merchant_request_ref: opt(z.string()),
  updated_at: opt(z.string()),
  created_at: opt(z.string()),
  virtual_account_number: opt(z.string()),
  receipt_no: opt(idString),
  merchant_ref: opt(z.string()),
});
export type PosTerminalTransaction = z.output<typeof PosTerminalTransactionSchema>;

export const PosTerminalRequeryRequestSchema = z.strictObject({
  merchant_ref: z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
    .min(1, 'must not be empty')
    .max(MERCHANT_REF_MAX, `must be at most ${MERCHANT_REF_MAX} characters`),
});
export type PosTerminalRequeryRequest = z.input<typeof PosTerminalRequeryRequestSchema>;
