// The words a worker answers a query with when it refuses to move a workflow outside a workflow task
// (src/workflows/steps/task-boundary-guard.ts): one home, so callers know the query can be asked again.
export const OUTSIDE_TASK_REFUSAL =
  'refused to move the workflow outside a workflow task (a query was sent events no task has handled yet); ' +
  'the next workflow task applies them: ask again';

/** True for a query failure that only says "ask again" (see OUTSIDE_TASK_REFUSAL). */
export function isOutsideTaskRefusal(err: unknown): boolean {
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (typeof e.message === 'string' && e.message.includes(OUTSIDE_TASK_REFUSAL)) return true;
    e = e.cause as typeof e;
  }
  return false;
}
