// The Temporal Schedules the worker keeps: created when missing, brought in line with config when
// present (idempotent: every worker start may call it; the last writer wins with the same values).
// Paused Schedules stay paused: an operator's pause in the Web UI is not undone by a restart.
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { VA_ERROR_LOG_SWEEP_WORKFLOW_ID } from '../shared/virtual-account-error-log-sweep';
import { flowStartMetadata } from '../shared/flow-summary';
import type { virtualAccountErrorLogSweepWorkflow } from '../workflows/virtual-account-error-log-sweep';

/** One Schedule per task queue, so several stacks (tests, tenants) on one namespace do not collide. */
export const errorLogSweepScheduleId = (taskQueue: string): string => `${VA_ERROR_LOG_SWEEP_WORKFLOW_ID}:${taskQueue}`;

/**
 * The webhook error log sweep (C10/C11) every `everySeconds`. Overlap SKIP: a sweep still running
 * (a long log) is not joined by a second one. Catch-up window 1 minute: sweeps missed while
 * Temporal was down are not replayed one by one; the next sweep reads the whole log anyway.
 */
export async function ensureErrorLogSweepSchedule(
  client: Client,
  opts: { taskQueue: string; everySeconds: number },
): Promise<string> {
  const scheduleId = errorLogSweepScheduleId(opts.taskQueue);
  const spec = { intervals: [{ every: opts.everySeconds * 1000 }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'virtualAccountErrorLogSweepWorkflow',
    workflowId: scheduleId,
    taskQueue: opts.taskQueue,
    args: [{}] as Parameters<typeof virtualAccountErrorLogSweepWorkflow>,
    workflowExecutionTimeout: 30 * 60_000,
    ...flowStartMetadata('virtualAccountErrorLogSweepWorkflow', {}),
  };
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: 60_000 };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action, policies }));
  }
  return scheduleId;
}
