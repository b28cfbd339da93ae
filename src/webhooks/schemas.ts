// zod schemas for the notifications the service sends (spec, Events: the payment webhook, E-1, and the virtual-account credit notification, E-2).
import { z } from 'zod';

const lowestUnit = z.number().int('must be an integer in the lowest currency unit').nonnegative();
const decimalString = z.string().regex(/^\d+(\.\d{1,2})?$/, 'must be a decimal string such as "100.00"');

export const paymentWebhookSchema = z.object({
  Event: z.string().min(1),
  TransactionRef: z.string().min(1),
  Body: z
    .object({
      amount: lowestUnit,
      transaction_ref: z.string().min(1),
      gateway_ref: z.string().nullish(),
      transaction_status: z.string().min(1),
      email: z.string().nullish(),
      merchant_id: z.string().nullish(),
      currency: z.string().min(1),
      transaction_type: z.string().min(1),
      merchant_amount: z.number().nullish(),
      created_at: z.string().nullish(),
      customer_mobile: z.string().nullish(),
      meta: z.record(z.string(), z.unknown()).nullish(),
      payment_information: z
        .object({
          payment_type: z.string().nullish(),
          pan: z.string().nullish(),
          card_type: z.string().nullish(),
          token_id: z.string().nullish(),
        })
        .passthrough()
        .nullish(),
      is_recurring: z.boolean().nullish(),
    })
    .passthrough(),
});
export type PaymentWebhookBody = z.infer<typeof paymentWebhookSchema>;

export const virtualAccountWebhookSchema = z
  .object({
    transaction_reference: z.string().min(1),
    virtual_account_number: z.string().regex(/^\d{10}$/, 'must be 10 digits'),
    principal_amount: decimalString,
    settled_amount: decimalString,
    fee_charged: decimalString,
    transaction_date: z.string().min(1),
    customer_identifier: z.string().min(1),
    transaction_indicator: z.string().min(1),
    remarks: z.string().nullish(),
    currency: z.string().min(1),
    channel: z.string().nullish(),
    sender_name: z.string().nullish(),
    meta: z.record(z.string(), z.unknown()).nullish(),
    encrypted_body: z.string().nullish(),
    version: z.enum(['v2', 'v3']).optional(),
  })
  .passthrough();
export type VirtualAccountWebhookBody = z.infer<typeof virtualAccountWebhookSchema>;
