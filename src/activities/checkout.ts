// Activities of the hosted checkout flow: A1 (+A3), which creates the transaction and its checkout_url.
//
// Money-moving calls are proxied with one attempt and every failure is typed (toActivityFailure):
// a refusal (BadRequest, InvalidRequest, Unauthorized, NotFound) proves nothing happened; anything
// else is an unknown outcome that the workflow settles by verifying the reference first
// (lookupTransaction, ./payment-common.ts).
import type { CheckoutInitiateRequest } from '../api';
import type { ActivityDeps } from './deps';
import type { CheckoutInput } from '../shared/checkout';
import { heartbeatWhile } from './heartbeat';
import { toActivityFailure } from './failures';

export function createCheckoutActivities({ api, logger }: ActivityDeps) {
  return {
    /** A1 (+A3). Creates the transaction: one attempt, settled by verify when the answer is lost. */
    async initiateCheckout(input: CheckoutInput): Promise<{ checkoutUrl: string }> {
      const req: CheckoutInitiateRequest = {
        amount: input.amount,
        email: input.email,
        currency: input.currency,
        initiate_type: 'inline',
        transaction_ref: input.transactionRef,
        customer_name: input.customerName,
        callback_url: input.callbackUrl,
        payment_channels: input.channels,
        metadata: input.metadata,
        pass_charge: input.passCharge,
        sub_merchant_id: input.subMerchantId,
        is_recurring: input.isRecurring,
      };
      try {
        const { data } = await heartbeatWhile(api.checkout.initiate(req));
        logger.info({ transactionRef: input.transactionRef }, 'checkout initiated');
        return { checkoutUrl: data.checkout_url };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'initiate checkout' });
      }
    },
  };
}

export type CheckoutActivities = ReturnType<typeof createCheckoutActivities>;
