// Typed starter of the webhook error log sweep (C10/C11), for backends and operators: one sweep now,
// besides the Schedule's (src/workers/schedules.ts).
import { randomUUID } from 'node:crypto';
import type { ErrorLogSweepSummary } from '../shared/virtual-account-error-log-sweep';
import type { StarterContext } from './connect';
import type { ErrorLogSweepInput } from '../workflows/virtual-account-error-log-sweep';

/** Runs one sweep of the webhook error log now (the Schedule does it every few minutes) and returns its summary. */
export function sweepWebhookErrorLog(
  ctx: StarterContext,
  input: ErrorLogSweepInput = {},
): Promise<ErrorLogSweepSummary> {
  return ctx.client.workflow.execute('virtualAccountErrorLogSweepWorkflow', {
    workflowId: `va-webhook-error-log-sweep-manual-${randomUUID()}`,
    taskQueue: ctx.taskQueue,
    args: [input],
  });
}
