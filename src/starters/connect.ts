// How backends reach the payment workflows: a Temporal client with the project's
// encrypted data converter, configured from the same environment as the worker.
import type { Client } from '@temporalio/client';
import { loadConfig, type AppConfig } from '../config/config';
import { createTemporalClient } from '../temporal/client';

export interface StarterContext {
  client: Client;
  taskQueue: string;
}

export async function connectStarters(config: AppConfig = loadConfig()): Promise<StarterContext> {
  const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  return { client, taskQueue: config.temporal.taskQueue };
}
