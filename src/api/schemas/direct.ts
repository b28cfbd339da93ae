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
  patternString,
  reference,
  requiredObject,
  requiredString,
  twoDigitMonth,
  twoDigitYear,
} from './common';

const customer = requiredObject({ name: requiredString(), email }, 'an object {name, email}');

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
  card: requiredObject(
    {
      number: patternString('a string of digits', /^\d{12,19}$/, 'must be 12 to 19 digits'),
      cvv: patternString('a string of 3 or 4 digits', /^\d{3,4}$/, 'must be 3 or 4 digits'),
      expiry_month: twoDigitMonth,
      expiry_year: twoDigitYear,
    },
    'an object {number, cvv, expiry_month, expiry_year}',
  ),
  redirect_url: httpUrl.optional(),
});
export type DirectChargeCardRequest = z.input<typeof DirectChargeCardRequestSchema>;

export const DirectAuthorizeCardRequestSchema = z.strictObject({
  transaction_reference: reference(),
  authorization: requiredObject(
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
    'an object with pin or otp',
  ).superRefine((v, ctx) => {
    if ((v.pin === undefined) === (v.otp === undefined))
      ctx.addIssue({ code: 'custom', message: 'must carry exactly one of pin or otp' });
  }),
});
export type DirectAuthorizeCardRequest = z.input<typeof DirectAuthorizeCardRequestSchema>;

export const DirectChargeBankRequestSchema = z.strictObject({
  ...processPaymentBase,
  bank: requiredObject(
    {
      bank_code: patternString('a NIP bank code string', /^\d{3,6}$/, 'must be a NIP bank code (3 to 6 digits)'),
      account_or_phoneno: patternString(
        'an account number or phone number',
        /^\d{10,13}$/,
        'must be a 10-digit account number or a phone number (digits only)',
      ),
    },
    'an object {bank_code, account_or_phoneno}',
  ),
});
export type DirectChargeBankRequest = z.input<typeof DirectChargeBankRequestSchema>;

export const DirectValidateBankRequestSchema = z.strictObject({
  transaction_reference: reference(),
  authorization: requiredObject(
    {
      otp_token: patternString(
        'a string of digits',
        /^\d{4,8}$/,
        'must be the 4 to 8 digit OTP or token the payer entered',
      ),
    },
    'an object {otp_token}',
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
  ussd: requiredObject(
    { bank_code: z.enum(USSD_BANK_CODES, { error: 'must be one of the USSD bank codes the spec lists' }) },
    'an object {bank_code}',
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
