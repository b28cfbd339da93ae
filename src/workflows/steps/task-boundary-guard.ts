// A workflow moves only inside a workflow task. Part of the interceptor module every bundle carries
// (./metrics-interceptor.ts).
//
// Why: the SDK's core (1.24.0) answers a query that reaches a worker straight through matching (a
// "legacy" query: the flow's sticky worker died, the query waited out the sticky timeout and went to
// the normal queue) by applying every event of the history it was sent, including events no workflow
// task has handled yet, such as an activity's result. The flow then moves on in that worker's cache
// and issues commands (a status upsert, a timer) outside any task. When the workflow task that carries
// those events arrives with an Update, the Update is handled in an activation of its own, after those
// commands: live, they are recorded before the Update's acceptance. On replay the same events and the
// Update come in one activation, and the Update goes first: the replay is nondeterministic
// (docs/sdk-update-ordering.md; a mandate was lost to it in the cluster's chaos run).
//
// How: such an activation is the only one that applies new history events without a new workflow task
// having started, so the workflow time (set when a task starts) stays where it was while the history
// grows. This guard refuses it. The query fails (its caller asks again), the worker drops the flow
// from its cache, and the next workflow task rebuilds it from history, applying those events and any
// Update in the order replay will. Nothing is recorded, so histories are unchanged: safe to add to
// running workflows, and safe to remove once the SDK stops applying unhandled events for a query.
import type { WorkflowInternalsInterceptor } from '@temporalio/workflow';
import { OUTSIDE_TASK_REFUSAL } from '../../shared/task-boundary';

/** What the guard remembers of an activation. */
interface ActivationMark {
  historyLength: number;
  /** The workflow time: the start of the task the activation belongs to, as `seconds.nanos`. */
  time: string;
}

type Activation = Parameters<NonNullable<WorkflowInternalsInterceptor['activate']>>[0]['activation'];

const QUERY_OR_EVICTION = new Set(['queryWorkflow', 'removeFromCache']);

function markOf(activation: Activation): ActivationMark | undefined {
  const { timestamp, historyLength } = activation;
  if (!timestamp || historyLength == null) return undefined;
  return { historyLength, time: `${String(timestamp.seconds ?? 0)}.${timestamp.nanos ?? 0}` };
}

/** True when `activation` applies history events outside a workflow task (the case described above). */
export function advancesOutsideTask(previous: ActivationMark | undefined, activation: Activation): boolean {
  const mark = markOf(activation);
  if (!previous || !mark || activation.isReplaying) return false;
  return mark.historyLength > previous.historyLength && mark.time === previous.time;
}

export function taskBoundaryGuard(): WorkflowInternalsInterceptor {
  let previous: ActivationMark | undefined;
  return {
    activate(input, next) {
      const { activation, batchIndex } = input;
      const jobs = (activation.jobs ?? []) as { variant?: string }[];
      const moves = batchIndex === 0 && jobs.some((job) => !QUERY_OR_EVICTION.has(job.variant ?? ''));
      if (moves) {
        if (advancesOutsideTask(previous, activation)) throw new Error(OUTSIDE_TASK_REFUSAL);
        previous = markOf(activation) ?? previous;
      }
      return next(input);
    },
  };
}
