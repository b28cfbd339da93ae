// D. Direct debit mandates (D1-D6).
import { z } from 'zod';
import {
  email,
  idString,
  isoDate,
  kobo,
  koboAmount,
  opt,
  pageNumber,
  patternString,
  phoneNumber,
  reference,
  requiredObject,
  requiredOr,
  requiredString,
  tenDigitAccountInput,
  textOrNumber,
  withAlias,
} from './common';

export const MANDATE_STATUSES = ['initiated', 'approved', 'cancelled', 'rejected'] as const;
export type MandateStatus = (typeof MANDATE_STATUSES)[number];

export const MandateCreateRequestSchema = z
  .strictObject({
    /** Always emandate. */
    mandate_type: z.literal('emandate', { error: 'must be "emandate"' }).default('emandate'),
    /** VARIABLE or FIXED, any case; sent lowercase as the samples do. */
    debit_type: z
      .string({ error: requiredOr('must be variable or fixed') })
      .transform((v) => v.toLowerCase())
      .pipe(z.enum(['variable', 'fixed'], { error: 'must be variable or fixed' })),
    /** Total over the mandate cycle, kobo. */
    amount: koboAmount(),
    /**
     * The customer's 10-digit account. The reference types it Integer; we send a string so a
     * leading 0 (common in NUBAN numbers) survives.
     */
    account_number: tenDigitAccountInput,
    bank_code: requiredString().regex(/^\d{3,6}$/, 'must be a NIP bank code (3 to 6 digits)'),
    description: requiredString(),
    /** YYYY-MM-DD. */
    start_date: isoDate,
    end_date: isoDate,
    customer_email: email,
    /** Unique; the service generates one if omitted. */
    transaction_reference: reference().optional(),
    customerInformation: requiredObject(
      {
        identity: z.strictObject({
          type: z.literal('bvn', { error: 'must be "bvn"' }).default('bvn'),
          number: patternString('an 11-digit BVN string', /^\d{11}$/, 'must be 11 digits'),
        }),
        firstName: requiredString(),
        lastName: requiredString(),
        address: requiredString(),
        phone: phoneNumber,
      },
      'an object',
    ),
    fixedMandateSettings: z
      .strictObject({
        frequency: z
          .string()
          .transform((v) => v.toUpperCase())
          .pipe(z.enum(['MONTHLY', 'WEEKLY', 'YEARLY'], { error: 'must be MONTHLY, WEEKLY or YEARLY' })),
        interval: z.number().int('must be a whole number').min(1, 'must be at least 1'),
        initial_debit_amount: koboAmount(),
        initial_debit_date: isoDate,
      })
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (v.debit_type === 'fixed' && !v.fixedMandateSettings) {
      ctx.addIssue({ code: 'custom', path: ['fixedMandateSettings'], message: 'is required when debit_type is fixed' });
    }
    if (v.end_date < v.start_date)
      ctx.addIssue({ code: 'custom', path: ['end_date'], message: 'must not be before start_date' });
  });
export type MandateCreateRequest = z.input<typeof MandateCreateRequestSchema>;

const mandateFields = {
  mandate_id: opt(idString),
  mandate_reference_number: opt(z.string()),
  mandate_type: opt(z.string()),
  debit_type: opt(z.string()),
  status: opt(z.string()),
  approved: opt(z.boolean()),
  is_approved: opt(z.boolean()),
  ready_to_debit: opt(z.boolean()),
  reference: opt(z.string()),
  merchant_reference: opt(z.string()),
  account_number: opt(idString),
  account_name: opt(z.string()),
  bank: opt(z.string()),
  bankName: opt(z.string()),
  description: opt(z.string()),
  start_date: opt(z.string()),
  end_date: opt(z.string()),
  amount: opt(kobo),
  balance: opt(kobo),
  total_debited: opt(kobo),
  customer_email: opt(z.string()),
  customer_name: opt(z.string()),
  mandate_authorization_date: opt(z.string()),
  created_at: opt(z.string()),
  frequency: opt(z.string()),
  initial_debit_amount: opt(kobo),
  merchant_id: opt(z.string()),
  id: opt(idString),
};

/** `approved` is filled from `is_approved` and `reference` from `merchant_reference` when absent. */
const mandateAliases = (v: unknown) =>
  withAlias('reference', 'merchant_reference', true)(withAlias('approved', 'is_approved', true)(v));

export const MandateSchema = z.preprocess(mandateAliases, z.looseObject(mandateFields));
export type Mandate = z.output<typeof MandateSchema>;

export const MandateCreationSchema = z.preprocess(
  mandateAliases,
  z.looseObject({
    ...mandateFields,
    mandate_id: idString,
    message: opt(z.string()),
    date: opt(z.string()),
    next_action: opt(z.string()),
    session_token: opt(z.string()),
  }),
);
export type MandateCreation = z.output<typeof MandateCreationSchema>;

