// One delivery attempt of a signed event to the merchant's endpoint: a POST of the exact signed
// bytes, 10 s at most. What it answers decides what the delivery workflow does next: any 2xx is
// delivered, 410 means the endpoint is gone (stop), anything else (another status, a timeout, a
// connection error) is retried later under the same id.
import type { MerchantEvent } from '../shared/merchant-event';
import { signEvent } from './signing';

export type DeliveryAttempt =
  | { outcome: 'delivered'; httpStatus: number }
  | { outcome: 'gone'; httpStatus: 410 }
  | { outcome: 'retry'; httpStatus?: number; error: string };

export async function deliverOnce(
  url: string,
  secret: string,
  event: MerchantEvent,
  timeoutMs: number,
  at: Date = new Date(),
): Promise<DeliveryAttempt> {
  const signed = signEvent(secret, event, at);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'payflow-temporal-events/1', ...signed.headers },
      body: signed.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError')
      return { outcome: 'retry', error: `no answer within ${timeoutMs} ms` };
    return { outcome: 'retry', error: `connection error: ${e.cause?.code ?? e.message}` };
  }
  // The merchant's answer body is never read into history or logs: only its status matters.
  await res.body?.cancel().catch(() => undefined);
  if (res.status >= 200 && res.status < 300) return { outcome: 'delivered', httpStatus: res.status };
  if (res.status === 410) return { outcome: 'gone', httpStatus: 410 };
  return { outcome: 'retry', httpStatus: res.status, error: `HTTP ${res.status}` };
}
