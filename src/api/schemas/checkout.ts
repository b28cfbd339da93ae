// A. Hosted checkout (A1, A2), recurring tokens (A3-A5), transaction queries (A6, verify).
import { z } from 'zod';
import {
  addOneMonth,
  caseInsensitiveEnum,
  currency,
  email,
  finiteNumber,
  httpUrl,
  kobo,
  koboAmount,
  koboAmountAsString,
  opt,
  pageNumber,
  parseDateLike,
  pathParam,
  reference,
  requiredString,
  tenDigitAccountInput,
} from './common';

export const PAYMENT_CHANNELS = ['card', 'bank', 'ussd', 'transfer'] as const;

// ---- Initiate checkout (A1) -----------------------------------------------------------------

export const CheckoutInitiateRequestSchema = z.strictObject({
  email,
  /** Lowest unit (kobo/cent). The spec types it as a string: sent as a string of digits. */
  amount: koboAmountAsString(),
  currency,
  /** Only value: inline (default). */
  initiate_type: z.literal('inline', { error: 'must be "inline"' }).default('inline'),
  /** Unique; the service generates one if omitted. Pass one so a repeated attempt is recognisable. */
  transaction_ref: reference().optional(),
  customer_name: z.string().optional(),
  callback_url: httpUrl.optional(),
  payment_channels: z
    .array(z.enum(PAYMENT_CHANNELS, { error: 'must be card, bank, ussd or transfer' }))
    .min(1, 'must not be empty')
    .optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  pass_charge: z.boolean().optional(),
  sub_merchant_id: z.string().min(1).optional(),
  /** Tokenise the card on this payment (A3). */
  is_recurring: z.boolean().optional(),
});
export type CheckoutInitiateRequest = z.input<typeof CheckoutInitiateRequestSchema>;

export const CheckoutInitiationSchema = z.looseObject({
  auth_url: opt(z.string()),
  access_token: opt(z.string()),
  merchant_info: opt(
    z.looseObject({
      merchant_response: opt(z.string()),
      merchant_name: opt(z.string()),
      merchant_logo: opt(z.string()),
      merchant_id: opt(z.string()),
    }),
  ),
  currency: opt(z.string()),
  recurring: opt(
    z.looseObject({
      frequency: opt(z.union([z.string(), z.number()])),
      duration: opt(z.union([z.string(), z.number()])),
      plan_code: opt(z.string()),
      customer_name: opt(z.string()),
      type: opt(z.number()),
    }),
  ),
  is_recurring: opt(z.boolean()),
  plan_code: opt(z.string()),
  callback_url: opt(z.string()),
  transaction_ref: z.string(),
  transaction_memo: opt(z.string()),
  transaction_amount: opt(kobo),
  authorized_channels: opt(z.array(z.string())),
  checkout_url: z.string(),
});
export type CheckoutInitiation = z.output<typeof CheckoutInitiationSchema>;

// ---- Simulate a transfer (A2, test environment) ---------------------------------------------

export const SimulateTransferRequestSchema = z.strictObject({
  /** The dynamic account shown by the modal's transfer option (10 digits). */
  virtual_account_number: tenDigitAccountInput,
  /** Integer, lowest unit. */
  amount: koboAmount(),
});
export type SimulateTransferRequest = z.input<typeof SimulateTransferRequestSchema>;

/** The spec shows the string 'Payment successful'; objects and null are tolerated. */
export const SimulateTransferResultSchema = z
  .union([z.string(), z.record(z.string(), z.unknown()), z.null(), z.undefined()])
  .transform((v) => v ?? null);
export type SimulateTransferResult = z.output<typeof SimulateTransferResultSchema>;

// ---- Charge a token (A4), cancel tokens (A5) -------------------------------------------------

export const TokenChargeRequestSchema = z.strictObject({
  /** Integer, lowest unit. */
  amount: koboAmount(),
  token_id: requiredString(),
  /**
   * Required here although the service would generate one: a repeated attempt must send the
   * same reference so the service (and a later verify) can recognise it.
   */
  transaction_ref: reference(),
});
export type TokenChargeRequest = z.input<typeof TokenChargeRequestSchema>;

/** What every transaction answer of this area may carry besides its reference, status and amounts. */
const transactionFields = {
  email: opt(z.string()),
  transaction_currency_id: opt(z.string()),
  created_at: opt(z.string()),
  transaction_type: opt(z.string()),
  merchant_name: opt(z.string()),
  merchant_business_name: opt(z.string()),
  merchant_email: opt(z.string()),
};
/** And what a charge or a verify adds (the gateway's reference, a recurring card's plan). */
const chargeFields = {
  gateway_transaction_ref: opt(z.string()),
  recurring: opt(z.unknown()),
  plan_code: opt(z.string()),
};

