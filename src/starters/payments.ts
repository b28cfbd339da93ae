// Typed starters for direct card, bank and USSD payments: start, PIN/OTP/code, state.
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { z } from 'zod';
import { cardPaymentStateQuery, submitOtpUpdate, submitPinUpdate, type CardPaymentInput, type CardPaymentState } from '../shared/card';
import { paymentWorkflowId } from '../shared/payment-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';
import type { cardPaymentWorkflow } from '../workflows/card-payment';
import type { checkoutWorkflow } from '../workflows/checkout';
import {
  cancelRecurringSignal, checkoutStateQuery, checkoutUrlUpdate, cycleReference, recurringStateQuery, recurringWorkflowId,
  type CheckoutInput, type CheckoutState, type RecurringInput, type RecurringState,
} from '../shared/checkout';
import type { recurringChargeWorkflow } from '../workflows/recurring';
import { directPaymentStateQuery, submitBankCodeUpdate, type BankPaymentInput, type DirectPaymentState, type UssdPaymentInput } from '../shared/bank-ussd';
import type { bankPaymentWorkflow } from '../workflows/bank-payment';
import type { ussdPaymentWorkflow } from '../workflows/ussd-payment';

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

// ---- bank debit and USSD ----

const reference = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1-100 letters, digits, _ . or -');
const lowestUnit = z.number().int('must be an integer in the lowest unit').positive('must be greater than 0');
const customer = z.object({ name: z.string().min(1, 'is required'), email: z.email('must be an e-mail address') });

export const bankPaymentInputSchema = z.object({
  transactionRef: reference, amount: lowestUnit, currency: z.literal('NGN'),
  bank: z.object({ bankCode: z.string().regex(/^\d{3,6}$/, 'must be a NIP bank code'), accountOrPhone: z.string().regex(/^\d{10,11}$/, 'must be an account number or phone number') }),
  customer, passCharge: z.boolean().optional(), codeTimeoutMs: z.number().int().positive().optional(), webhookGraceMs: z.number().int().nonnegative().optional(),
});
export const ussdPaymentInputSchema = z.object({
  transactionRef: reference, amount: lowestUnit, currency: z.literal('NGN'), bankCode: z.string().regex(/^\d{3,6}$/, 'must be a USSD bank code'),
  customer, passCharge: z.boolean().optional(), webhookGraceMs: z.number().int().nonnegative().optional(),
});

function parseOrThrow<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new CardInputError(parsed.error.issues.map((i) => ({ field: i.path.join('.'), rule: i.message })));
  return parsed.data;
}

export async function startBankPayment(client: Client, taskQueue: string, raw: BankPaymentInput) {
  const input = parseOrThrow(bankPaymentInputSchema, raw) as BankPaymentInput;
  return client.workflow.start<typeof bankPaymentWorkflow>('bankPaymentWorkflow', {
    workflowId: paymentWorkflowId(input.transactionRef), taskQueue, args: [input],
    typedSearchAttributes: paymentSearchAttributes({ flow: 'bank', reference: input.transactionRef, amount: input.amount, currency: input.currency, status: 'initiating' }),
  });
}
export async function startUssdPayment(client: Client, taskQueue: string, raw: UssdPaymentInput) {
  const input = parseOrThrow(ussdPaymentInputSchema, raw) as UssdPaymentInput;
  return client.workflow.start<typeof ussdPaymentWorkflow>('ussdPaymentWorkflow', {
    workflowId: paymentWorkflowId(input.transactionRef), taskQueue, args: [input],
    typedSearchAttributes: paymentSearchAttributes({ flow: 'ussd', reference: input.transactionRef, amount: input.amount, currency: input.currency, status: 'initiating' }),
  });
}
export const submitBankCode = (client: Client, ref: string, code: string): Promise<DirectPaymentState> => handle(client, ref).executeUpdate(submitBankCodeUpdate, { args: [code] });
export const getDirectPaymentState = (client: Client, ref: string): Promise<DirectPaymentState> => handle(client, ref).query(directPaymentStateQuery);

