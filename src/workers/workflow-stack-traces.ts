// Preloaded into the worker process with `node --require ./dist/workers/workflow-stack-traces.js`:
// a preload given on the command line also runs in every worker thread the process starts, and the
// SDK runs workflows in such threads, where nothing of ours runs before its VM is set up. With
// WORKER_WORKFLOW_STACK_TRACES=off (the default) it keeps the SDK from installing its promise hook,
// which captures a stack trace for every promise a workflow creates (sdk-typescript#1587). The SDK
// then runs as on a Node without promise hooks: workflows behave the same, and the `__stack_trace`
// query answers "Workflow stack traces are not enabled on this worker".
// eslint-disable-next-line no-restricted-imports -- the promise hook's switch (sdk-typescript#1587) has no public entry; test/ship/prebuilt-bundle.test.ts covers it
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import { workflowStackTraceMode, type WorkflowStackTraceMode } from '../shared/workflow-stack-traces';

export interface WorkflowStackTraceState {
  /** WORKER_WORKFLOW_STACK_TRACES (default off). */
  requested: WorkflowStackTraceMode;
  /**
   * on / off: what the workflow threads run with. `on (not preloaded)`: off was asked, but the
   * process was not started with this preload, so the threads capture stacks. `on (unknown SDK)`:
   * the SDK no longer has the method this replaces; nothing was changed.
   */
  effective: 'on' | 'off' | 'on (not preloaded)' | 'on (unknown SDK)';
}

// A module given to --require is evaluated before the main module exists.
const preloaded = require.main === undefined;

/** The SDK's hook installer (an internal of @temporalio/worker; checked, not assumed). */
const handlers = globalHandlers as unknown as { setPromiseHook?: unknown; promiseHookInstalled?: unknown };

function apply(): WorkflowStackTraceState {
  const requested = workflowStackTraceMode(process.env.WORKER_WORKFLOW_STACK_TRACES);
  if (requested === 'on') return { requested, effective: 'on' };
  if (!preloaded) return { requested, effective: 'on (not preloaded)' };
  if (typeof handlers.setPromiseHook !== 'function' || handlers.promiseHookInstalled !== false)
    return { requested, effective: 'on (unknown SDK)' };
  handlers.setPromiseHook = () => undefined;
  return { requested, effective: 'off' };
}

const state = apply();

/** What this thread runs with (the worker's main thread logs it at start). */
export const workflowStackTraceState = (): WorkflowStackTraceState => state;
