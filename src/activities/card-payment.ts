// Activities of the direct card payment flow: the charge with the sealed card, and its authorization with a
// sealed PIN or OTP.
//
// Money-moving calls are made once, their failures typed for the workflow (moneyCall, ./calls.ts).
//
// Nothing here logs a request body: card data, PIN and OTP pass through the API client and are
// never logged; only references and statuses are.
import type { DirectChargeCardRequest } from '../api';
import type { ActivityDeps } from './deps';
import { bindActivities } from './bind';
import type { CardDetails, CardPaymentInput } from '../shared/card-payment';
import { CARD_CVV_ONCE, withSealed } from './claim-check';
import { heartbeatWhile } from './heartbeat';
import { directPayment, moneyCall } from './calls';
import { lookupTransaction } from './transaction-lookup';
import type { TransactionLookup } from '../shared/payment-common';

/** How long the read after a Success answer may take before the flow is left to verify itself. */
const VERIFY_AFTER_SUCCESS_MS = 3_000;

export interface CardStepResult {
  /** ValidatePin, ValidateOTP, ThreeDSecure or Success (anything else is settled by verify). */
  transactionStatus: string;
  authUrl?: string;
  /**
   * After a Success answer: the service's record, read (verify) right after the answer in this
   * activity; absent when it could not be read (the flow verifies itself). The flow confirms from
   * the record, never from the answer alone.
   */
  verified?: TransactionLookup;
}

/**
 * Verify after a Success answer, in the same activity: the flow's final workflow task then needs
 * no call of its own, so the webhook that the same Success sets off rarely lands while that task
 * is open (a signal there makes the server refuse the task's completion and the task run again).
 * A read: when it fails, the flow reads itself; the money-moving call is never repeated for it.
 */
async function verifySuccess(
  { api, logger }: ActivityDeps,
  transactionRef: string,
  status: string,
): Promise<TransactionLookup | undefined> {
  if (status !== 'Success') return undefined;
  let timer: NodeJS.Timeout | undefined;
  // Bounded well inside the activity's start-to-close (the money call's answer must not be lost to a slow read).
  const late = new Promise<undefined>((done) => (timer = setTimeout(() => done(undefined), VERIFY_AFTER_SUCCESS_MS)));
  try {
    return await heartbeatWhile(Promise.race([lookupTransaction({ api }, transactionRef), late]));
  } catch {
    logger.warn({ transactionRef }, 'verify after a Success answer failed: the flow verifies itself');
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Charges the card (B1) with the sealed card (redeemed here, deleted once the service answered; after a lost answer, kept without its CVV). Money-moving: one attempt. */
function chargeCard(deps: ActivityDeps, input: CardPaymentInput): Promise<CardStepResult> {
  const { api, logger, claimCheck } = deps;
  return moneyCall('charge card', async () => {
    const charge = (card: CardDetails) =>
      api.direct.chargeCard({
        ...directPayment(input),
        redirect_url: input.redirectUrl,
        card: { number: card.number, cvv: card.cvv, expiry_month: card.expiryMonth, expiry_year: card.expiryYear },
      } satisfies DirectChargeCardRequest);
    const send = (card: CardDetails) => heartbeatWhile(charge(card));
    // Kept after a lost answer: without its CVV.
    const { data } = await withSealed(claimCheck, input.card.handle, 'card', send, CARD_CVV_ONCE);
    const status = data.transaction_status ?? 'unknown';
    logger.info({ transactionRef: input.transactionRef, status }, 'card charge answered');
    const verified = await verifySuccess(deps, input.transactionRef, status);
    return { transactionStatus: status, authUrl: data.auth_url ?? undefined, ...(verified ? { verified } : {}) };
  });
}

/** Authorizes the payment (B2) with a sealed PIN or OTP (the handle from the Update). Money-moving: one attempt. */
function authorizeCard(
  deps: ActivityDeps,
  transactionRef: string,
  step: 'pin' | 'otp',
  handle: string,
): Promise<CardStepResult> {
  const { api, logger, claimCheck } = deps;
  return moneyCall('authorize card payment', async () => {
    const authorization = (code: string) => (step === 'pin' ? { pin: code } : { otp: code });
    const { data } = await withSealed(claimCheck, handle, step, (code: string) =>
      heartbeatWhile(
        api.direct.authorizeCard({ transaction_reference: transactionRef, authorization: authorization(code) }),
      ),
    );
    const status = data.transaction_status ?? 'unknown';
    logger.info({ transactionRef, status, step }, 'card authorization answered');
    const verified = await verifySuccess(deps, transactionRef, status);
    return { transactionStatus: status, ...(verified ? { verified } : {}) };
  });
}

export function createCardPaymentActivities(deps: ActivityDeps) {
  return bindActivities(deps, { chargeCard, authorizeCard });
}

export type CardPaymentActivities = ReturnType<typeof createCardPaymentActivities>;
