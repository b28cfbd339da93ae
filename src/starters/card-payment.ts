// Typed starter of the direct card payment flow (the charge, then PIN/OTP or 3DS), for backends.
// Every input is validated with zod before a workflow starts (errors name the field and the rule,
// never the value). Shared rules and errors: ./payment-common.ts.
// The card data, PIN and OTP are sealed into the claim-check store here, in the backend's process:
// the workflow gets only a handle (and BIN, last four, brand). PIN and OTP go to the running flow
// as Updates carrying their handle; the outcome comes back synchronously as the next state or a
// PaymentStepError.
import type { WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import {
  cardFirstStepUpdate,
  cardPaymentStateQuery,
  submitCardUpdate,
  submitOtpUpdate,
  submitPinUpdate,
  type CardDetails,
  type CardPaymentInput,
  type CardPaymentState,
} from '../shared/card-payment';
import { cardDisplay, type SealedCard } from '../shared/claim-check';
import type { StarterContext } from './connect';
import { retryTransient } from './temporal-retry';
import { startPayment, startPaymentWithUpdate } from './start-payment';
import type { cardPaymentWorkflow } from '../workflows/card-payment';
import {
  customer,
  graceMs,
  handle,
  httpUrl,
  lowestUnit,
  ms,
  parsePayment,
  paymentSearch,
  queryPayment,
  reference,
  sendSealedCode,
  step,
} from './payment-common';
import { merchantEventTargetSchema } from '../shared/merchant-event';
import { withSignedReturn } from '../config/return-links';

const sealCard = async (ctx: Pick<StarterContext, 'claimCheck'>, card: CardDetails): Promise<SealedCard> => ({
  handle: await ctx.claimCheck.seal('card', {
    number: card.number,
    cvv: card.cvv,
    expiryMonth: card.expiryMonth,
    expiryYear: card.expiryYear,
  } satisfies CardDetails),
  ...cardDisplay(card.number),
});

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
  notify: merchantEventTargetSchema.optional(),
});

/**
 * Validates, then seals the card: the input holds its handle and display data only (the PAN and CVV
 * stay in this process). The card starters' and the Nexus `cardPayment` sealing's one check-and-seal.
 */
export async function sealCardRequest(
  ctx: Pick<StarterContext, 'claimCheck'>,
  raw: CardPaymentRequest,
): Promise<CardPaymentInput> {
  const { card, ...rest } = parsePayment(cardPaymentInputSchema, raw);
  return { ...rest, card: await sealCard(ctx, card) };
}

// The 3DS return URL is signed here, where it is built (GET /payments/return shows state only then).
const sealedCardInput = async (ctx: StarterContext, raw: CardPaymentRequest): Promise<CardPaymentInput> =>
  withSignedReturn(ctx, await sealCardRequest(ctx, raw));

/** Starts the card charge (B1) under workflow id payment-<transactionRef>; follow it with getCardPaymentState / handle.result(). */
export async function startCardPayment(
  ctx: StarterContext,
  raw: CardPaymentRequest,
): Promise<WorkflowHandle<typeof cardPaymentWorkflow>> {
  const input = await sealedCardInput(ctx, raw);
  // A reference pays once: a finished flow's id is not reused (nor a held webhook's, while it runs).
  return startPayment<typeof cardPaymentWorkflow>(ctx, {
    operation: 'start card payment',
    workflowType: 'cardPaymentWorkflow',
    reference: input.transactionRef,
    args: [input],
    search: paymentSearch('card', input, 'charging'),
  });
}
/**
 * Starts the card charge (B1) and answers at once with the first step (update-with-start): awaiting_pin,
 * awaiting_otp, awaiting_3ds with authUrl — or the end (e.g. failed: Card declined).
 */
export async function startCardPaymentForStep(
  ctx: StarterContext,
  raw: CardPaymentRequest,
): Promise<{ state: CardPaymentState; handle: WorkflowHandle<typeof cardPaymentWorkflow> }> {
  const input = await sealedCardInput(ctx, raw);
  const { answer, handle } = await startPaymentWithUpdate<typeof cardPaymentWorkflow, CardPaymentState>(ctx, {
    workflowType: 'cardPaymentWorkflow',
    reference: input.transactionRef,
    args: [input],
    search: paymentSearch('card', input, 'charging'),
    update: cardFirstStepUpdate,
  });
  return { state: answer, handle };
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
/** In awaiting_card (the sealed card expired before the charge was sent): the card again; answers the next step. */
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