export const TokenChargeResultSchema = z.looseObject({
  transaction_amount: opt(kobo),
  transaction_ref: opt(z.string()),
  transaction_status: opt(z.string()),
  ...transactionFields,
  ...chargeFields,
});
export type TokenChargeResult = z.output<typeof TokenChargeResultSchema>;

export const TokenCancelRequestSchema = z.strictObject({
  /** One token id or several; always sent as an array. */
  auth_code: z
    .union([requiredString(), z.array(requiredString()).min(1, 'must list at least one token id')], {
      error: (iss) => (iss.input === undefined ? 'is required' : 'must be a token id or an array of token ids'),
    })
    .transform((v) => (Array.isArray(v) ? v : [v])),
});
export type TokenCancelRequest = z.input<typeof TokenCancelRequestSchema>;

export const TokenCancelResultSchema = z.looseObject({
  auth_code: z.array(z.string()),
});
export type TokenCancelResult = z.output<typeof TokenCancelResultSchema>;

// ---- Query transactions (A6), verify ---------------------------------------------------------

export const TransactionQueryRequestSchema = z
  .strictObject({
    currency: currency.optional(),
    /** YYYY-MM-DD (or an ISO 8601 timestamp). Required. */
    start_date: requiredString('a date YYYY-MM-DD'),
    /** At most one calendar month after start_date. Required. */
    end_date: requiredString('a date YYYY-MM-DD'),
    page: pageNumber.optional(),
    perpage: pageNumber.optional(),
    reference: z.string().min(1).optional(),
  })
  .superRefine((v, ctx) => {
    const start = parseDateLike(v.start_date);
    const end = parseDateLike(v.end_date);
    for (const [key, at] of [['start_date', start] as const, ['end_date', end] as const])
      if (at === undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: 'must be a date YYYY-MM-DD or an ISO 8601 timestamp' });
    if (start === undefined || end === undefined) return;
    if (end < start) ctx.addIssue({ code: 'custom', path: ['end_date'], message: 'must not be before start_date' });
    else if (end > addOneMonth(start))
      ctx.addIssue({
        code: 'custom',
        path: ['end_date'],
        message: 'must be at most one month after start_date (the service refuses wider windows)',
      });
  });
export type TransactionQueryRequest = z.input<typeof TransactionQueryRequestSchema>;

/** meta_data is a string holding JSON; kept as received. */
export const TransactionRecordSchema = z.looseObject({
  id: opt(z.number()),
  transaction_amount: kobo,
  transaction_ref: z.string(),
  transaction_status: z.string(),
  ...transactionFields,
  merchant_id: opt(z.string()),
  merchant_amount: opt(kobo),
  customer_email: opt(z.string()),
  customer_name: opt(z.string()),
  meta_data: opt(z.string()),
  meta: opt(z.record(z.string(), z.unknown())),
  transaction_charges: opt(finiteNumber),
  transaction_gateway_id: opt(z.string()),
  flat_charge: opt(finiteNumber),
  is_suspicious: opt(z.boolean()),
  is_refund: opt(z.boolean()),
});
export type TransactionRecord = z.output<typeof TransactionRecordSchema>;
export const TransactionRecordListSchema = z.array(TransactionRecordSchema);

export const TransactionVerifyRequestSchema = z.strictObject({ transaction_ref: pathParam });
export type TransactionVerifyRequest = z.input<typeof TransactionVerifyRequestSchema>;

export const VERIFIED_STATUSES = ['Success', 'Failed', 'Abandoned', 'Pending'] as const;
export type VerifiedTransactionStatus = (typeof VERIFIED_STATUSES)[number];

/**
 * Verify one transaction. `transaction_status` is normalised to Success | Failed | Abandoned |
 * Pending (any case accepted); any other value is refused, as money decisions hang on it.
 */
export const VerifiedTransactionSchema = z.looseObject({
  transaction_ref: z.string(),
  transaction_status: caseInsensitiveEnum(VERIFIED_STATUSES, 'must be Success, Failed, Abandoned or Pending'),
  transaction_amount: opt(kobo),
  merchant_amount: opt(kobo),
  gateway_ref: opt(z.string()),
  ...transactionFields,
  ...chargeFields,
});
export type VerifiedTransaction = z.output<typeof VerifiedTransactionSchema>;
