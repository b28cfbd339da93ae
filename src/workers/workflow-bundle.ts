// The prebuilt workflow bundles. `npm run build` compiles src to dist and then writes, with webpack,
// once, with the project's failure converter, as the worker would bundle at start, one bundle per
// task-queue layout and tracing: dist/workflow-bundle.js (metrics interceptor),
// dist/workflow-bundle-traced.js (and OpenTelemetry), and the split layout's
// dist/workflow-bundle-split.js and dist/workflow-bundle-split-traced.js (and the activity-queue
// interceptor). The production worker (`node dist/workers/main.js`) loads the one that matches its
// WORKER_TASK_QUEUE_LAYOUT and tracing instead of running webpack on every start. Under tsx (`npm start`, `npm run worker`, the chaos stack) no
// bundle is prebuilt and the worker bundles src/workflows at start, as before.
import { existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { WorkflowBundlePath } from '@temporalio/worker';
import { activeTracing } from '../observability/trace-context';
import type { TaskQueueLayout } from '../shared/task-queues';
import {
  bundleInterceptorModules,
  bundleWorkflows,
  PREBUILT_BUNDLE_INTERCEPTOR_MODULES,
  WORKFLOWS_PATH,
  type BundleKind,
} from './worker';

export const WORKFLOW_BUNDLE_FILE = 'workflow-bundle.js';
export const TRACED_WORKFLOW_BUNDLE_FILE = 'workflow-bundle-traced.js';

/** The file name of the prebuilt bundle of `kind`: workflow-bundle[-split][-traced].js. */
export function workflowBundleFile(kind: BundleKind): string {
  return `workflow-bundle${kind.layout === 'split' ? '-split' : ''}${kind.traced ? '-traced' : ''}.js`;
}

/** Every kind `npm run build` writes: both layouts, plain and traced. */
export const PREBUILT_BUNDLE_KINDS: readonly BundleKind[] = [
  { layout: 'single', traced: false },
  { layout: 'single', traced: true },
  { layout: 'split', traced: false },
  { layout: 'split', traced: true },
];

/** dist/workflow-bundle.js when this module runs compiled (dist/workers); src/workflow-bundle.js (never written) under tsx. */
export const DEFAULT_WORKFLOW_BUNDLE_PATH = resolve(__dirname, '..', WORKFLOW_BUNDLE_FILE);
/** dist/workflow-bundle-traced.js: the bundle with OpenTelemetry's workflow interceptor, for a worker with tracing on. */
export const TRACED_WORKFLOW_BUNDLE_PATH = resolve(__dirname, '..', TRACED_WORKFLOW_BUNDLE_FILE);

/** True when this code runs compiled from dist (JavaScript), false under tsx or jest (TypeScript). */
export const RUNNING_COMPILED = __filename.endsWith('.js');

/**
 * Bundles `workflowsPath` (default: the workflows next to this module) with the failure converter and
 * `interceptorModules` (default: both, as the traced bundle) and writes it to `outFile`.
 */
export async function buildWorkflowBundle(
  outFile: string = DEFAULT_WORKFLOW_BUNDLE_PATH,
  workflowsPath: string = WORKFLOWS_PATH,
  interceptorModules: string[] = PREBUILT_BUNDLE_INTERCEPTOR_MODULES,
): Promise<{ path: string; bytes: number }> {
  const { code } = await bundleWorkflows(interceptorModules, undefined, workflowsPath);
  await mkdir(dirname(outFile), { recursive: true });
  await writeFile(outFile, code);
  return { path: outFile, bytes: Buffer.byteLength(code) };
}

export class MissingWorkflowBundleError extends Error {
  constructor(path: string) {
    super(
      `the prebuilt workflow bundle ${path} is missing: run \`npm run build\` (it writes dist/ and the bundle together)`,
    );
    this.name = 'MissingWorkflowBundleError';
  }
}

/** The path of the prebuilt bundle of `kind`, next to DEFAULT_WORKFLOW_BUNDLE_PATH. */
export function workflowBundlePath(kind: BundleKind): string {
  return resolve(dirname(DEFAULT_WORKFLOW_BUNDLE_PATH), workflowBundleFile(kind));
}

/** The prebuilt bundle a worker of `layout` loads: traced when tracing is installed, plain otherwise. */
export function prebuiltBundlePathFor(layout: TaskQueueLayout): string {
  return workflowBundlePath({ layout, traced: activeTracing() !== undefined });
}

/** Writes every prebuilt bundle (`npm run build`): both layouts, plain and traced. */
export async function buildWorkflowBundles(): Promise<{ path: string; bytes: number }[]> {
  const built = [];
  for (const kind of PREBUILT_BUNDLE_KINDS)
    built.push(await buildWorkflowBundle(workflowBundlePath(kind), WORKFLOWS_PATH, bundleInterceptorModules(kind)));
  return built;
}

/**
 * The worker's `workflowBundle` option: the prebuilt file when running compiled (a missing file is
 * an error, never a silent webpack run in production), undefined under tsx (bundle at start). By
 * default the single layout's (the worker passes prebuiltBundlePathFor(its layout)).
 */
export function prebuiltWorkflowBundle(
  path: string = prebuiltBundlePathFor('single'),
  compiled: boolean = RUNNING_COMPILED,
): WorkflowBundlePath | undefined {
  if (!compiled) return undefined;
  if (!existsSync(path) || statSync(path).size === 0) throw new MissingWorkflowBundleError(path);
  return { codePath: path };
}
