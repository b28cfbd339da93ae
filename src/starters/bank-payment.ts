// Typed starter of the direct bank debit flow (the debit, then the payer's token or OTP), for backends.
// Every input is validated with zod before a workflow starts (errors name the field and the rule,
// never the value). Shared rules and errors: ./payment-common.ts.
// The payer's code is sealed into the claim-check store here and goes to the running flow as an
// Update carrying its handle; the outcome comes back as the next state or a PaymentStepError.
import type { WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import { submitBankCodeUpdate, type BankPaymentInput } from '../shared/bank-payment';
import type { DirectPaymentState } from '../shared/payment-common';
import type { StarterContext } from './connect';
import { startPayment } from './start-payment';
import type { bankPaymentWorkflow } from '../workflows/bank-payment';
import {
  customer,
  graceMs,
  lowestUnit,
  ms,
  parsePayment,
  paymentSearch,
  reference,
  sendSealedCode,
} from './payment-common';
import { merchantEventTargetSchema } from '../shared/merchant-event';

export const bankPaymentInputSchema = z.object({
  notify: merchantEventTargetSchema.optional(),
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
export async function startBankPayment(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  raw: BankPaymentInput,
): Promise<WorkflowHandle<typeof bankPaymentWorkflow>> {
  const input = parsePayment(bankPaymentInputSchema, raw) as BankPaymentInput;
  return startPayment<typeof bankPaymentWorkflow>(ctx, {
    operation: 'start bank payment',
    workflowType: 'bankPaymentWorkflow',
    reference: input.transactionRef,
    args: [input],
    search: paymentSearch('bank', input, 'initiating'),
  });
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
