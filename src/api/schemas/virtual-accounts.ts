// C. Virtual accounts (C1-C11). Amounts are decimal strings.
import { z } from 'zod';
import {
  decimalAmountInput,
  decimalString,
  email,
  mmddyyyyDash,
  mmddyyyySlash,
  mobileNum,
  countedRows,
  opt,
  paging,
  pathParam,
  patternString,
  requiredString,
  tenDigitAccount,
  withAlias,
} from './common';

/** 11 digits (the spec only says string; a BVN is 11 digits). */
const bvn = patternString('a string of 11 digits', /^\d{11}$/, 'must be 11 digits');

export const CreateCustomerAccountRequestSchema = z.strictObject({
  customer_identifier: requiredString(),
  first_name: requiredString(),
  last_name: requiredString(),
  middle_name: z.string().optional(),
  /** At most 11 digits. */
  mobile_num: mobileNum,
  email: email.optional(),
  bvn,
  /** mm/dd/yyyy. */
  dob: mmddyyyySlash,
  /** '1' male, '2' female. */
  gender: z.enum(['1', '2'], { error: "must be '1' (male) or '2' (female)" }),
  address: requiredString(),
  /** 10-digit settlement account at the partner bank; absent: merchant wallet, T+1. */
  beneficiary_account: tenDigitAccount.optional(),
});
export type CreateCustomerAccountRequest = z.input<typeof CreateCustomerAccountRequestSchema>;

export const CreateBusinessAccountRequestSchema = z.strictObject({
  bvn,
  business_name: requiredString(),
  /** Alphanumeric. */
  customer_identifier: requiredString().regex(/^[A-Za-z0-9]+$/, 'must be alphanumeric'),
  mobile_num: mobileNum,
  /** 10 digits (typed Date in the reference but described as an account number). */
  beneficiary_account: tenDigitAccount.optional(),
});
export type CreateBusinessAccountRequest = z.input<typeof CreateBusinessAccountRequestSchema>;

export const VirtualAccountSchema = z.looseObject({
  first_name: opt(z.string()),
  last_name: opt(z.string()),
  business_name: opt(z.string()),
  bank_code: opt(z.string()),
  virtual_account_number: tenDigitAccount,
  beneficiary_account: opt(z.string()),
  customer_identifier: z.string(),
  created_at: opt(z.string()),
  updated_at: opt(z.string()),
});
export type VirtualAccount = z.output<typeof VirtualAccountSchema>;

export const FrozenTransactionSchema = z.looseObject({
  freeze_transaction_ref: opt(z.string()),
  reason: opt(z.string()),
});

/** `froze_transaction` (some samples) is normalised to `frozen_transaction`. */
export const VirtualAccountTransactionSchema = z.preprocess(
  withAlias('frozen_transaction', 'froze_transaction'),
  z.looseObject({
    transaction_reference: z.string(),
    virtual_account_number: opt(z.string()),
    principal_amount: decimalString,
    settled_amount: decimalString,
    fee_charged: opt(decimalString),
    transaction_date: opt(z.string()),
    transaction_indicator: opt(z.string()),
    remarks: opt(z.string()),
    currency: opt(z.string()),
    frozen_transaction: opt(FrozenTransactionSchema),
    customer: opt(z.looseObject({ customer_identifier: opt(z.string()) })),
    alerted_merchant: opt(z.boolean()),
    merchant_settlement_date: opt(z.string()),
  }),
);
export type VirtualAccountTransaction = z.output<typeof VirtualAccountTransactionSchema>;
export const VirtualAccountTransactionListSchema = z.array(VirtualAccountTransactionSchema);

export const CustomerTransactionsRequestSchema = z.strictObject({ customer_identifier: pathParam });
export type CustomerTransactionsRequest = z.input<typeof CustomerTransactionsRequestSchema>;

export const MerchantTransactionsFilterRequestSchema = z.strictObject({
  ...paging,
  /** 10 digits. */
  virtualAccount: tenDigitAccount.optional(),
  customerIdentifier: z.string().min(1, 'must not be empty').optional(),
  /** MM-DD-YYYY. */
  startDate: mmddyyyyDash.optional(),
  endDate: mmddyyyyDash.optional(),
  transactionReference: z.string().min(1, 'must not be empty').optional(),
  session_id: z.string().min(1, 'must not be empty').optional(),
  dir: z.enum(['DESC', 'ASC'], { error: 'must be DESC or ASC' }).optional(),
});
export type MerchantTransactionsFilterRequest = z.input<typeof MerchantTransactionsFilterRequestSchema>;

