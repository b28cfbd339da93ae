// Shared last step of the payment flows: the webhook confirms; without one within the grace
// period, verifying the transaction by reference decides. Never "failed" on silence alone.
import { condition, proxyActivities } from '@temporalio/workflow';
import type { createPaymentActivities } from '../activities/payments';
import type { PaymentWebhookEvent } from '../shared/payment-webhook';

const reads = proxyActivities<ReturnType<typeof createPaymentActivities>>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 5, initialInterval: '1s' } });

export interface Confirmation {
  status: 'success' | 'failed' | 'expired' | 'unknown';
  confirmedBy: 'webhook' | 'verify';
  reason?: string;
}

export async function confirmPayment(ref: string, amount: number, webhook: () => PaymentWebhookEvent | undefined, graceMs: number): Promise<Confirmation> {
  await condition(() => webhook() !== undefined, graceMs);
  const event = webhook();
  if (event) {
    if (event.amount !== amount) return { status: 'failed', confirmedBy: 'webhook', reason: `webhook amount ${event.amount} differs from ${amount}` };
    return { status: 'success', confirmedBy: 'webhook' };
  }
  const verified = await reads.verifyTransaction(ref);
  if (verified === 'Success') return { status: 'success', confirmedBy: 'verify' };
  if (verified === 'Abandoned') return { status: 'expired', confirmedBy: 'verify', reason: 'verified as Abandoned' };
  if (verified === 'Failed') return { status: 'failed', confirmedBy: 'verify', reason: 'verified as Failed' };
  return { status: 'unknown', confirmedBy: 'verify', reason: `verified as ${verified}` };
}
