// The stack a test runs against: config aimed at the suite's dev server and claim-check PostgreSQL
// (both started once per jest run by jest-global-setup.ts), a once-per-process workflow bundle, the
// services (worker, sandbox, webhook receiver, codec server) started for a test file, and a log
// capture stream.
import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Logger } from 'pino';
import { loadConfig, type AppConfig } from '../../src/config/config';
import { createLogger } from '../../src/logging/logger';
import { runServices, type RunServicesOptions, type RunningServices } from '../../src/stack/services';
import { SandboxAdmin } from './sandbox-admin';
import { mutationBundleCache, withActiveMutant } from './mutation-bundle';
import { diskCachedBundle } from './bundle-cache';
import {
  createPaymentsWorker,
  bundleInterceptorModules,
  METRICS_INTERCEPTOR_PATH,
  PRELOADED_WORKFLOW_MODULES,
  WORKFLOWS_PATH,
  type PaymentsWorkerOptions,
} from '../../src/workers/worker';
import { createTemporalClient } from '../../src/temporal/client';
import { FAILURE_CONVERTER_PATH } from '../../src/codec/data-converter';

export function devServerAddress(): string {
  const address = process.env.TEMPORAL_TEST_ADDRESS;
  if (!address) throw new Error('TEMPORAL_TEST_ADDRESS is not set: jest globalSetup starts the dev server');
  return address;
}

export function claimCheckDatabaseUrl(): string {
  const url = process.env.CLAIM_CHECK_TEST_DATABASE_URL;
  if (!url)
    throw new Error('CLAIM_CHECK_TEST_DATABASE_URL is not set: jest globalSetup starts the claim-check PostgreSQL');
  return url;
}

/** Config for a test: the suite's dev server and claim-check PostgreSQL, a task queue of its own, free ports. */
export function testConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    TEMPORAL_ADDRESS: devServerAddress(),
    CLAIM_CHECK_DATABASE_URL: claimCheckDatabaseUrl(),
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    SANDBOX_PORT: '0',
    WEBHOOK_PORT: '0',
    CODEC_PORT: '0',
    LOG_LEVEL: 'warn',
    PAYMENTS_TIMEOUT_MS: '5000',
    // Tests share one dev server: no Schedule firing into a test's stack after it stopped.
    VA_ERROR_LOG_SWEEP_EVERY_S: '0',
    // Unversioned workers on their own task queues: test/foundation/versioning.test.ts and the `npm start`
    // test run versioned ones (a versioned worker on a fresh task queue waits for its version to be routed).
    WORKER_VERSIONING: 'off',
    ...env,
  });
}

const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();

/**
 * Bundles a workflows module once per test file, and once per source state across files and runs
 * (bundle-cache.ts; webpack takes seconds), with the workflow
 * interceptor modules the worker uses (the metrics interceptor; the tracing test adds OpenTelemetry's).
 */
export function workflowBundle(
  workflowsPath: string = WORKFLOWS_PATH,
  interceptorModules: string[] = [METRICS_INTERCEPTOR_PATH],
): Promise<WorkflowBundleWithSourceMap> {
  const key = [workflowsPath, ...interceptorModules].join('|');
  let b = bundles.get(key);
  if (!b) {
    b = mutationBundleCache(key, () =>
      diskCachedBundle(key, workflowsPath, () =>
        bundleWorkflowCode({
          workflowsPath,
          workflowInterceptorModules: interceptorModules,
          preloadModules: PRELOADED_WORKFLOW_MODULES,
          failureConverterPath: FAILURE_CONVERTER_PATH,
          logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
        }),
      ),
    );
    bundles.set(key, b);
  }
  return b.then(withActiveMutant);
}

/** A writable that collects pino's JSON lines. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    cb();
  }
  get records(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
  /**
   * What the lines say, for "no secret leaked" checks: the envelope fields that vary per run
   * (time, pid, hostname) and stack frames (file paths and line numbers) are left out, so a short
   * secret such as a CVV cannot be "found" in a process id or a millisecond.
   */
  get text(): string {
    return this.lines.map((l) => JSON.stringify(withoutRunNoise(JSON.parse(l)))).join('\n');
  }
  /** The lines exactly as written. */
  get rawText(): string {
    return this.lines.join('\n');
  }
}

const RUN_NOISE = new Set(['time', 'pid', 'hostname']);

function withoutRunNoise(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutRunNoise(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (depth === 0 && RUN_NOISE.has(k)) continue;
      // Keep a stack's message lines, drop its "    at file:line:col" frames.
      out[k] =
        k === 'stack' && typeof v === 'string'
          ? v
              .split('\n')
              .filter((line) => !/^\s+at /.test(line))
              .join('\n')
          : withoutRunNoise(v, depth + 1);
    }
    return out;
  }
  return value;
}

/** A logger whose lines go to a capture nobody reads (the default for a test's services). */
export function quietLogger(): Logger {
  return createLogger({ destination: new LogCapture() });
}

export type ServicesOptions = Partial<Omit<RunServicesOptions, 'config'>>;

/**
 * The services for `config` (`runServices`), with a quiet logger and the worker's once-per-process
 * workflow bundle unless `options` says otherwise (no bundle is built for `withoutWorker`).
 */
export async function startServices(config: AppConfig, options: ServicesOptions = {}): Promise<RunningServices> {
  return runServices({
    ...options,
    config,
    logger: options.logger ?? quietLogger(),
    // The bundle of the config's task-queue layout (the split one carries the activity-queue interceptor).
    workflowBundle:
      options.workflowBundle ??
      (options.withoutWorker
        ? undefined
        : await workflowBundle(
            WORKFLOWS_PATH,
            bundleInterceptorModules({ layout: config.taskQueues.layout, traced: false }),
          )),
  });
}

/**
 * The services for one test file, started before its first test and stopped after its last, with
 * an admin client for their sandbox. Logs go to a discarded capture unless the file passes its own
 * logger; `options` (e.g. the sandbox's) go to `startServices`.
 */
export function useServices(
  config: AppConfig,
  logger: Logger = quietLogger(),
  options: ServicesOptions = {},
): { readonly services: RunningServices; readonly admin: SandboxAdmin } {
  const env = {} as { services: RunningServices; admin: SandboxAdmin };
  beforeAll(async () => {
    env.services = await startServices(config, { ...options, logger });
    env.admin = new SandboxAdmin(env.services.sandboxUrl!);
  }, 60_000);
  afterAll(() => env.services?.stop());
  return env;
}

/**
 * Runs `fn` with a client for `config` while the project's worker (the config's task queue and
 * encrypting data converter, `options` on top) runs on a connection of its own; closes both after.
 */
export async function withWorker<T>(
  config: AppConfig,
  options: Partial<PaymentsWorkerOptions> & Pick<PaymentsWorkerOptions, 'activities'>,
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  try {
    const worker = await createPaymentsWorker({
      ...config.temporal,
      encryption: config.encryption,
      connection,
      ...options,
    });
    return await worker.runUntil(() => fn(client));
  } finally {
    await client.connection.close();
    await connection.close();
  }
}
