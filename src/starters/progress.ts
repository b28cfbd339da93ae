// Shared CLI helper: print a workflow's state each time it changes until it finishes (or, with
// `until`, until a state the caller stops at, e.g. parked for a person: that state is returned).
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';

export async function followUntilDone<S>(
  handle: WorkflowHandle,
  stateQuery: QueryDefinition<S>,
  render: (state: S) => string,
  opts: { intervalMs?: number; out?: (line: string) => void; until?: (state: S) => boolean } = {},
): Promise<unknown> {
  const out = opts.out ?? ((l: string) => console.log(l));
  let last = '';
  const result = handle.result();
  let done = false;
  void result
    .finally(() => {
      done = true;
    })
    .catch(() => undefined);
  while (!done) {
    try {
      const state = await handle.query(stateQuery);
      const line = render(state);
      if (line !== last) out(line);
      last = line;
      if (opts.until?.(state)) return state;
    } catch {
      // the workflow may be between runs (continue-as-new) or finishing
    }
    await untilSettledOr(result, opts.intervalMs ?? 1000);
  }
  return result;
}

/**
 * A follow's pause between two looks at a flow: until `settled` settles or `ms` have passed. The
 * timer is cleared either way, so none outlives a follow (a CLI run inside a longer-lived process).
 */
export async function untilSettledOr(settled: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([settled.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
