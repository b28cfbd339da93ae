// H. Electricity vending (H1-H4). Vending amounts in responses are decimal strings.
import { z } from 'zod';
import {
  dayWindow,
  decimalString,
  email,
  finiteNumber,
  idString,
  looseNumber,
  opt,
  phoneNumber,
  requiredOr,
  requiredString,
  signedDecimalString,
  sortedPaging,
  textOrNumber,
} from './common';

/** Codes the spec lists (JED comes from the provider list). Not enforced: new providers may appear. */
export const ELECTRICITY_PROVIDER_CODES = [
  'IE',
  'EKEDC',
  'AEDC',
  'YEDC',
  'BEDC',
  'IBEDC',
  'KEDCO',
  'KAEDC',
  'PHED',
  'EEDC',
  'JED',
] as const;

export const ElectricityProviderSchema = z.looseObject({
  code: z.string(),
  name: opt(z.string()),
  logo_url: opt(z.string()),
});
export type ElectricityProvider = z.output<typeof ElectricityProviderSchema>;
export const ElectricityProviderListSchema = z.array(ElectricityProviderSchema);

export const MeterLookupRequestSchema = z.strictObject({
  /** Typed Integer, sent as a string (as the sample does). */
  meter_no: textOrNumber(
    'the meter number',
    z.string().regex(/^\d{6,20}$/, 'must be the meter number (6 to 20 digits)'),
  ),
  meter_type: z.enum(['prepaid', 'postpaid'], { error: 'must be prepaid or postpaid' }),
  /** Provider code from the provider list (H1), e.g. EKEDC. */
  provider: requiredString('a provider code').regex(
    /^[A-Z]{2,10}$/,
    'must be a provider code such as EKEDC (upper-case letters)',
  ),
});
export type MeterLookupRequest = z.input<typeof MeterLookupRequestSchema>;

export const MeterLookupSchema = z.looseObject({
  reference: idString,
  customer_name: opt(z.string()),
  minimum_vend: opt(looseNumber),
  account_type: opt(z.string()),
  outstanding_debt: opt(signedDecimalString),
  address: opt(z.string()),
  meter_type: opt(z.string()),
  provider: opt(z.string()),
});
export type MeterLookup = z.output<typeof MeterLookupSchema>;

export const VendPurchaseRequestSchema = z.strictObject({
  /** The reference from the lookup (H2). Also the idempotency key of the purchase. */
  reference: textOrNumber('the lookup reference', z.string().min(1, 'must not be empty')),
  /**
   * Amount to vend, sent as a JSON number as the sample does. The spec does not state the unit
   * (compare with the lookup's minimum_vend). Whole units only: a fraction is refused.
   */
  amount: z.number({ error: requiredOr('must be a number') }).superRefine((v, ctx) => {
    if (!Number.isSafeInteger(v))
      ctx.addIssue({
        code: 'custom',
        message: 'must be a whole amount; a fractional amount is refused, never rounded',
      });
    else if (v <= 0) ctx.addIssue({ code: 'custom', message: 'must be greater than 0' });
  }),
  /** Receives the token by SMS. */
  phone_number: phoneNumber,
  /** Receives the token by e-mail. */
  email,
});
export type VendPurchaseRequest = z.input<typeof VendPurchaseRequestSchema>;

export const VendingTransactionSchema = z.looseObject({
  reference: idString,
  amount: decimalString,
  merchant_amount: opt(decimalString),
  phone_number: opt(z.string()),
  email: opt(z.string()),
  merchant_id: opt(z.string()),
  wallet_batch_id: opt(z.string()),
  /** The token. */
  value_reference: opt(z.string()),
  network: opt(z.string()),
  transaction_id: opt(z.union([z.string(), z.number()])),
  type: opt(z.string()),
  action: opt(z.string()),
  status: z.string(),
  meta: opt(z.string()),
  meta_json: opt(
    z.looseObject({
      token: opt(z.string()),
      amount_paid: opt(z.union([z.string(), finiteNumber])),
      total_units: opt(z.union([z.string(), finiteNumber])),
      meter_number: opt(z.string()),
      receipt_number: opt(z.string()),
    }),
  ),
  createdAt: opt(z.string()),
  updatedAt: opt(z.string()),
});
export type VendingTransaction = z.output<typeof VendingTransactionSchema>;

export const VendingTransactionsRequestSchema = z.strictObject({
  ...sortedPaging,
  ...dayWindow,
  reference: z.string().min(1, 'must not be empty').optional(),
});
export type VendingTransactionsRequest = z.input<typeof VendingTransactionsRequestSchema>;

/** With `reference`: one transaction; without: an array. */
export const VendingTransactionsResultSchema = z.union([z.array(VendingTransactionSchema), VendingTransactionSchema]);
export type VendingTransactionsResult = z.output<typeof VendingTransactionsResultSchema>;
