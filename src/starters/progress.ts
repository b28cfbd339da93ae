// Shared CLI helper: print a workflow's state each time it changes until it finishes.
import type { WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';

export async function followUntilDone<S>(
  handle: WorkflowHandle,
  stateQuery: QueryDefinition<S>,
  render: (state: S) => string,
  opts: { intervalMs?: number; out?: (line: string) => void } = {},
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
      const line = render(await handle.query(stateQuery));
      if (line !== last) out(line);
      last = line;
    } catch {
      // the workflow may be between runs (continue-as-new) or finishing
    }
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, opts.intervalMs ?? 1000))]);
  }
  return result;
}
