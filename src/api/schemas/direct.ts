// B. Direct API: card (B1, B2), bank debit (B3, B4), USSD (B5).
import { z } from 'zod';
import {
  currency,
  email,
  finiteNumber,
  httpUrl,
  kobo,
  koboAmount,
  opt,
  reference,
  requiredString,
  twoDigitMonth,
  twoDigitYear,
} from './common';

const customer = z.strictObject(
  { name: requiredString(), email },
  { error: (iss) => (iss.input === undefined ? 'is required' : 'must be an object {name, email}') },
);

/** Fields common to the three process-payment variants. */
const processPaymentBase = {
  /**
   * Required here although the service would generate one: a repeated attempt (activity
   * retry) must send the same reference so the service can refuse a duplicate charge.
   */
  transaction_reference: reference(),
  /** Integer, lowest unit. */
  amount: koboAmount(),
  currency: currency.default('NGN'),
  pass_charge: z.boolean().optional(),
  webhook_url: httpUrl.optional(),
  customer,
};

export const DirectChargeCardRequestSchema = z.strictObject({
  ...processPaymentBase,
  card: z.strictObject(
    {
      number: z
        .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string of digits') })
        .regex(/^\d{12,19}$/, 'must be 12 to 19 digits'),
      cvv: z
        .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string of 3 or 4 digits') })
        .regex(/^\d{3,4}$/, 'must be 3 or 4 digits'),
      expiry_month: twoDigitMonth,
      expiry_year: twoDigitYear,
    },
    {
      error: (iss) =>
        iss.input === undefined ? 'is required' : 'must be an object {number, cvv, expiry_month, expiry_year}',
    },
  ),
  redirect_url: httpUrl.optional(),
});
export type DirectChargeCardRequest = z.input<typeof DirectChargeCardRequestSchema>;

export const DirectAuthorizeCardRequestSchema = z.strictObject({
  transaction_reference: reference(),
  authorization: z
    .strictObject(
      {
        pin: z
          .string()
          .regex(/^\d{4}$/, 'must be 4 digits')
          .optional(),
        otp: z
          .string()
          .regex(/^\d{4,8}$/, 'must be 4 to 8 digits')
          .optional(),
      },
      { error: (iss) => (iss.input === undefined ? 'is required' : 'must be an object with pin or otp') },
    )
    .superRefine((v, ctx) => {
      if ((v.pin === undefined) === (v.otp === undefined))
        ctx.addIssue({ code: 'custom', message: 'must carry exactly one of pin or otp' });
    }),
});
export type DirectAuthorizeCardRequest = z.input<typeof DirectAuthorizeCardRequestSchema>;

export const DirectChargeBankRequestSchema = z.strictObject({
  ...processPaymentBase,
  bank: z.strictObject(
    {
      bank_code: z
        .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a NIP bank code string') })
        .regex(/^\d{3,6}$/, 'must be a NIP bank code (3 to 6 digits)'),
      account_or_phoneno: z
        .string({
          error: (iss) => (iss.input === undefined ? 'is required' : 'must be an account number or phone number'),
        })
        .regex(/^\d{10,13}$/, 'must be a 10-digit account number or a phone number (digits only)'),
    },
    { error: (iss) => (iss.input === undefined ? 'is required' : 'must be an object {bank_code, account_or_phoneno}') },
  ),
});
export type DirectChargeBankRequest = z.input<typeof DirectChargeBankRequestSchema>;

export const DirectValidateBankRequestSchema = z.strictObject({
  transaction_reference: reference(),
  authorization: z.strictObject(
    {
      otp_token: z
        .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string of digits') })
        .regex(/^\d{4,8}$/, 'must be the 4 to 8 digit OTP or token the payer entered'),
    },
    { error: (iss) => (iss.input === undefined ? 'is required' : 'must be an object {otp_token}') },
  ),
});
export type DirectValidateBankRequest = z.input<typeof DirectValidateBankRequestSchema>;

/** USSD bank codes the spec lists: the one list, the sandbox's too. */
export const USSD_BANK_CODES = [
  '063',
  '044',
  '050',
  '214',
  '070',
  '011',
  '058',
  '030',
  '082',
  '125',
  '221',
  '232',
  '033',
  '032',
  '215',
  '566',
  '035',
  '057',
  '00103',
  '105',
  '303',
  '107',
  '50211',
] as const;
export type UssdBankCode = (typeof USSD_BANK_CODES)[number];
/** Whether a code is one of the USSD bank codes (the sandbox's checkout reads this too). */
export const isUssdBankCode = (code: string): code is UssdBankCode =>
  (USSD_BANK_CODES as readonly string[]).includes(code);

export const DirectInitiateUssdRequestSchema = z.strictObject({
  ...processPaymentBase,
  ussd: z.strictObject(
    { bank_code: z.enum(USSD_BANK_CODES, { error: 'must be one of the USSD bank codes the spec lists' }) },
    { error: (iss) => (iss.input === undefined ? 'is required' : 'must be an object {bank_code}') },
  ),
});
export type DirectInitiateUssdRequest = z.input<typeof DirectInitiateUssdRequestSchema>;

/** Direct payment step result (card, bank, USSD). */
export const DirectPaymentResultSchema = z.looseObject({
  amount: opt(kobo),
  transaction_ref: opt(z.string()),
  transaction_reference: opt(z.string()),
  currency: opt(z.string()),
  transaction_type: opt(z.string()),
  gateway_ref: opt(z.string()),
  merchant_amount: opt(finiteNumber),
  message: opt(z.string()),
  /** Card: ValidatePin, ValidateOTP, ThreeDSecure, Success. */
  transaction_status: opt(z.string()),
  auth_url: opt(z.string()),
  /** Bank/USSD: ValidateTOKEN, ValidateOTP, USSDCodeGenerated. */
  auth_model: opt(z.string()),
  ussd_details: opt(z.looseObject({ ussd_reference: opt(z.string()), expiresAt: opt(z.string()) })),
});
export type DirectPaymentResult = z.output<typeof DirectPaymentResultSchema>;
