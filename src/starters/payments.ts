// Typed starters for direct card payments: start, PIN, OTP, state.
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { cardPaymentStateQuery, submitOtpUpdate, submitPinUpdate, type CardPaymentInput, type CardPaymentState } from '../shared/card';
import { paymentWorkflowId } from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';
import type { cardPaymentWorkflow } from '../workflows/card-payment';

export const cardPaymentInputSchema = z.object({
  transactionRef: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1-100 letters, digits, _ . or -'),
  amount: z.number().int('must be an integer in the lowest unit').positive('must be greater than 0'),
  currency: z.enum(['NGN', 'USD']),
  card: z.object({
    number: z.string().regex(/^\d{12,19}$/, 'must be 12 to 19 digits'),
    cvv: z.string().regex(/^\d{3,4}$/, 'must be 3 or 4 digits'),
    expiryMonth: z.string().regex(/^(0[1-9]|1[0-2])$/, 'must be 01 to 12'),
    expiryYear: z.string().regex(/^\d{2}$/, 'must be 2 digits'),
  }),
  customer: z.object({ name: z.string().min(1, 'is required'), email: z.email('must be an e-mail address') }),
  passCharge: z.boolean().optional(),
  redirectUrl: z.url().optional(),
  pinTimeoutMs: z.number().int().positive().optional(),
  otpTimeoutMs: z.number().int().positive().optional(),
  threeDsTimeoutMs: z.number().int().positive().optional(),
  webhookGraceMs: z.number().int().nonnegative().optional(),
});

export class CardInputError extends Error {
  // Issues name the field and the rule; the rejected value (card data) is never echoed.
  constructor(readonly issues: { field: string; rule: string }[]) {
    super(`invalid card payment: ${issues.map((i) => `${i.field} ${i.rule}`).join('; ')}`);
    this.name = 'CardInputError';
  }
}

export async function startCardPayment(client: Client, taskQueue: string, raw: CardPaymentInput) {
  const parsed = cardPaymentInputSchema.safeParse(raw);
  if (!parsed.success) throw new CardInputError(parsed.error.issues.map((i) => ({ field: i.path.join('.'), rule: i.message })));
  const input = parsed.data as CardPaymentInput;
  return client.workflow.start<typeof cardPaymentWorkflow>('cardPaymentWorkflow', {
    workflowId: paymentWorkflowId(input.transactionRef),
    taskQueue,
    args: [input],
    typedSearchAttributes: paymentSearchAttributes({ flow: 'card', reference: input.transactionRef, amount: input.amount, currency: input.currency, status: 'charging' }),
  });
}

const handle = (client: Client, ref: string) => client.workflow.getHandle(paymentWorkflowId(ref));
export const submitPin = (client: Client, ref: string, pin: string): Promise<CardPaymentState> => handle(client, ref).executeUpdate(submitPinUpdate, { args: [pin] });
export const submitOtp = (client: Client, ref: string, otp: string): Promise<CardPaymentState> => handle(client, ref).executeUpdate(submitOtpUpdate, { args: [otp] });
export const getCardPaymentState = (client: Client, ref: string): Promise<CardPaymentState> => handle(client, ref).query(cardPaymentStateQuery);
