// Typed starters for backends: direct card, bank and USSD payments, hosted checkout and
// recurring charges. Every input is validated with zod before a workflow starts (errors name the
// field and the rule, never the value: card data is not echoed). Card data, PINs, OTPs and bank
// codes are sealed into the claim-check store here, in the backend's process: the workflow gets
// only a handle (and BIN, last four, brand). PIN, OTP and bank codes go to the running flow as
// Updates carrying their handle; the outcome comes back synchronously as the next state or a
// PaymentStepError.
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type QueryDefinition,
  type WorkflowHandle,
} from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { USSD_BANK_CODES } from '../api';
import {
  cardFirstStepUpdate,
  cardPaymentStateQuery,
  submitCardUpdate,
  submitOtpUpdate,
  submitPinUpdate,
  type CardDetails,
  type CardPaymentInput,
  type CardPaymentState,
} from '../shared/card';
import { cardDisplay, SECRET_UNAVAILABLE, type SealedCard, type SecretPurpose } from '../shared/claim-check';
import type { StarterContext } from './connect';
import { parseStarterInput } from '../shared/input-error';
import { retryTransient } from './temporal-retry';
import {
  directPaymentStateQuery,
  submitBankCodeUpdate,
  ussdCodeUpdate,
  type BankPaymentInput,
  type DirectPaymentState,
  type UssdPaymentInput,
} from '../shared/bank-ussd';
import { checkoutStateQuery, checkoutUrlUpdate, type CheckoutInput, type CheckoutState } from '../shared/checkout';
import {
  cancelRecurringSignal,
  cycleReference,
  recurringStateQuery,
  recurringWorkflowId,
  tokenChargeStateQuery,
  type RecurringInput,
  type RecurringState,
  type TokenChargeState,
} from '../shared/recurring';
import { paymentWorkflowId } from '../shared/payment-webhook';
import { paymentSearchAttributes, type PaymentSearchFields } from '../shared/search-attributes';
import { startFlow } from './start-flow';
import type { cardPaymentWorkflow } from '../workflows/card-payment';
import type { bankPaymentWorkflow } from '../workflows/bank-payment';
import type { ussdPaymentWorkflow } from '../workflows/ussd-payment';
import type { checkoutWorkflow } from '../workflows/checkout';
import type { recurringChargeWorkflow } from '../workflows/recurring';
import { paymentFlowRun } from '../temporal/payment-run';

// ---- errors ----

/** A flow for this reference exists already (running, or a held webhook for it): a reference pays once. */
export class DuplicateReferenceError extends Error {
  constructor(readonly reference: string) {
    super(`a payment flow for reference ${reference} exists already`);
    this.name = 'DuplicateReferenceError';
  }
}

/**
 * A PIN, OTP or bank code that did not move the flow on.
 *  - not_expected: the flow was not waiting for it, or it is malformed (refused by the validator; nothing in history);
 *  - refused: the service refused it; the flow keeps waiting (`details.refusedCodes` of `details.limit`);
 *  - outcome_unknown: the service's answer was lost and the payment is still pending: send it again;
 *  - ended: the payment has ended (e.g. the limit of refused codes was reached, or the flow is over);
 *  - resubmit: the sealed code expired before the flow could use it: send it again.
 */
export class PaymentStepError extends Error {
  constructor(
    readonly kind: 'not_expected' | 'refused' | 'outcome_unknown' | 'ended' | 'resubmit',
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'PaymentStepError';
  }
}

const KIND_BY_TYPE: Record<string, PaymentStepError['kind']> = {
  Refused: 'refused',
  OutcomeUnknown: 'outcome_unknown',
  Ended: 'ended',
  [SECRET_UNAVAILABLE]: 'resubmit',
};

/** Runs an Update (retried through a server restart with one update id) and words its failure. */
async function step<T>(run: (updateId: string) => Promise<T>): Promise<T> {
  const updateId = randomUUID();
  try {
    return await retryTransient('payment step (Update)', () => run(updateId));
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const cause = err.cause instanceof ApplicationFailure ? err.cause : undefined;
      const kind = (cause?.type && KIND_BY_TYPE[cause.type]) || 'not_expected';
      throw new PaymentStepError(kind, cause?.message ?? err.message, cause?.details?.[0]);
    }
    if (err instanceof WorkflowNotFoundError)
      throw new PaymentStepError(
        'ended',
        'no payment flow is waiting for this reference (it has ended or never started)',
      );
    throw err;
  }
}

