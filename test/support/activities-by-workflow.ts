// Scripted activities for one worker that all the tests of a file share. Starting a worker (its
// workflow sandbox, its first task) costs about a second, a flow on a warm worker tens of
// milliseconds, so a suite that scripts each flow's activities registers its script under the flow's
// workflow id (or a reference in it) instead of starting a worker per flow.
import { ApplicationFailure, Context } from '@temporalio/activity';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- activities take whatever their flow passes
type ActivityFn = (...args: any[]) => Promise<unknown>;

export interface ActivitiesByWorkflow<A extends object> {
  /** The worker's activities: each call goes to the script of the workflow that made it. */
  readonly activities: A;
  /**
   * Registers `script` for every flow whose workflow id contains `key` (a workflow id, or a unique
   * reference the flow and the flows it starts are named after); returns `key`.
   */
  script(key: string, script: Partial<A>): string;
}

/**
 * Activities named `names` that dispatch on the calling workflow's id: the script registered under
 * that id, or else under the longest registered key the id contains (the keys are unique references,
 * so one flow never reaches another test's script). A call no script answers fails without a retry,
 * naming the flow and the activity.
 */
export function activitiesByWorkflow<A extends object>(names: readonly (keyof A & string)[]): ActivitiesByWorkflow<A> {
  const scripts = new Map<string, Partial<A>>();
  const scriptOf = (workflowId: string): Partial<A> | undefined => {
    const exact = scripts.get(workflowId);
    if (exact) return exact;
    let best: string | undefined;
    for (const id of scripts.keys())
      if (workflowId.includes(id) && (best === undefined || id.length > best.length)) best = id;
    return best === undefined ? undefined : scripts.get(best);
  };
  const activities = Object.fromEntries(
    names.map((name) => [
      name,
      (...args: unknown[]) => {
        // A standalone activity (no workflow) has no script.
        const workflowId = Context.current().info.workflowExecution?.workflowId ?? '(none)';
        const script = scriptOf(workflowId);
        const fn = script?.[name] as ActivityFn | undefined;
        if (!fn)
          throw ApplicationFailure.create({
            type: 'UnscriptedActivity',
            message: `no script for ${name} of workflow ${workflowId}`,
            nonRetryable: true,
          });
        return fn.apply(script, args);
      },
    ]),
  ) as A;
  return {
    activities,
    script(key, script) {
      scripts.set(key, script);
      return key;
    },
  };
}
