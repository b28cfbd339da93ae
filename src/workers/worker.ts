// Builds the payments worker: workflows bundled from src/workflows, activities from the
// createActivities factory, the encrypted data converter, and pino as the logger.
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createDataConverter, type EncryptionSettings } from '../codec/data-converter';
import { temporalConnectionOptions, type TemporalConnectionSettings } from '../temporal/connection';

/** A worker NativeConnection with the TLS and API key of `settings` (config.temporal). */
export function connectTemporalWorker(settings: TemporalConnectionSettings): Promise<NativeConnection> {
  return NativeConnection.connect(temporalConnectionOptions(settings));
}

export interface PaymentsWorkerOptions extends TemporalConnectionSettings {
  namespace: string;
  taskQueue: string;
  encryption: EncryptionSettings;
  activities: object;
  connection?: NativeConnection;
  /** Pre-built bundle (tests build it once); otherwise src/workflows is bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  workflowsPath?: string;
  /** Extra options, e.g. shutdownGraceTime or concurrency limits. */
  overrides?: Partial<WorkerOptions>;
}

export const WORKFLOWS_PATH = require.resolve('../workflows');

export async function createPaymentsWorker(opts: PaymentsWorkerOptions): Promise<Worker> {
  const connection = opts.connection ?? (await connectTemporalWorker(opts));
  return Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: opts.activities,
    dataConverter: createDataConverter(opts.encryption),
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: opts.workflowsPath ?? WORKFLOWS_PATH }),
    // Embedded uses (tests) keep a short grace; the worker process and `npm start` pass
    // WORKER_SHUTDOWN_GRACE_MS (75 s, src/shared/activity-timeouts.ts) through `overrides`.
    shutdownGraceTime: '10s',
    ...opts.overrides,
  });
}
