// What ships: `npm run build` writes dist/ and dist/workflow-bundle.js; the production worker
// (`node dist/workers/main.js`) loads that bundle instead of running webpack at start, and runs a
// flow end to end against the suite's dev server and a sandbox.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { RunningServices } from '../../src/stack/services';
import { runVend } from '../../src/starters/vending';
import { MissingWorkflowBundleError, prebuiltWorkflowBundle } from '../../src/workers/workflow-bundle';
import { startServices, testConfig } from '../support/stack';
import { SandboxAdmin } from '../support/sandbox-admin';
import { electricityVend } from '../support/flow-inputs';
import { PRELOADED_WORKFLOW_MODULES } from '../../src/workers/worker';
import { BUILT, ensureBuilt } from './build';
import { startWorkerProcess, stopWorkerProcess, workerEnvironment, type WorkerProcess } from './processes';

const config = testConfig();
let services: RunningServices;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  await ensureBuilt();
  services = await startServices(config, { withoutWorker: true });
}, 180_000);
afterAll(async () => {
  if (worker) await stopWorkerProcess(worker, 5_000);
  await services?.stop();
});

describe('the stack-capture preload (dist/workers/workflow-stack-traces.js)', () => {
  /** What a process started with `preload` (or not) and WORKER_WORKFLOW_STACK_TRACES=`mode` reports. */
  function stateOf(preload: boolean, mode?: string): unknown {
    const script = join(mkdtempSync(join(tmpdir(), 'stack-traces-')), 'main.js');
    writeFileSync(
      script,
      `console.log(JSON.stringify(require(${JSON.stringify(BUILT.workflowStackTracesPreload)}).workflowStackTraceState()));`,
    );
    const run = spawnSync(
      process.execPath,
      [...(preload ? ['--require', BUILT.workflowStackTracesPreload] : []), script],
      {
        env: { ...process.env, WORKER_WORKFLOW_STACK_TRACES: mode ?? '' },
        encoding: 'utf8',
      },
    );
    return JSON.parse(run.stdout.trim());
  }

  it('is off by default when preloaded, on when asked, and says so when it was not preloaded', () => {
    expect(stateOf(true)).toEqual({ requested: 'off', effective: 'off' });
    expect(stateOf(true, 'on')).toEqual({ requested: 'on', effective: 'on' });
    expect(stateOf(false)).toEqual({ requested: 'off', effective: 'on (not preloaded)' });
  });
});

describe('choosing the workflow bundle the worker loads', () => {
  it('is the built file when running compiled, nothing under tsx, and an error (never a silent webpack run) when the file is missing', () => {
    expect(prebuiltWorkflowBundle(BUILT.workflowBundle, true)).toEqual({ codePath: BUILT.workflowBundle });
    expect(prebuiltWorkflowBundle(BUILT.workflowBundle, false)).toBeUndefined();
    const missing = join(mkdtempSync(join(tmpdir(), 'no-bundle-')), 'workflow-bundle.js');
    expect(() => prebuiltWorkflowBundle(missing, true)).toThrow(MissingWorkflowBundleError);
    expect(() => prebuiltWorkflowBundle(missing, true)).toThrow(/npm run build/);
  });

  it('the plain bundle carries the metrics interceptor only; the traced one OpenTelemetry too', () => {
    const plain = readFileSync(BUILT.workflowBundle, 'utf8');
    const traced = readFileSync(BUILT.tracedWorkflowBundle, 'utf8');
    for (const code of [plain, traced]) expect(code).toContain('metrics-interceptor');
    const otelModule = '"./node_modules/@temporalio/interceptors-opentelemetry/'; // a bundled module, not a comment
    expect(plain).not.toContain(otelModule);
    expect(traced).toContain(otelModule);
  });

  it('evaluates every preloaded module: webpack drops a bare preload of a "sideEffects": false package (it once dropped zod)', () => {
    for (const file of [BUILT.workflowBundle, BUILT.tracedWorkflowBundle]) {
      const code = readFileSync(file, 'utf8');
      const preload = /exports\.preloadModules = function preloadModules\(\) \{\n([\s\S]*?)\n\}/.exec(code)?.[1];
      expect(preload).toBeDefined();
      const lines = preload!.split('\n').map((l) => l.trim());
      // One require per listed module, and nothing replaced by webpack's `0;` placeholder.
      expect(lines).toHaveLength(PRELOADED_WORKFLOW_MODULES.length);
      for (const line of lines) expect(line).toMatch(/^__webpack_require__\(/);
      expect(preload).toContain('shared/lazy.js');
    }
  });
});

it('node dist/workers/main.js loads the prebuilt bundle, runs a vend to completion, and stops cleanly on SIGTERM', async () => {
  worker = startWorkerProcess('dist worker', workerEnvironment(config, services.sandboxUrl!));
  await worker.ready;
  const started = worker
    .output()
    .split('\n')
    .find((l) => l.includes('"msg":"worker started"'))!;
  expect(JSON.parse(started)).toMatchObject({
    workflowBundle: 'prebuilt',
    taskQueue: config.temporal.taskQueue,
    workflowStackTraces: 'off', // the preload, as production starts it
  });
  // The SDK logs this only when it runs webpack itself.
  expect(worker.output()).not.toContain('Workflow bundle created');

  const orderRef = `ship-${randomUUID().slice(0, 8)}`;
  const result = await runVend(services.starters, electricityVend(orderRef));
  expect(result).toMatchObject({ status: 'vended', attempt: 1 });
  expect(
    await new SandboxAdmin(services.sandboxUrl!).ledger({ reference: result.reference!, kind: 'vend' }),
  ).toHaveLength(1);

  // The SDK's per-promise stack capture is off in the workflow thread: it refuses its stack-trace
  // query ("Workflow stack traces are not enabled on this worker").
  const vend = services.client.workflow.getHandle(`vend-${orderRef}`);
  const stackTraceQuery = '__stack_trace'; // the SDK's built-in query (the Web UI's "Stack Trace" tab)
  // (The client cannot read the refusal's message: our codec encrypts failure messages, "Encoded failure".)
  await expect(vend.query(stackTraceQuery)).rejects.toMatchObject({ name: 'QueryNotRegisteredError', code: 3 });

  expect(await stopWorkerProcess(worker)).toEqual({ code: 0, signal: null });
  expect(worker.output()).toMatch(/"state":"STOPPED"/);

  // WORKER_WORKFLOW_STACK_TRACES=on (the same preload): the capture runs, and the query answers.
  worker = startWorkerProcess(
    'dist worker, stack traces on',
    workerEnvironment(config, services.sandboxUrl!, { WORKER_WORKFLOW_STACK_TRACES: 'on' }),
  );
  await worker.ready;
  expect(worker.output()).toContain('"workflowStackTraces":"on"');
  expect(typeof (await vend.query<string>(stackTraceQuery))).toBe('string');
  expect(await stopWorkerProcess(worker)).toEqual({ code: 0, signal: null });
  worker = undefined;
});
