// The sandbox's admin API (/__admin) as the tests call it: one home for its bearer token and
// content type, and one client (SandboxAdmin) for the ledger, the request log, request and webhook
// faults, the clock, and the payer's actions (3-D Secure, USSD, a hosted checkout paid by card)
// that the tests play.
import {
  DEFAULT_SANDBOX_ADMIN_TOKEN,
  SANDBOX_OTP,
  SANDBOX_PIN,
  TEST_CARDS,
  type FaultRule,
  type LedgerEntry,
  type RequestLogEntry,
  type WebhookFault,
} from '../../src/sandbox';

export type { LedgerEntry, RequestLogEntry };

/** Headers every admin request carries (the sandboxes the suite starts use the default token). */
export const SANDBOX_ADMIN_HEADERS: Readonly<Record<string, string>> = {
  authorization: `Bearer ${DEFAULT_SANDBOX_ADMIN_TOKEN}`,
  'content-type': 'application/json',
};

/** Calls `/__admin<path>` and returns the envelope's `data`; a non-2xx answer throws with its body. */
export async function sandboxAdminCall<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}/__admin${path}`, {
    method,
    headers: SANDBOX_ADMIN_HEADERS,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as { data: T };
  if (!res.ok) throw new Error(`admin ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** One sandbox's admin API (`url` is the sandbox's base URL, as `RunningServices.sandboxUrl`). */
export class SandboxAdmin {
  constructor(readonly url: string) {}

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return sandboxAdminCall<T>(this.url, method, path, body);
  }

  /** Money movements; a string is a reference. */
  ledger(q: string | { reference?: string; kind?: string } = {}): Promise<LedgerEntry[]> {
    const filter = typeof q === 'string' ? { reference: q } : q;
    const p = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== undefined) as [string, string][]);
    return this.call('GET', `/ledger?${p.toString()}`);
  }

  /** The request log; with a reference, only that reference's requests (and, with a path, to that path). */
  async requests(reference?: string, path?: string): Promise<RequestLogEntry[]> {
    const log = await this.call<RequestLogEntry[]>('GET', '/requests');
    return reference === undefined ? log : log.filter((r) => r.reference === reference && (!path || r.path === path));
  }

  /** The payment webhook deliveries for `ref`. */
  async webhooks(
    ref: string,
  ): Promise<{ attempt: number; status: number | string; acknowledged: boolean; duplicate?: boolean }[]> {
    return (
      await this.call<{
        payments: { attempt: number; status: number | string; acknowledged: boolean; duplicate?: boolean }[];
      }>('GET', `/webhooks?ref=${encodeURIComponent(ref)}`)
    ).payments;
  }

  fault(rule: Omit<FaultRule, 'id'>): Promise<unknown> {
    return this.call('POST', '/faults', rule);
  }
  clearFaults(): Promise<unknown> {
    return this.call('DELETE', '/faults');
  }

  /** A fault on the next `count` payment webhooks. */
  webhookFault(kind: WebhookFault['kind'], count = 1): Promise<unknown> {
    return this.call('POST', '/webhook-faults', { kind, count, target: 'payment' });
  }
  clearWebhookFaults(): Promise<unknown> {
    return this.call('DELETE', '/webhook-faults');
  }
  releaseWebhooks(): Promise<unknown> {
    return this.call('POST', '/webhook-faults/release');
  }
  /** Waits until the webhook deliveries in flight have finished (their results recorded). */
  settle(): Promise<unknown> {
    return this.call('POST', '/webhooks/settle');
  }

  advanceClock(ms: number): Promise<{ now: string }> {
    return this.call('POST', '/clock/advance', { ms });
  }

  /** The payer completes (or fails) 3-D Secure for `ref`. */
  pay3ds(ref: string, outcome: 'complete' | 'fail' = 'complete'): Promise<unknown> {
    return this.call('POST', `/3ds/${encodeURIComponent(ref)}/${outcome}`);
  }
  /** The payer completes the USSD code issued for `ref`. */
  payUssd(ref: string): Promise<unknown> {
    return this.call('POST', `/ussd/${encodeURIComponent(ref)}/pay`);
  }
}

/** POSTs `body` as JSON to a page of the sandbox's hosted checkout, as the payer's browser does; its answer. */
export const postCheckoutPage = async (url: string, body: unknown = {}) =>
  (
    await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
  ).json() as Promise<{ data: Record<string, unknown> }>;

/** The payer pays the hosted checkout at `checkoutUrl` by card: the PIN-then-OTP test card, the sandbox's PIN, its OTP. */
export async function payCheckoutByCard(checkoutUrl: string): Promise<void> {
  await postCheckoutPage(`${checkoutUrl}/card`, {
    number: TEST_CARDS.pinThenOtp,
    cvv: '123',
    expiry_month: '12',
    expiry_year: '29',
  });
  await postCheckoutPage(`${checkoutUrl}/authorize`, { pin: SANDBOX_PIN });
  await postCheckoutPage(`${checkoutUrl}/authorize`, { otp: SANDBOX_OTP });
}
