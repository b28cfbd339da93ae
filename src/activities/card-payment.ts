// Activities of the direct card payment flow: B1 charge with the sealed card, B2 authorize with a
// sealed PIN or OTP.
//
// Money-moving calls are proxied with one attempt and every failure is typed (toActivityFailure):
// a refusal (BadRequest, InvalidRequest, Unauthorized, NotFound) proves nothing happened; anything
// else is an unknown outcome that the workflow settles by verifying the reference first
// (lookupTransaction, ./payment-common.ts).
//
// Nothing here logs a request body: card data, PIN and OTP pass through the API client and are
// never logged; only references and statuses are.
import type { DirectChargeCardRequest } from '../api';
import type { ActivityDeps } from './deps';
import type { CardDetails, CardPaymentInput } from '../shared/card-payment';
import { withSealed } from './claim-check';
import { heartbeatWhile } from './heartbeat';
import { toActivityFailure } from './failures';

export interface CardStepResult {
  /** ValidatePin, ValidateOTP, ThreeDSecure or Success (anything else is settled by verify). */
  transactionStatus: string;
  authUrl?: string;
}

export function createCardPaymentActivities({ api, logger, claimCheck }: ActivityDeps) {
  return {
    /** B1 with the sealed card (redeemed here, deleted once the service answered). Money-moving: one attempt. */
    async chargeCard(input: CardPaymentInput): Promise<CardStepResult> {
      try {
        const { data } = await withSealed(claimCheck, input.card.handle, 'card', (card: CardDetails) =>
          heartbeatWhile(
            api.direct.chargeCard({
              transaction_reference: input.transactionRef,
              amount: input.amount,
              currency: input.currency,
              pass_charge: input.passCharge,
              redirect_url: input.redirectUrl,
              customer: { name: input.customer.name, email: input.customer.email },
              card: {
                number: card.number,
                cvv: card.cvv,
                expiry_month: card.expiryMonth,
                expiry_year: card.expiryYear,
              },
            } satisfies DirectChargeCardRequest),
          ),
        );
        const status = data.transaction_status ?? 'unknown';
        logger.info({ transactionRef: input.transactionRef, status }, 'card charge answered');
        return { transactionStatus: status, authUrl: data.auth_url ?? undefined };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'charge card' });
      }
    },

    /** B2 with a sealed PIN or OTP (the handle from the Update). Money-moving: one attempt. */
    async authorizeCard(transactionRef: string, step: 'pin' | 'otp', handle: string): Promise<CardStepResult> {
      try {
        const { data } = await withSealed(claimCheck, handle, step, (code: string) =>
          heartbeatWhile(
            api.direct.authorizeCard({
              transaction_reference: transactionRef,
              authorization: step === 'pin' ? { pin: code } : { otp: code },
            }),
          ),
        );
        const status = data.transaction_status ?? 'unknown';
        logger.info({ transactionRef, status, step }, 'card authorization answered');
        return { transactionStatus: status };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'authorize card payment' });
      }
    },
  };
}

export type CardPaymentActivities = ReturnType<typeof createCardPaymentActivities>;
