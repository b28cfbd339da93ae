// The sandbox's admin API (/__admin) over HTTP: ledger, faults, webhook faults, clock, payer actions.
import type { FaultRule, LedgerEntry, WebhookFault } from '../src/sandbox';

export class SandboxAdmin {
  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.base}/__admin${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const json = (await res.json()) as { data: T; message?: string };
    if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${json.message ?? ''}`);
    return json.data;
  }

  ledger(): Promise<LedgerEntry[]> {
    return this.call('GET', '/ledger');
  }
  addFault(rule: Omit<FaultRule, 'id'>): Promise<FaultRule> {
    return this.call('POST', '/faults', rule);
  }
  clearFaults(): Promise<void> {
    return this.call('DELETE', '/faults');
  }
  addWebhookFault(fault: Omit<WebhookFault, 'id' | 'count'> & { count?: number }): Promise<WebhookFault> {
    return this.call('POST', '/webhook-faults', fault);
  }
  clearWebhookFaults(): Promise<void> {
    return this.call('DELETE', '/webhook-faults');
  }
  releaseHeld(): Promise<{ released: number }> {
    return this.call('POST', '/webhook-faults/release');
  }
  advanceClock(ms: number): Promise<unknown> {
    return this.call('POST', '/clock/advance', { ms });
  }
  decidePosRemote(requestRef: string, responseCode: string): Promise<unknown> {
    return this.call('POST', `/pos/remote/${encodeURIComponent(requestRef)}/decide`, { response_code: responseCode });
  }
}
