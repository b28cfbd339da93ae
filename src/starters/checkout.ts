// Typed starter of the hosted checkout flow (A1), for backends: checkout_url comes back at once.
// Every input is validated with zod before a workflow starts (errors name the field and the rule,
// never the value). Shared rules and errors: ./payment-common.ts.
import type { WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import { checkoutStateQuery, checkoutUrlUpdate, type CheckoutInput, type CheckoutState } from '../shared/checkout';
import type { StarterContext } from './connect';
import { retryTransient } from './temporal-retry';
import type { checkoutWorkflow } from '../workflows/checkout';
import {
  graceMs,
  httpUrl,
  lowestUnit,
  ms,
  parsePayment,
  paymentSearch,
  queryPayment,
  reference,
} from './payment-common';
import { startPaymentWithUpdate } from './start-payment';
import { merchantEventTargetSchema } from '../shared/merchant-event';
import { withSignedReturn } from '../config/return-links';

export const checkoutInputSchema = z.object({
  notify: merchantEventTargetSchema.optional(),
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
  ctx: Pick<StarterContext, 'client' | 'taskQueue' | 'returnLinks'>,
  raw: CheckoutInput,
): Promise<{ checkoutUrl: string; handle: WorkflowHandle<typeof checkoutWorkflow> }> {
  // The return URL is signed here, where it is built (GET /payments/return shows state only then).
  const input = withSignedReturn(ctx, parsePayment(checkoutInputSchema, raw) as CheckoutInput);
  const { answer, handle } = await startPaymentWithUpdate<typeof checkoutWorkflow, { checkoutUrl: string }>(ctx, {
    workflowType: 'checkoutWorkflow',
    reference: input.transactionRef,
    args: [input],
    search: paymentSearch(input.isRecurring ? 'recurring' : 'checkout', input, 'initiating'),
    update: checkoutUrlUpdate,
  });
  return { checkoutUrl: answer.checkoutUrl, handle };
}
export const getCheckoutState = (ctx: Pick<StarterContext, 'client'>, ref: string): Promise<CheckoutState> =>
  retryTransient('checkout state (query)', () => queryPayment(ctx.client, ref, checkoutStateQuery));