export const MandateValidateOtpRequestSchema = z.strictObject({
  session_token: requiredString(),
  /**
   * The OTP the customer received. The reference types it Integer; we send a string of digits so
   * a leading 0 survives.
   */
  otp: textOrNumber('the OTP digits', z.string().regex(/^\d{4,8}$/, 'must be 4 to 8 digits')),
});
export type MandateValidateOtpRequest = z.input<typeof MandateValidateOtpRequestSchema>;

export const MandateApprovalSchema = z.looseObject({
  mandate_id: idString,
  mandate_reference_number: opt(z.string()),
  status: z.string(),
  ready_to_debit: opt(z.boolean()),
});
export type MandateApproval = z.output<typeof MandateApprovalSchema>;

export const MINIMUM_DIRECT_DEBIT_KOBO = 20_000;

export const MandateDebitRequestSchema = z.strictObject({
  /** Kobo, at least 20000 (N200). */
  amount: koboAmount({
    min: MINIMUM_DIRECT_DEBIT_KOBO,
    minMessage: 'must be at least 20000 kobo (N200), the minimum direct debit',
  }),
  mandate_id: textOrNumber('the mandate id', z.string().min(1, 'must not be empty')),
  /** Required: a repeated attempt must carry the same reference. */
  transaction_reference: reference(),
  narration: requiredString(),
  pass_charge: z.boolean().optional(),
  customer_email: email,
});
export type MandateDebitRequest = z.input<typeof MandateDebitRequestSchema>;

/** The mandate debit's result (D3); the sample's `aamount` key is normalised to `amount`. */
export const MandateDebitSchema = z.preprocess(
  withAlias('amount', 'aamount'),
  z.looseObject({
    status: opt(z.string()),
    amount: kobo,
    mandate_id: opt(idString),
    transaction_reference: z.string(),
    date: opt(z.string()),
    account: opt(
      z.looseObject({
        bank_code: opt(z.string()),
        account_name: opt(z.string()),
        account_number: opt(idString),
        bank_name: opt(z.string()),
      }),
    ),
  }),
);
export type MandateDebit = z.output<typeof MandateDebitSchema>;

export const MandateCancelRequestSchema = z.strictObject({
  mandateIds: z
    .array(requiredString(), { error: requiredOr('must be an array of mandate ids') })
    .min(1, 'must list at least one mandate id'),
});
export type MandateCancelRequest = z.input<typeof MandateCancelRequestSchema>;

export const MandateCancellationSchema = z.looseObject({
  canceledMandates: z.array(idString),
  failedMandates: z.array(z.looseObject({ mandateId: idString, failureReason: opt(z.string()) })),
});
export type MandateCancellation = z.output<typeof MandateCancellationSchema>;

export const MandateListRequestSchema = z.strictObject({
  status: z.enum(MANDATE_STATUSES, { error: 'must be initiated, approved, cancelled or rejected' }).optional(),
  page_size: pageNumber.optional(),
  mandate_id: z.string().min(1).optional(),
  merchant_ref: z.string().min(1).optional(),
  account_number: z
    .string()
    .regex(/^\d{10}$/, 'must be exactly 10 digits')
    .optional(),
  customer_name: z.string().min(1).optional(),
  mandate_type: z.string().min(1).optional(),
  amount: koboAmount().optional(),
  debit_type: z
    .string()
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(['variable', 'fixed'], { error: 'must be variable or fixed' }))
    .optional(),
  is_approved: z.boolean().optional(),
  ready_to_debit: z.boolean().optional(),
  start_date: isoDate.optional(),
  end_date: isoDate.optional(),
  /**
   * A page's `next_cursor` / `prev_cursor`, sent back to get that page. The spec shows the cursors
   * in the response but not the parameter that carries them back: `cursor` is our choice.
   */
  cursor: z
    .union([z.string().min(1), z.number().int().min(0)])
    .transform((v) => String(v))
    .optional(),
});
export type MandateListRequest = z.input<typeof MandateListRequestSchema>;

export const MandatePageSchema = z.looseObject({
  records: z.array(MandateSchema),
  next_cursor: opt(z.union([z.string(), z.number()])),
  prev_cursor: opt(z.union([z.string(), z.number()])),
  has_more: z.boolean(),
  page_size: opt(z.number().int()),
});
export type MandatePage = z.output<typeof MandatePageSchema>;

export const MandateResendOtpRequestSchema = z.strictObject({ session_token: requiredString() });
export type MandateResendOtpRequest = z.input<typeof MandateResendOtpRequestSchema>;