// ---- hosted checkout ----
export const checkoutInputSchema = z.object({
  transactionRef: reference, amount: lowestUnit, currency: z.enum(['NGN', 'USD']), email: z.email('must be an e-mail address'),
  customerName: z.string().optional(), callbackUrl: z.url().optional(), channels: z.array(z.enum(['card', 'bank', 'ussd', 'transfer'])).min(1).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(), passCharge: z.boolean().optional(), subMerchantId: z.string().min(1).optional(),
  isRecurring: z.boolean().optional(), expiryMs: z.number().int().positive().optional(), webhookGraceMs: z.number().int().nonnegative().optional(),
});

/** Starts the checkout flow and returns checkout_url at once (update-with-start), with the handle to follow it. */
export async function startCheckout(client: Client, taskQueue: string, raw: CheckoutInput) {
  const input = parseOrThrow(checkoutInputSchema, raw) as CheckoutInput;
  const startOp = new WithStartWorkflowOperation<typeof checkoutWorkflow>('checkoutWorkflow', {
    workflowId: paymentWorkflowId(input.transactionRef), taskQueue, args: [input], workflowIdConflictPolicy: 'FAIL',
    typedSearchAttributes: paymentSearchAttributes({ flow: input.isRecurring ? 'recurring' : 'checkout', reference: input.transactionRef, amount: input.amount, currency: input.currency, status: 'initiating' }),
  });
  const { checkoutUrl } = await client.workflow.executeUpdateWithStart(checkoutUrlUpdate, { startWorkflowOperation: startOp });
  return { checkoutUrl, handle: await startOp.workflowHandle() };
}
export const getCheckoutState = (client: Client, ref: string): Promise<CheckoutState> => handle(client, ref).query(checkoutStateQuery);

// ---- recurring charges ----
export const recurringInputSchema = z.object({
  planRef: z.string().regex(/^[A-Za-z0-9_.-]{1,90}$/, 'must be 1-90 letters, digits, _ . or -'),
  amount: lowestUnit, currency: z.enum(['NGN', 'USD']), email: z.email('must be an e-mail address'),
  intervalMs: z.number().int().min(1_000, 'must be at least 1000 ms'), maxCycles: z.number().int().min(1).optional(), cyclesPerRun: z.number().int().min(1).optional(),
  checkout: z.object({ callbackUrl: z.url().optional(), metadata: z.record(z.string(), z.unknown()).optional(), expiryMs: z.number().int().positive().optional(), webhookGraceMs: z.number().int().nonnegative().optional(), customerName: z.string().optional() }).optional(),
});

export async function startRecurring(client: Client, taskQueue: string, raw: RecurringInput) {
  const input = parseOrThrow(recurringInputSchema, raw) as RecurringInput;
  return client.workflow.start<typeof recurringChargeWorkflow>('recurringChargeWorkflow', {
    workflowId: recurringWorkflowId(input.planRef), taskQueue, args: [input],
    typedSearchAttributes: paymentSearchAttributes({ flow: 'recurring', reference: input.planRef, amount: input.amount, currency: input.currency, status: 'awaiting_first_payment' }),
  });
}
/** The first payment's checkout_url (its child checkout flow runs under the first cycle's reference). */
export async function firstPaymentCheckoutUrl(client: Client, planRef: string, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await getCheckoutState(client, cycleReference(planRef, 1)).catch(() => undefined);
    if (s?.checkoutUrl) return s.checkoutUrl;
    if (Date.now() > deadline) throw new Error(`no checkout_url for ${planRef} yet`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
export const cancelRecurring = (client: Client, planRef: string) => client.workflow.getHandle(recurringWorkflowId(planRef)).signal(cancelRecurringSignal);
export const getRecurringState = (client: Client, planRef: string): Promise<RecurringState> => client.workflow.getHandle(recurringWorkflowId(planRef)).query(recurringStateQuery);
