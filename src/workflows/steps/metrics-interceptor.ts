// Workflow interceptor module (bundled with every workflow: src/workers/worker.ts WORKFLOW_INTERCEPTOR_MODULES)
// that counts every payment flow's life in one home, without a line in the flows themselves:
//  - at the end of each activation it reads the flow's search attributes (PaymentFlow, PaymentStatus,
//    PaymentAmount, PaymentCurrency — every flow keeps them, src/shared/search-attributes.ts) and the
//    status a payment flow reported (./metrics.ts: payment flows write PaymentStatus only at the start
//    and the end), and counts a start, each status entered, and the outcome a status means
//    (src/shared/flow-metrics.ts);
//  - it adds the `flow` label to every metric the workflow emits (send-once's requeries and resends).
// The same module carries the guard that keeps a workflow from moving outside a workflow task
// (./task-boundary-guard.ts) and what the Temporal Web UI shows while a flow runs (./ui-metadata.ts). The
// split layout's activity queues are a module of their own (./activity-queues.ts), in split bundles only.
// Metrics are never emitted while replaying (the worker's metric sink is not called during replay), and a
// continued-as-new run is not a new flow. Nothing here changes which commands a flow sends (an activity's
// summary is metadata replay does not compare): the interceptor is replay-safe and may be added to, or
// removed from, running workflows.
import {
  workflowInfo,
  metricMeter,
  type WorkflowInterceptors,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { PaymentAmount, PaymentCurrency, PaymentFlow, PaymentStatus } from '../../shared/search-attributes';
import { flowOutcomeOf, METRICS } from '../../shared/flow-metrics';
import { reportedStatus } from './metrics';
import { uiMetadataInterceptors } from './ui-metadata';
import { taskBoundaryGuard } from './task-boundary-guard';

/** The metrics part: counts from the flow's search attributes and reported status. */
const metricsInterceptors = (): WorkflowInterceptors => {
  let flowSeen = false;
  let lastStatus: string | undefined;

  const observe = () => {
    const info = workflowInfo();
    const attributes = info.typedSearchAttributes;
    const flow = attributes.get(PaymentFlow);
    if (!flow) return;
    const status = reportedStatus() ?? attributes.get(PaymentStatus);
    const live = !info.unsafe.isReplaying;
    const continued = info.continuedFromExecutionRunId !== undefined;
    const first = !flowSeen;
    if (first) {
      flowSeen = true;
      if (live && !continued)
        metricMeter.createCounter(METRICS.flowsStarted, undefined, 'Payment flows started').add(1);
      // A continued run carries its status over: it is not entered again.
      if (continued) lastStatus = status;
    }
    if (status === undefined || status === lastStatus) return;
    lastStatus = status;
    if (!live) return;
    metricMeter.createCounter(METRICS.flowStatuses, undefined, 'Payment flow statuses entered').add(1, { status });
    const outcome = flowOutcomeOf(flow, status);
    if (!outcome) return;
    metricMeter.createCounter(METRICS.flowOutcomes, undefined, 'Payment flow outcomes').add(1, { outcome });
    const amount = attributes.get(PaymentAmount);
    const currency = attributes.get(PaymentCurrency);
    if (
      outcome === 'succeeded' &&
      typeof amount === 'number' &&
      Number.isSafeInteger(amount) &&
      amount >= 0 &&
      currency
    ) {
      metricMeter
        .createCounter(METRICS.succeededAmount, undefined, 'Amount of succeeded flows, lowest currency unit')
        .add(amount, { currency });
    }
  };

  return {
    outbound: [
      {
        getMetricTags(tags, next) {
          const flow = workflowInfo().typedSearchAttributes.get(PaymentFlow);
          return next(flow ? { ...tags, flow } : tags);
        },
      },
    ],
    internals: [
      {
        concludeActivation(input, next) {
          try {
            observe();
          } catch {
            // Counting never fails a workflow task.
          }
          return next(input);
        },
      },
    ],
  };
};

export const interceptors: WorkflowInterceptorsFactory = () => {
  const metrics = metricsInterceptors();
  const ui = uiMetadataInterceptors();
  return {
    outbound: [ui.outbound, ...(metrics.outbound ?? [])],
    // The guard first: an activation it refuses reaches nothing else.
    internals: [taskBoundaryGuard(), ui.internals, ...(metrics.internals ?? [])],
  };
};
