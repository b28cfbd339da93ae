// A jest file's webhook receiver over real HTTP against the run's dev server, with no worker on its
// task queue: what the receiver started or signalled is read from the server, and every workflow
// a test records in `started` is terminated after the file.
import { createHmac } from 'node:crypto';
import type { Server } from 'node:http';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from '../../src/config/config';
import { createTemporalClient } from '../../src/temporal/client';
import { closeServer } from '../../src/webhooks/receiver';
import { listenWebhookReceiver } from './webhook-receiver';

export interface ReceiverUnderTest {
  /** The Temporal client the receiver uses (set in beforeAll). */
  readonly client: Client;
  /** The receiver's base URL (set in beforeAll). */
  readonly url: string;
  /** Workflow ids to terminate after the file. */
  readonly started: string[];
}

/** Starts the receiver for `config` before the file's tests and stops it (and what they started) after. */
export function useWebhookReceiver(config: AppConfig, options: { logger?: Logger } = {}): ReceiverUnderTest {
  const started: string[] = [];
  let client: Client | undefined;
  let server: Server | undefined;
  let url = '';
  beforeAll(async () => {
    client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
    ({ server, url } = await listenWebhookReceiver(config, client, options));
  });
  afterAll(async () => {
    if (server) await closeServer(server);
    for (const workflowId of started)
      await client?.workflow
        .getHandle(workflowId)
        .terminate('test cleanup')
        .catch(() => undefined);
    await client?.connection.close();
  });
  return {
    get client() {
      if (!client) throw new Error('the receiver is not started yet (use it inside a test)');
      return client;
    },
    get url() {
      return url;
    },
    started,
  };
}

/** The HMAC-SHA512 of `data` under `key`, in hex: the signature the service sends. */
export const hmacSha512Hex = (key: string, data: string | Buffer): string =>
  createHmac('sha512', key).update(data).digest('hex');

/** Whether a workflow with this id exists on the server. */
export async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