/** A payment input, validated (StarterInputError 'invalid payment input: ...' naming every broken rule). */
const parsePayment = <S extends z.ZodType>(schema: S, raw: unknown): z.output<S> =>
  parseStarterInput(schema, raw, 'payment');

/** A payment's search attributes at its start: flow, reference, amount, currency, first status. */
const paymentSearch = (
  flow: string,
  input: { transactionRef: string; amount: number; currency: string },
  status: string,
): PaymentSearchFields => ({
  flow,
  reference: input.transactionRef,
  amount: input.amount,
  currency: input.currency,
  status,
});

/** The payments' duplicate rule on top of startFlow's: a reference already started is a DuplicateReferenceError. */
async function startOnce<H>(reference: string, start: () => Promise<H>): Promise<H> {
  try {
    return await start();
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new DuplicateReferenceError(reference);
    throw err;
  }
}

// ---- shared rules ----

const reference = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'must be 1-100 letters, digits, _ . or -');
const lowestUnit = z.number().int('must be an integer in the lowest unit').positive('must be greater than 0');
const customer = z.object({ name: z.string().min(1, 'is required'), email: z.email('must be an e-mail address') });
const ms = z.number().int('must be an integer number of ms').positive('must be greater than 0');
const graceMs = z.number().int('must be an integer number of ms').nonnegative('must not be negative');
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const handle = (client: Client, ref: string): WorkflowHandle => client.workflow.getHandle(paymentWorkflowId(ref));

/**
 * Queries the payment flow under payment-<ref>. A webhook that arrives after the flow closed (a
 * late redelivery) starts a holder under the same id, which then is the id's latest run; the
 * query goes to the flow's own (closed) run instead, so a finished payment still answers.
 */
async function queryPayment<T>(client: Client, ref: string, query: QueryDefinition<T, []>): Promise<T> {
  try {
    return await handle(client, ref).query(query);
  } catch (err) {
    const own = await paymentFlowRun(client, ref).catch(() => undefined);
    if (!own?.behindHolder) throw err; // the latest run is the flow itself: its failure stands
    return own.handle.query(query);
  }
}

/**
 * Checks a code's format here (a malformed one is never sealed), seals it, and sends its handle
 * as the Update; the record is deleted afterwards whatever happened (the activity deletes it as
 * soon as the service answered; this covers an Update refused before use).
 */
async function sendSealedCode<S>(
  ctx: StarterContext,
  ref: string,
  purpose: SecretPurpose,
  code: string,
  rule: { pattern: RegExp; message: string },
  send: (h: WorkflowHandle, sealed: string, updateId: string) => Promise<S>,
): Promise<S> {
  if (typeof code !== 'string' || !rule.pattern.test(code)) throw new PaymentStepError('not_expected', rule.message);
  const sealed = await ctx.claimCheck.seal(purpose, code);
  try {
    return await step((updateId) => send(handle(ctx.client, ref), sealed, updateId));
  } finally {
    await ctx.claimCheck.discard(sealed).catch(() => undefined);
  }
}

const sealCard = async (ctx: StarterContext, card: CardDetails): Promise<SealedCard> => ({
  handle: await ctx.claimCheck.seal('card', {
    number: card.number,
    cvv: card.cvv,
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
  } satisfies CardDetails),
  ...cardDisplay(card.number),
});

// ---- direct card ----

const cardDetails = z.object({
  number: z.string().regex(/^\d{12,19}$/, 'must be 12 to 19 digits'),
  cvv: z.string().regex(/^\d{3,4}$/, 'must be 3 or 4 digits'),
  expiryMonth: z.string().regex(/^(0[1-9]|1[0-2])$/, 'must be 01 to 12'),
  expiryYear: z.string().regex(/^\d{2}$/, 'must be 2 digits'),
});

/** What a backend passes to start a card payment: the card in the clear, sealed before any workflow sees it. */
export type CardPaymentRequest = Omit<CardPaymentInput, 'card'> & { card: CardDetails };

export const cardPaymentInputSchema = z.object({
  transactionRef: reference,
  amount: lowestUnit,
  currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }),
  card: cardDetails,
  customer,
  passCharge: z.boolean().optional(),
  redirectUrl: httpUrl.optional(),
  pinTimeoutMs: ms.optional(),
  otpTimeoutMs: ms.optional(),
  threeDsTimeoutMs: ms.optional(),
  threeDsPollMs: ms.optional(),
  webhookGraceMs: graceMs.optional(),
  cardTimeoutMs: ms.optional(),
});

