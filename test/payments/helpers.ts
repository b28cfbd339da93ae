// Helpers for the payment flows' tests: the sandbox's admin API over HTTP, and a scan of a
// workflow's raw history (payload bytes decoded as text) for secrets in plaintext.
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Logger } from 'pino';
import type { AppConfig } from '../../src/config/config';
import { createLogger } from '../../src/logging/logger';
import { runServices, type RunningServices } from '../../src/stack/services';
import { sandboxAdminCall } from '../helpers/sandbox-admin';
import { LogCapture, workflowBundle } from '../helpers/temporal';

export class Admin {
  constructor(private readonly base: string) {}
  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return sandboxAdminCall<T>(this.base, method, path, body);
  }
  ledger = (reference: string) =>
    this.call<{ kind: string; amount: number }[]>('GET', `/ledger?reference=${encodeURIComponent(reference)}`);
  requests = async (reference: string, path?: string) =>
    (
      await this.call<{ method: string; path: string; status: number | string; reference?: string }[]>(
        'GET',
        '/requests',
      )
    ).filter((r) => r.reference === reference && (!path || r.path === path));
  webhooks = async (ref: string) =>
    (
      await this.call<{
        payments: { attempt: number; status: number | string; acknowledged: boolean; duplicate?: boolean }[];
      }>('GET', `/webhooks?ref=${encodeURIComponent(ref)}`)
    ).payments;
  fault = (f: { method?: string; path: string; kind: string; count?: number }) => this.call('POST', '/faults', f);
  clearFaults = () => this.call('DELETE', '/faults');
  webhookFault = (kind: 'duplicate' | 'fail' | 'hold', count = 1) =>
    this.call('POST', '/webhook-faults', { kind, count, target: 'payment' });
  clearWebhookFaults = () => this.call('DELETE', '/webhook-faults');
  releaseWebhooks = () => this.call('POST', '/webhook-faults/release');
  settle = () => this.call('POST', '/webhooks/settle');
  advance = (ms: number) => this.call('POST', '/clock/advance', { ms });
  pay3ds = (ref: string, outcome: 'complete' | 'fail' = 'complete') =>
    this.call('POST', `/3ds/${encodeURIComponent(ref)}/${outcome}`);
  payUssd = (ref: string) => this.call('POST', `/ussd/${encodeURIComponent(ref)}/pay`);
}

/**
 * The whole stack (worker, sandbox, webhook receiver) for one test file, started before the
 * first test and stopped after the last, with an admin client for its sandbox. Logs go to a
 * discarded capture unless the file passes its own logger.
 */
export function usePaymentServices(
  config: AppConfig,
  logger: Logger = createLogger({ destination: new LogCapture() }),
): { readonly services: RunningServices; readonly admin: Admin } {
  const env = {} as { services: RunningServices; admin: Admin };
  beforeAll(async () => {
    env.services = await runServices({ config, logger, workflowBundle: await workflowBundle() });
    env.admin = new Admin(env.services.sandboxUrl!);
  });
  afterAll(() => env.services?.stop());
  return env;
}

/** Every string and every byte field of the history (bytes decoded as UTF-8), joined: what someone reading the stored history could see. */
export async function rawHistoryText(handle: WorkflowHandle): Promise<string> {
  const parts: string[] = [];
  const walk = (v: unknown): void => {
    if (v === null || v === undefined) return;
    if (v instanceof Uint8Array) parts.push(Buffer.from(v).toString('utf8'));
    else if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === 'object') Object.values(v as Record<string, unknown>).forEach(walk);
  };
  walk(await handle.fetchHistory());
  return parts.join('\n');
}

/** History event types, e.g. to count accepted Updates. */
export async function eventTypes(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).map((e) => temporal.api.enums.v1.EventType[e.eventType ?? 0]);
}
