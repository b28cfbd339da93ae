// WORKER_WORKFLOW_STACK_TRACES: whether the worker keeps the SDK's per-promise stack capture, which
// answers the `__stack_trace` query (the Web UI's "Stack Trace" tab). One home for the values and the
// default: the config validates the variable (src/config/worker-tuning.ts) and the preload that acts
// on it (src/workers/workflow-stack-traces.ts) reads it. No imports: the preload runs in every
// workflow thread.
export const WORKFLOW_STACK_TRACE_MODES = ['on', 'off'] as const;
export type WorkflowStackTraceMode = (typeof WORKFLOW_STACK_TRACE_MODES)[number];

/**
 * Off: the SDK captures a stack trace for every promise a workflow creates (sdk-typescript#1587), and
 * the bench measured it at about a fifth of a card payment's worker CPU (docs/performance.md). Turn it
 * on to read where a stuck flow waits; the flows' own state queries and search attributes do not need it.
 */
export const WORKFLOW_STACK_TRACES_DEFAULT: WorkflowStackTraceMode = 'off';

export const workflowStackTraceMode = (value: string | undefined): WorkflowStackTraceMode =>
  value === 'on' || value === 'off' ? value : WORKFLOW_STACK_TRACES_DEFAULT;

/** The preload, relative to the app's root (the image's WORKDIR, the repository's root). */
export const WORKFLOW_STACK_TRACES_PRELOAD = './dist/workers/workflow-stack-traces.js';

/** How production starts the worker (Dockerfile, docker-compose.yml, deploy/k8s; their tests check it). */
export const PRODUCTION_WORKER_COMMAND = ['node', '--require', WORKFLOW_STACK_TRACES_PRELOAD, 'dist/workers/main.js'];
