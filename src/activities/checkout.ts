// Activities of the hosted checkout flow: the initiation, which creates the transaction and its checkout_url.
//
// Money-moving calls are made once, their failures typed for the workflow (moneyCall, ./calls.ts).
import type { CheckoutInitiateRequest } from '../api';
import type { ActivityDeps } from './deps';
import { bindActivities } from './bind';
import type { CheckoutInput } from '../shared/checkout';
import { heartbeatWhile } from './heartbeat';
import { moneyCall } from './calls';

/** Initiates the checkout (A1; the card saved for later, A3). Creates the transaction: one attempt, settled by verify when the answer is lost. */
function initiateCheckout({ api, logger }: ActivityDeps, input: CheckoutInput): Promise<{ checkoutUrl: string }> {
  return moneyCall('initiate checkout', async () => {
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
    const { data } = await heartbeatWhile(api.checkout.initiate(req));
    logger.info({ transactionRef: input.transactionRef }, 'checkout initiated');
    return { checkoutUrl: data.checkout_url };
  });
}

export function createCheckoutActivities(deps: ActivityDeps) {
  return bindActivities(deps, { initiateCheckout });
}

export type CheckoutActivities = ReturnType<typeof createCheckoutActivities>;
