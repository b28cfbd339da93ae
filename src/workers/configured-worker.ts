// The payments worker as a process's config describes it: its activities over the process's stores
// and clients, its layout, the queues it polls and their tuning. One wiring for the worker process
// (./main.ts) and the stack of `npm start` and the tests (../stack/services.ts); what differs between
// them (bundle, tuning, deployment version, shutdown grace, Nexus options) is what they pass as `run`.
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { activityQueueTuning } from './tuning';
import { createPaymentsWorker, type PaymentsWorkerOptions } from './worker';
import type { WorkerGroup } from './worker-group';

/** What the activities and the worker run over: the worker's connection, and the client activities ask other flows with. */
export type WorkerResources = Omit<ActivityDeps, 'config' | 'temporal'> & {
  connection: NativeConnection;
  client: Client;
};

export function createConfiguredWorker(
  config: ActivityDeps['config'],
  { connection, client, logger, ...stores }: WorkerResources,
  run: Pick<PaymentsWorkerOptions, 'workflowBundle' | 'deployment' | 'tuning' | 'overrides' | 'nexus'>,
): Promise<WorkerGroup> {
  return createPaymentsWorker({
    ...config.temporal,
    encryption: config.encryption,
    connection,
    activities: createActivities({
      ...stores,
      logger: logger.child({ component: 'activities' }),
      config,
      temporal: client,
    }),
    layout: config.taskQueues.layout,
    // The main queue and, split, the money and reads queues, each its own worker and slots (docs/deployment.md, "Task queues").
    queues: config.taskQueues.polled,
    activityQueues: activityQueueTuning(config.taskQueues),
    ...run,
  });
}
