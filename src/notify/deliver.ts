// One delivery attempt of a signed event to the merchant's endpoint: a POST of the exact signed
// bytes, 10 s at most, to an address checked first (src/notify/target-guard.ts). What it answers
// decides what the delivery workflow does next: any 2xx is delivered, 410 means the endpoint is gone
// (stop), a refused target is never sent to (stop, with the reason), anything else (another status,
// a redirect, a timeout, a connection error) is retried later under the same id.
import { request } from 'undici';
import type { MerchantEvent } from '../shared/merchant-event';
import { MAX_ANSWER_BODY_BYTES } from '../http/bounded-body';
import { signEvent } from './signing';
import {
  checkTarget,
  DEVELOPMENT_POLICY,
  pinnedDispatcher,
  RefusedTarget,
  type OutboundPolicy,
  type Resolver,
} from './target-guard';

export type DeliveryAttempt =
  | { outcome: 'delivered'; httpStatus: number }
  | { outcome: 'gone'; httpStatus: 410 }
  | { outcome: 'refused'; error: string }
  | { outcome: 'retry'; httpStatus?: number; error: string };

export interface DeliveryOptions {
  /** The attempt's time (the signature's timestamp). */
  at?: Date;
  /** Where events may go (outboundPolicyOf(config)); development's when absent. */
  policy?: OutboundPolicy;
  /** Tests stand in for DNS. */
  resolve?: Resolver;
}

export async function deliverOnce(
  url: string,
  secrets: string | readonly string[],
  event: MerchantEvent,
  timeoutMs: number,
  opts: DeliveryOptions = {},
): Promise<DeliveryAttempt> {
  const signed = signEvent(secrets, event, opts.at ?? new Date());
  let target;
  try {
    target = await checkTarget(url, opts.policy ?? DEVELOPMENT_POLICY, opts.resolve);
  } catch (err) {
    if (err instanceof RefusedTarget) return { outcome: 'refused', error: err.message };
    return { outcome: 'retry', error: `connection error: ${errorCode(err)}` };
  }
  const dispatcher = pinnedDispatcher(target);
  try {
    // undici's request follows no redirect: a 3xx is an answer like any other non-2xx (retried).
    const res = await request(target.url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', 'user-agent': 'payflow-temporal-events/1', ...signed.headers },
      body: signed.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The merchant's answer body is never read into history or logs: only its status matters.
    await res.body.dump({ limit: MAX_ANSWER_BODY_BYTES }).catch(() => undefined);
    if (res.statusCode >= 200 && res.statusCode < 300) return { outcome: 'delivered', httpStatus: res.statusCode };
    if (res.statusCode === 410) return { outcome: 'gone', httpStatus: 410 };
    return { outcome: 'retry', httpStatus: res.statusCode, error: `HTTP ${res.statusCode}` };
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return { outcome: 'retry', error: `no answer within ${timeoutMs} ms` };
    return { outcome: 'retry', error: `connection error: ${errorCode(err)}` };
  } finally {
    await dispatcher.destroy().catch(() => undefined);
  }
}

function errorCode(err: unknown): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  return e.code ?? e.cause?.code ?? e.message;
}
