// What the Temporal Web UI shows while a flow runs (issue #27 §5), without a line in the flows
// themselves; part of the interceptor module every bundle carries (./metrics-interceptor.ts):
//  - every activity gets its summary from one table (src/shared/flow-summary.ts ACTIVITY_SUMMARIES), and
//    every child flow a summary and details (its title, amount and workflow id) unless its parent gave them;
//  - the flow's current details follow its status (the one a payment flow reported, ./metrics.ts, else
//    its PaymentStatus search attribute), with the workflow time it entered it and, while a timer is
//    pending, when the earliest fires ("parked: outcome unknown since 10:02 UTC; its timer fires at 10:07 UTC").
// Current details are no command and no history event (the SDK answers them through the built-in
// `__temporal_workflow_metadata` query), and an activity's or a child's summary is command metadata that
// replay does not compare: adding or changing these never breaks a running workflow's replay.
import {
  getCurrentDetails,
  setCurrentDetails,
  workflowInfo,
  type WorkflowInternalsInterceptor,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { activitySummary, childStartMetadata, currentDetailsFor } from '../../shared/flow-summary';
import { PaymentStatus } from '../../shared/search-attributes';
import { reportedStatus } from './metrics';

/** The activity's input with its summary from the table, unless the flow gave one. */
function withSummary<I extends { activityType: string; args: unknown[]; options: { summary?: string } }>(input: I): I {
  const summary = input.options.summary ?? activitySummary(input.activityType, input.args);
  return summary ? { ...input, options: { ...input.options, summary } } : input;
}

export function uiMetadataInterceptors(): {
  outbound: WorkflowOutboundCallsInterceptor;
  internals: WorkflowInternalsInterceptor;
} {
  let status: string | undefined;
  let since = 0;
  /** Pending timers (by their sequence number) and when each fires, workflow time. */
  const timers = new Map<number, number>();

  const refresh = () => {
    const now = reportedStatus() ?? workflowInfo().typedSearchAttributes.get(PaymentStatus);
    if (now === undefined) return;
    if (now !== status) {
      status = now;
      since = Date.now();
    }
    const wakeAt = timers.size > 0 ? Math.min(...timers.values()) : undefined;
    const details = currentDetailsFor(status, since, wakeAt);
    if (details !== getCurrentDetails()) setCurrentDetails(details);
  };

  return {
    outbound: {
      scheduleActivity: (input, next) => next(withSummary(input)),
      scheduleLocalActivity: (input, next) => next(withSummary(input)),
      startChildWorkflowExecution(input, next) {
        if (input.options.staticSummary !== undefined) return next(input);
        const metadata = childStartMetadata(input.workflowType, input.options.workflowId, input.options.args);
        return next({ ...input, options: { ...input.options, ...metadata } });
      },
      startTimer(input, next) {
        const fired = next(input);
        timers.set(input.seq, Date.now() + input.durationMs);
        const done = () => void timers.delete(input.seq);
        fired.then(done, done);
        return fired;
      },
    },
    internals: {
      concludeActivation(input, next) {
        try {
          refresh();
        } catch {
          // What the UI shows never fails a workflow task.
        }
        return next(input);
      },
    },
  };
}
