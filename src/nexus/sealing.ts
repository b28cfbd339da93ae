// For the caller's backend (not its workflow): what a Nexus operation takes in place of a secret. A
// Nexus operation's input is recorded in the caller's workflow history, so the card data, the BVN and
// the mandate OTP are checked and sealed here, in the caller's process, as the starters seal them; the
// operation gets a claim-check handle (and display data), never the secret, not even encrypted.
import type { CardPaymentInput } from '../shared/card-payment';
import { StarterInputError, parseStarterInput } from '../shared/input-error';
import { MANDATE_OTP_RULE, type MandateInput, type MandateRequest } from '../shared/mandate';
import { PosCompletionCardReadSchema, type PosCompletionCardRead } from '../shared/pos-preauth';
import { sealCardRequest, type CardPaymentRequest } from '../starters/card-payment';
import type { StarterContext } from '../starters/connect';
import { sealMandateRequest } from '../starters/mandate';
import { sealPosCardRead } from '../starters/pos-terminal';
import type { MandateOtpOperationInput, PosCompletionOperationInput } from './payments-service';

type Sealing = Pick<StarterContext, 'claimCheck'>;

/**
 * Validates a card payment request and seals the card, as startCardPayment does (sealCardRequest in
 * the card starter, their one home); the answer is what the `cardPayment` operation takes. The PAN
 * and CVV stay in this process: only the handle, BIN and last four reach the caller's history.
 */
export const sealCardPaymentForNexus = (ctx: Sealing, raw: CardPaymentRequest): Promise<CardPaymentInput> =>
  sealCardRequest(ctx, raw);

/**
 * Validates a mandate request and seals its BVN (purpose 'bvn'): the `mandateCreate` input. The same
 * check and seal as startMandate, from its one home (sealMandateRequest in the mandate starter).
 */
export const sealMandateForNexus = (ctx: Sealing, raw: MandateRequest): Promise<MandateInput> =>
  sealMandateRequest(ctx, raw);

/**
 * Checks the OTP's format and seals it (purpose 'mandate-otp'), as submitMandateOtp does: the
 * `mandateOtp` input. The flow's activity deletes the record once it has sent it; the store's TTL
 * ends it otherwise.
 */
export async function sealMandateOtpForNexus(
  ctx: Sealing,
  mandateRef: string,
  otp: string,
): Promise<MandateOtpOperationInput> {
  if (typeof otp !== 'string' || !MANDATE_OTP_RULE.pattern.test(otp))
    throw new StarterInputError('mandate OTP', [{ field: 'otp', rule: MANDATE_OTP_RULE.message.replace(/^otp /, '') }]);
  return { mandateRef, otpHandle: await ctx.claimCheck.seal('mandate-otp', otp) };
}

/** Checks a completion's card read and seals it, as completePosPreAuth does: the `posPreAuthComplete` input. */
export async function sealPosCompletionForNexus(
  ctx: Sealing,
  merchantRef: string,
  cardRead: PosCompletionCardRead,
): Promise<PosCompletionOperationInput> {
  const v = parseStarterInput(PosCompletionCardReadSchema, cardRead, 'POS completion');
  const { card } = await sealPosCardRead(ctx, v);
  return { merchantRef, amount: v.amount, card, aid: v.aid, ...(v.card_type ? { card_type: v.card_type } : {}) };
}