/** Validates, then seals the card: the workflow input holds its handle and display data only. */
async function sealedCardInput(ctx: StarterContext, raw: CardPaymentRequest): Promise<CardPaymentInput> {
  const { card, ...rest } = parsePayment(cardPaymentInputSchema, raw);
  return { ...rest, card: await sealCard(ctx, card) };
}

/** Starts B1 under workflow id payment-<transactionRef>; follow it with getCardPaymentState / handle.result(). */
export async function startCardPayment(
  ctx: StarterContext,
  raw: CardPaymentRequest,
): Promise<WorkflowHandle<typeof cardPaymentWorkflow>> {
  const input = await sealedCardInput(ctx, raw);
  // A reference pays once: a finished flow's id is not reused (nor a held webhook's, while it runs).
  return startOnce(input.transactionRef, () =>
    startFlow<typeof cardPaymentWorkflow>(ctx, {
      operation: 'start card payment',
      workflowType: 'cardPaymentWorkflow',
      workflowId: paymentWorkflowId(input.transactionRef),
      args: [input],
      search: paymentSearch('card', input, 'charging'),
    }),
  );
}
/**
 * Starts B1 and answers at once with the first step (update-with-start): awaiting_pin,
 * awaiting_otp, awaiting_3ds with authUrl — or the end (e.g. failed: Card declined).
 */
export async function startCardPaymentForStep(
  ctx: StarterContext,
  raw: CardPaymentRequest,
): Promise<{ state: CardPaymentState; handle: WorkflowHandle<typeof cardPaymentWorkflow> }> {
  const { client, taskQueue } = ctx;
  const input = await sealedCardInput(ctx, raw);
  const startOp = new WithStartWorkflowOperation<typeof cardPaymentWorkflow>('cardPaymentWorkflow', {
    workflowId: paymentWorkflowId(input.transactionRef),
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: paymentSearchAttributes(paymentSearch('card', input, 'charging')),
  });
  const state = await startOnce(input.transactionRef, () =>
    client.workflow.executeUpdateWithStart(cardFirstStepUpdate, { startWorkflowOperation: startOp }),
  );
  return { state, handle: await startOp.workflowHandle() };
}
/** The next state (awaiting_otp, confirming...), or a PaymentStepError. */
export const submitPin = (ctx: StarterContext, ref: string, pin: string): Promise<CardPaymentState> =>
  sendSealedCode(ctx, ref, 'pin', pin, { pattern: /^\d{4}$/, message: 'pin must be 4 digits' }, (h, sealed, updateId) =>
    h.executeUpdate(submitPinUpdate, { args: [sealed], updateId }),
  );
export const submitOtp = (ctx: StarterContext, ref: string, otp: string): Promise<CardPaymentState> =>
  sendSealedCode(
    ctx,
    ref,
    'otp',
    otp,
    { pattern: /^\d{4,8}$/, message: 'otp must be 4 to 8 digits' },
    (h, sealed, updateId) => h.executeUpdate(submitOtpUpdate, { args: [sealed], updateId }),
  );
/** In awaiting_card (the sealed card expired before B1 was sent): the card again; answers the next step. */
export async function resubmitCard(ctx: StarterContext, ref: string, raw: CardDetails): Promise<CardPaymentState> {
  const card = parsePayment(cardDetails, raw);
  const sealed = await sealCard(ctx, card);
  try {
    return await step((updateId) =>
      handle(ctx.client, ref).executeUpdate(submitCardUpdate, { args: [sealed], updateId }),
    );
  } catch (err) {
    await ctx.claimCheck.discard(sealed.handle).catch(() => undefined); // refused: never used
    throw err;
  }
}
export const getCardPaymentState = (ctx: Pick<StarterContext, 'client'>, ref: string): Promise<CardPaymentState> =>
  retryTransient('card payment state (query)', () => queryPayment(ctx.client, ref, cardPaymentStateQuery));

// ---- bank debit and USSD ----

