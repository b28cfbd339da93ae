// Typed starter of the recurring flow, for backends: a plan whose first payment is a hosted
// checkout and whose later cycles charge its token (A4); the token is cancelled at the end (A5).
// Every input is validated with zod before a workflow starts (errors name the field and the rule,
// never the value). Shared rules and errors: ./payment-common.ts.
import type { WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
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
import type { StarterContext } from './connect';
import { startFlow } from './start-flow';
import type { recurringChargeWorkflow } from '../workflows/recurring';
import { getCheckoutState } from './checkout';
import { graceMs, handle, httpUrl, lowestUnit, ms, parsePayment, startOnce, waitForState } from './payment-common';
import { merchantEventTargetSchema } from '../shared/merchant-event';

export const recurringInputSchema = z.object({
  notify: merchantEventTargetSchema.optional(),
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
/** Stops the plan: no further charge; the token is cancelled (A5). */
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
