// Recurring card charges: the first payment through hosted checkout (the payer pays on the
// checkout page with a test card and OTP), then a token charge (A4) for cycle 2.
import { DuplicateReferenceError, getCheckoutState, startRecurring } from '../../src/starters';
import { cycleReference, recurringWorkflowId, type RecurringState } from '../../src/shared/recurring';
import { SANDBOX_OTP } from '../../src/sandbox';
import { retry } from '../util';
import { awaitResult, drive, startOnce, type KindDriver, type Outcome } from './types';

/**
 * Per cycle (cycle 1 = the checkout, ledger `checkout`; later cycles = A4, ledger `token_charge`):
 *  success — paid / charged                                  → money
 *  failed  — refused (or verify-first found nothing to charge) → no-money
 *  expired — checkout abandoned                              → no-money
 *  unknown — lost answer not settled by verify               → unknown
 */
export const recurringCycleOutcome = (status: string): Outcome =>
  status === 'success' ? 'money' : status === 'unknown' ? 'unknown' : 'no-money';

async function payCheckout(url: string, deadline: number): Promise<void> {
  const post = async (path: string, body: unknown): Promise<string> => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    if (res.status >= 500) throw new Error(`checkout ${path}: ${res.status}`);
    return text;
  };
  await retry('checkout card', deadline, () =>
    post('/card', { number: '4242424242424242', cvv: '123', expiry_month: '12', expiry_year: '30' }),
  );
  await retry('checkout otp', deadline, () => post('/authorize', { otp: SANDBOX_OTP }));
}

/** Cycles per plan: the checkout, then one token charge. */
export const RECURRING_CYCLES = 2;

export const recurringDriver: KindDriver = {
  kind: 'recurring',
  ledgerKinds: ['checkout', 'token_charge'],
  async run(ctx, flow) {
    flow.variant = 'checkout+token';
    flow.workflowId = recurringWorkflowId(flow.ref);
    const amount = ctx.rng.int(100, 900) * 100;
    await startOnce(
      ctx,
      'start recurring',
      () =>
        startRecurring(ctx.starters, {
          planRef: flow.ref,
          amount,
          currency: 'NGN',
          email: 'subscriber@example.com',
          intervalMs: 2_000,
          maxCycles: RECURRING_CYCLES,
          webhookGraceMs: 3_000,
          checkout: { webhookGraceMs: 3_000 },
        }),
      (err) => err instanceof DuplicateReferenceError,
    );
    const first = cycleReference(flow.ref, 1);
    const s = await drive(
      ctx,
      () => getCheckoutState(ctx.starters, first),
      (c) => c.checkoutUrl !== undefined || ['success', 'failed', 'expired', 'unknown'].includes(c.status),
      async () => undefined,
    );
    if (s?.checkoutUrl) await payCheckout(s.checkoutUrl, ctx.deadline);
    const result = await awaitResult<RecurringState>(
      ctx,
      () => ctx.starters.client.workflow.getHandle(flow.workflowId!),
      flow,
    );
    if (!result) return;
    flow.closed = true;
    flow.status = result.status;
    for (const c of result.recentCycles) {
      flow.expectations.push({
        reference: c.reference,
        ledgerKind: c.cycle === 1 ? 'checkout' : 'token_charge',
        outcome: recurringCycleOutcome(c.status),
        status: c.status,
      });
      if (c.confirmedBy === 'verify' && c.status !== 'unknown') flow.resolvedByRequery = true;
    }
  },
};