export const bankPaymentInputSchema = z.object({
  transactionRef: reference,
  amount: lowestUnit,
  currency: z.literal('NGN', { error: 'must be NGN' }),
  bank: z.object({
    bankCode: z.string().regex(/^\d{3,6}$/, 'must be a NIP bank code (3 to 6 digits)'),
    accountOrPhone: z.string().regex(/^\d{10,13}$/, 'must be a 10-digit account number or a phone number'),
  }),
  customer,
  passCharge: z.boolean().optional(),
  codeTimeoutMs: ms.optional(),
  webhookGraceMs: graceMs.optional(),
});
export const ussdPaymentInputSchema = z.object({
  transactionRef: reference,
  amount: lowestUnit,
  currency: z.literal('NGN', { error: 'must be NGN' }),
  bankCode: z.enum(USSD_BANK_CODES, { error: 'must be one of the USSD bank codes the spec lists' }),
  customer,
  passCharge: z.boolean().optional(),
  webhookGraceMs: graceMs.optional(),
});

export async function startBankPayment(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  raw: BankPaymentInput,
): Promise<WorkflowHandle<typeof bankPaymentWorkflow>> {
  const input = parsePayment(bankPaymentInputSchema, raw) as BankPaymentInput;
  return startOnce(input.transactionRef, () =>
    startFlow<typeof bankPaymentWorkflow>(ctx, {
      operation: 'start bank payment',
      workflowType: 'bankPaymentWorkflow',
      workflowId: paymentWorkflowId(input.transactionRef),
      args: [input],
      search: paymentSearch('bank', input, 'initiating'),
    }),
  );
}
/** Starts B5 and returns the code to dial and its expiry at once (update-with-start), with the handle to follow the payment. */
export async function startUssdPayment(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  raw: UssdPaymentInput,
): Promise<{ ussdCode: string; expiresAt?: string; handle: WorkflowHandle<typeof ussdPaymentWorkflow> }> {
  const input = parsePayment(ussdPaymentInputSchema, raw) as UssdPaymentInput;
  const { client, taskQueue } = ctx;
  const startOp = new WithStartWorkflowOperation<typeof ussdPaymentWorkflow>('ussdPaymentWorkflow', {
    workflowId: paymentWorkflowId(input.transactionRef),
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: paymentSearchAttributes(paymentSearch('ussd', input, 'initiating')),
  });
  const { ussdCode, expiresAt } = await startOnce(input.transactionRef, () =>
    client.workflow.executeUpdateWithStart(ussdCodeUpdate, { startWorkflowOperation: startOp }),
  );
  return { ussdCode, expiresAt, handle: await startOp.workflowHandle() };
}
/** The payer's token or OTP: the next state, or a PaymentStepError. */
export const submitBankCode = (ctx: StarterContext, ref: string, code: string): Promise<DirectPaymentState> =>
  sendSealedCode(
    ctx,
    ref,
    'bank-code',
    code,
    { pattern: /^\d{4,8}$/, message: 'code must be 4 to 8 digits' },
    (h, sealed, updateId) => h.executeUpdate(submitBankCodeUpdate, { args: [sealed], updateId }),
  );
export const getDirectPaymentState = (ctx: Pick<StarterContext, 'client'>, ref: string): Promise<DirectPaymentState> =>
  retryTransient('payment state (query)', () => queryPayment(ctx.client, ref, directPaymentStateQuery));