export const MerchantTransactionsPageSchema = countedRows(VirtualAccountTransactionSchema, { query: opt(z.unknown()) });
export type MerchantTransactionsPage = z.output<typeof MerchantTransactionsPageSchema>;

export const CustomerByAccountNumberRequestSchema = z.strictObject({ virtual_account_number: tenDigitAccount });
export type CustomerByAccountNumberRequest = z.input<typeof CustomerByAccountNumberRequestSchema>;

export const VirtualAccountCustomerSchema = z.looseObject({
  first_name: opt(z.string()),
  last_name: opt(z.string()),
  mobile_num: opt(z.string()),
  email: opt(z.string()),
  customer_identifier: z.string(),
  virtual_account_number: tenDigitAccount,
});
export type VirtualAccountCustomer = z.output<typeof VirtualAccountCustomerSchema>;

export const AccountByCustomerIdentifierRequestSchema = z.strictObject({ customer_identifier: pathParam });
export type AccountByCustomerIdentifierRequest = z.input<typeof AccountByCustomerIdentifierRequestSchema>;

/** YY-MM-DD per the spec's text; YYYY-MM-DD is accepted too. */
const shortDate = z
  .string()
  .regex(/^(\d{2}|\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, 'must be a date YY-MM-DD (or YYYY-MM-DD)');

export const MerchantAccountsRequestSchema = z.strictObject({
  ...paging,
  startDate: shortDate.optional(),
  /** Spelled `EndDate` by the spec. */
  EndDate: shortDate.optional(),
});
export type MerchantAccountsRequest = z.input<typeof MerchantAccountsRequestSchema>;

export const MerchantAccountSchema = z.looseObject({
  bank_code: opt(z.string()),
  virtual_account_number: tenDigitAccount,
  beneficiary_account: opt(z.string()),
  created_at: opt(z.string()),
  updated_at: opt(z.string()),
  customer: opt(
    z.looseObject({ first_name: opt(z.string()), last_name: opt(z.string()), customer_identifier: opt(z.string()) }),
  ),
});
export type MerchantAccount = z.output<typeof MerchantAccountSchema>;
export const MerchantAccountListSchema = z.array(MerchantAccountSchema);

export const SimulatePaymentRequestSchema = z.strictObject({
  virtual_account_number: tenDigitAccount,
  /** Decimal string (optional). */
  amount: decimalAmountInput.optional(),
});
export type SimulatePaymentRequest = z.input<typeof SimulatePaymentRequestSchema>;

export const SimulatePaymentResultSchema = z
  .union([z.record(z.string(), z.unknown()), z.string(), z.null(), z.undefined()])
  .transform((v) => v ?? null);
export type SimulatePaymentResult = z.output<typeof SimulatePaymentResultSchema>;

export const WebhookErrorLogRequestSchema = z.strictObject(paging);
export type WebhookErrorLogRequest = z.input<typeof WebhookErrorLogRequestSchema>;

export const WebhookErrorLogRowSchema = z.looseObject({
  id: z.string(),
  transaction_ref: z.string(),
  payload: z.looseObject({
    hash: opt(z.string()),
    meta: opt(z.unknown()),
    channel: opt(z.string()),
    remarks: opt(z.string()),
    currency: opt(z.string()),
    fee_charged: opt(decimalString),
    sender_name: opt(z.string()),
    encrypted_body: opt(z.string()),
    settled_amount: opt(decimalString),
    principal_amount: opt(decimalString),
    transaction_date: opt(z.string()),
    customer_identifier: opt(z.string()),
    transaction_indicator: opt(z.string()),
    transaction_reference: opt(z.string()),
    virtual_account_number: opt(z.string()),
  }),
});
export type WebhookErrorLogRow = z.output<typeof WebhookErrorLogRowSchema>;

export const WebhookErrorLogPageSchema = countedRows(WebhookErrorLogRowSchema);
export type WebhookErrorLogPage = z.output<typeof WebhookErrorLogPageSchema>;

export const DeleteWebhookErrorLogRequestSchema = z.strictObject({ transaction_ref: pathParam });
export type DeleteWebhookErrorLogRequest = z.input<typeof DeleteWebhookErrorLogRequestSchema>;

/** The spec shows the integer 1 (rows deleted). */
export const DeleteWebhookErrorLogResultSchema = z.number().int();
export type DeleteWebhookErrorLogResult = z.output<typeof DeleteWebhookErrorLogResultSchema>;
