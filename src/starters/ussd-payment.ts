// Typed starter of the USSD payment flow (B5), for backends: the code to dial comes back at once.
// Every input is validated with zod before a workflow starts (errors name the field and the rule,
// never the value). Shared rules and errors: ./payment-common.ts.
import type { WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import { USSD_BANK_CODES } from '../api';
import { ussdCodeUpdate, type UssdPaymentInput } from '../shared/ussd-payment';
import type { StarterContext } from './connect';
import type { ussdPaymentWorkflow } from '../workflows/ussd-payment';
import { customer, graceMs, lowestUnit, parsePayment, paymentSearch, reference } from './payment-common';
import { startPaymentWithUpdate } from './start-payment';
import { merchantEventTargetSchema } from '../shared/merchant-event';

export const ussdPaymentInputSchema = z.object({
  notify: merchantEventTargetSchema.optional(),
  transactionRef: reference,
  amount: lowestUnit,
  currency: z.literal('NGN', { error: 'must be NGN' }),
  bankCode: z.enum(USSD_BANK_CODES, { error: 'must be one of the USSD bank codes the spec lists' }),
  customer,
  passCharge: z.boolean().optional(),
  webhookGraceMs: graceMs.optional(),
});

/** Starts the USSD payment (B5) and returns the code to dial and its expiry at once (update-with-start), with the handle to follow the payment. */
export async function startUssdPayment(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  raw: UssdPaymentInput,
): Promise<{ ussdCode: string; expiresAt?: string; handle: WorkflowHandle<typeof ussdPaymentWorkflow> }> {
  const input = parsePayment(ussdPaymentInputSchema, raw) as UssdPaymentInput;
  const { answer, handle } = await startPaymentWithUpdate<
    typeof ussdPaymentWorkflow,
    { ussdCode: string; expiresAt?: string }
  >(ctx, {
    workflowType: 'ussdPaymentWorkflow',
    reference: input.transactionRef,
    args: [input],
    search: paymentSearch('ussd', input, 'initiating'),
    update: ussdCodeUpdate,
  });
  return { ussdCode: answer.ussdCode, expiresAt: answer.expiresAt, handle };
}