/** Polls a state query until `done` holds (for backends and tests that wait for a step, e.g. the USSD code). */
export async function waitForState<S>(
  read: () => Promise<S>,
  done: (s: S) => boolean,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<S> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  let last: S | undefined;
  for (;;) {
    last = await read().catch(() => last);
    if (last !== undefined && done(last)) return last;
    if (Date.now() > deadline) throw new Error(`state not reached in time; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}

// ---- hosted checkout ----

export const checkoutInputSchema = z.object({
  transactionRef: reference,
  amount: lowestUnit,
  currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }),
  email: z.email('must be an e-mail address'),
  customerName: z.string().min(1).optional(),
  callbackUrl: httpUrl.optional(),
  channels: z
    .array(z.enum(['card', 'bank', 'ussd', 'transfer'], { error: 'must be card, bank, ussd or transfer' }))
    .min(1, 'must not be empty')
    .optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  passCharge: z.boolean().optional(),
  subMerchantId: z.string().min(1, 'must not be empty').optional(),
  isRecurring: z.boolean().optional(),
  expiryMs: ms.optional(),
  webhookGraceMs: graceMs.optional(),
});

/** Starts the checkout flow and returns checkout_url at once (update-with-start), with the handle to follow it. */
export async function startCheckout(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  raw: CheckoutInput,
): Promise<{ checkoutUrl: string; handle: WorkflowHandle<typeof checkoutWorkflow> }> {
  const input = parsePayment(checkoutInputSchema, raw) as CheckoutInput;
  const { client, taskQueue } = ctx;
  const startOp = new WithStartWorkflowOperation<typeof checkoutWorkflow>('checkoutWorkflow', {
    workflowId: paymentWorkflowId(input.transactionRef),
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: paymentSearchAttributes(
      paymentSearch(input.isRecurring ? 'recurring' : 'checkout', input, 'initiating'),
    ),
  });
  const { checkoutUrl } = await startOnce(input.transactionRef, () =>
    client.workflow.executeUpdateWithStart(checkoutUrlUpdate, { startWorkflowOperation: startOp }),
  );
  return { checkoutUrl, handle: await startOp.workflowHandle() };
}
export const getCheckoutState = (ctx: Pick<StarterContext, 'client'>, ref: string): Promise<CheckoutState> =>
  retryTransient('checkout state (query)', () => queryPayment(ctx.client, ref, checkoutStateQuery));

// ---- recurring charges ----

export const recurringInputSchema = z.object({
  planRef: z.string().regex(/^[A-Za-z0-9_.-]{1,90}$/, 'must be 1-90 letters, digits, _ . or -'),
  amount: lowestUnit,
  currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }),
  email: z.email('must be an e-mail address'),
  intervalMs: z.number().int().min(1_000, 'must be at least 1000 ms'),
  maxCycles: z.number().int().min(1, 'must be at least 1').optional(),
  cyclesPerRun: z.number().int().min(1, 'must be at least 1').optional(),
  maxConsecutiveFailures: z.number().int().min(1, 'must be at least 1').optional(),
  webhookGraceMs: graceMs.optional(),
  checkout: z
    .object({
      callbackUrl: httpUrl.optional(),
      metadata: z.record(z.string(), z.unknown()).optional(),
      expiryMs: ms.optional(),
      webhookGraceMs: graceMs.optional(),
      customerName: z.string().min(1).optional(),
      passCharge: z.boolean().optional(),
      subMerchantId: z.string().min(1).optional(),
    })
    .optional(),
});

/** Starts the plan (workflow id recurring-<planRef>); get the first payment's checkout_url with firstPaymentCheckoutUrl. */
export async function startRecurring(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  raw: RecurringInput,
): Promise<WorkflowHandle<typeof recurringChargeWorkflow>> {
  const input = parsePayment(recurringInputSchema, raw) as RecurringInput;
  return startOnce(input.planRef, () =>
    startFlow<typeof recurringChargeWorkflow>(ctx, {
      operation: 'start recurring plan',
      workflowType: 'recurringChargeWorkflow',
      workflowId: recurringWorkflowId(input.planRef),
      args: [input],
      search: {
        flow: 'recurring',
        reference: input.planRef,
        amount: input.amount,
        currency: input.currency,
        status: 'awaiting_first_payment',
      },
    }),
  );
}
/** The first payment's checkout_url: its child checkout flow runs under the first cycle's reference. */
export async function firstPaymentCheckoutUrl(
  ctx: Pick<StarterContext, 'client'>,
  planRef: string,
  timeoutMs = 15_000,
): Promise<string> {
  const s = await waitForState(
    () => getCheckoutState(ctx, cycleReference(planRef, 1)),
    (c) => c.checkoutUrl !== undefined || c.status === 'failed',
    { timeoutMs },
  );
  if (!s.checkoutUrl) throw new Error(`the first payment of ${planRef} has no checkout: ${s.reason ?? s.status}`);
  return s.checkoutUrl;
}
/** Stops the plan: no further charge; the token is cancelled with A5. */
export const cancelRecurring = (ctx: Pick<StarterContext, 'client'>, planRef: string): Promise<void> =>
  ctx.client.workflow.getHandle(recurringWorkflowId(planRef)).signal(cancelRecurringSignal);
export const getRecurringState = (ctx: Pick<StarterContext, 'client'>, planRef: string): Promise<RecurringState> =>
  ctx.client.workflow.getHandle(recurringWorkflowId(planRef)).query(recurringStateQuery);
/** One cycle's charge (from its own workflow, payment-<planRef>-C<n>, n ≥ 2). */
export const getCycleChargeState = (
  ctx: Pick<StarterContext, 'client'>,
  planRef: string,
  cycle: number,
): Promise<TokenChargeState> => handle(ctx.client, cycleReference(planRef, cycle)).query(tokenChargeStateQuery);
