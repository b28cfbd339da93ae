// Business counters emitted from workflow code through the SDK's workflow metric meter: nothing is
// emitted while a history is replayed, and nothing here changes the workflow's commands (replay-safe).
// Every metric of a payment workflow carries its `flow` label (added by ./metrics-interceptor.ts).
import { metricMeter } from '@temporalio/workflow';
import { METRICS } from '../../shared/flow-metrics';

/** send-once's result for one value request. */
export function countSendOutcome(outcome: 'answered' | 'refused' | 'found' | 'never-received' | 'unverified'): void {
  metricMeter.createCounter(METRICS.sendOutcomes, undefined, 'Value requests by send-once outcome').add(1, { outcome });
}

/** One requery by reference: after a lost answer (send-once) or while waiting for a final answer (pending, outcome unknown). */
export function countRequery(stage: 'lost_answer' | 'awaiting_final', result: 'found' | 'absent' | 'error'): void {
  metricMeter.createCounter(METRICS.requeries, undefined, 'Requeries by reference').add(1, { stage, result });
}

/** A value request sent again after requeries proved the first never arrived. */
export function countResendProvedSafe(): void {
  metricMeter.createCounter(METRICS.resendsProvedSafe, undefined, 'Resends proved safe by requery').add(1);
}

/**
 * The status a payment flow is in, for ./metrics-interceptor.ts. The PaymentStatus search attribute
 * is written only at the start and when final or parked (./payment-flow.ts), so the steps between
 * are reported here instead. Module state is per execution (the workflow sandbox evaluates the
 * modules once per execution).
 */
let currentStatus: string | undefined;

export function reportStatus(status: string): void {
  currentStatus = status;
}

/** The last status a flow reported; undefined for a flow that reports none (its search attribute is read). */
export function reportedStatus(): string | undefined {
  return currentStatus;
}
