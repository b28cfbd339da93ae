// The mandate's activities, one proxy per named policy (../steps/activity-options.ts), for all its parts.
import { proxyActivities } from '@temporalio/workflow';
import type { createMandateActivities } from '../../activities/mandate';
import type { PaymentCommonActivities } from '../../activities/payment-common';
import { moneySend, READ, READ_ONCE } from '../steps/activity-options';

type Activities = ReturnType<typeof createMandateActivities>;

/** Reads and idempotent calls (D4, D5, D6): retried. */
export const reads = proxyActivities<Activities>(READ);
/**
 * The OTP validation (D2): one attempt (its sealed OTP is redeemed once); the workflow decides what an unclear failure
 * means. The OTP validation does not heartbeat.
 */
export const once = proxyActivities<Activities>(READ_ONCE);
/**
 * The mandate create (D1), the debit (D3) (money-moving): one attempt, heartbeating while the call is open, so a killed
 * worker is noticed in seconds.
 */
export const money = proxyActivities<Activities>(moneySend());
/** Verify by the debit's reference (the debit's requery). */
export const verify = proxyActivities<PaymentCommonActivities>(READ);
