// GET /payments/return (E-3, the payer's browser lands here) shows a payment's state only through a
// signed, expiring link; anything else gets a neutral page. Whoever builds the return URL (the
// checkout and card starters, with RETURN_LINK_KEY) signs reference + expiry:
//
//   <receiver>/payments/return?reference=<ref>&expires=<unix seconds>&sig=<hex HMAC-SHA256>
//   sig = HMAC-SHA256(RETURN_LINK_KEY, "payflow-return-v1\n<reference>\n<expires>")
//
// A guessed or copied reference alone reveals nothing, and a leaked link stops working at its
// expiry. The route is also rate-limited per client address (RateLimiter below).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ReturnLinkConfig } from '../config/return-links';

export const RETURN_PATH = '/payments/return';

function mac(key: string, reference: string, expires: number): string {
  return createHmac('sha256', key).update(`payflow-return-v1\n${reference}\n${expires}`).digest('hex');
}

/**
 * `url` with the signed parameters added, when it is our return route (its path ends in
 * /payments/return); any other URL (the merchant's own page) is left as it is.
 */
export function signReturnUrl(
  url: string,
  reference: string,
  links: ReturnLinkConfig,
  nowMs: number = Date.now(),
): string {
  const parsed = new URL(url);
  if (!parsed.pathname.endsWith(RETURN_PATH)) return url;
  const expires = Math.floor(nowMs / 1000) + links.ttlSeconds;
  parsed.searchParams.set('reference', reference);
  parsed.searchParams.set('expires', String(expires));
  parsed.searchParams.set('sig', mac(links.key, reference, expires));
  return parsed.toString();
}

/** The reference a return link may show, or why it may not (the page is neutral then). */
export function verifyReturnLink(
  params: URLSearchParams,
  key: string,
  nowMs: number = Date.now(),
): { reference: string } | { refused: 'unsigned' | 'malformed' | 'expired' | 'bad signature' } {
  const reference = params.get('reference');
  const expiresText = params.get('expires');
  const sig = params.get('sig');
  if (!reference || !expiresText || !sig) return { refused: 'unsigned' };
  if (!/^\d{1,12}$/.test(expiresText) || !/^[0-9a-f]{64}$/.test(sig) || reference.length > 200)
    return { refused: 'malformed' };
  const expires = Number(expiresText);
  const expected = Buffer.from(mac(key, reference, expires), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return { refused: 'bad signature' };
  if (expires * 1000 <= nowMs) return { refused: 'expired' };
  return { reference };
}

/**
 * A fixed-window limit per client address: at most `limit` requests per `windowMs`. Bounded: at
 * most `maxClients` addresses are remembered (the oldest window is dropped first).
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit = 30,
    private readonly windowMs = 60_000,
    private readonly maxClients = 10_000,
  ) {}

  /** True when this request may go on; false: answer 429. */
  allow(client: string, nowMs: number = Date.now()): boolean {
    const w = this.windows.get(client);
    if (!w || nowMs - w.start >= this.windowMs) {
      this.windows.delete(client);
      this.windows.set(client, { start: nowMs, count: 1 });
      if (this.windows.size > this.maxClients) this.windows.delete(this.windows.keys().next().value as string);
      return true;
    }
    w.count += 1;
    return w.count <= this.limit;
  }

  /** Seconds until `client` may try again. */
  retryAfterSeconds(client: string, nowMs: number = Date.now()): number {
    const w = this.windows.get(client);
    return w ? Math.max(1, Math.ceil((w.start + this.windowMs - nowMs) / 1000)) : 1;
  }
}

/**
 * A starter's input with its return URL(s) signed for its transaction reference (the checkout's
 * callbackUrl, the card flow's redirectUrl), when the context carries RETURN_LINK_KEY.
 */
export function withSignedReturn<T extends { transactionRef: string; callbackUrl?: string; redirectUrl?: string }>(
  ctx: { returnLinks?: ReturnLinkConfig },
  input: T,
  nowMs: number = Date.now(),
): T {
  const links = ctx.returnLinks;
  if (!links) return input;
  return {
    ...input,
    ...(input.callbackUrl ? { callbackUrl: signReturnUrl(input.callbackUrl, input.transactionRef, links, nowMs) } : {}),
    ...(input.redirectUrl ? { redirectUrl: signReturnUrl(input.redirectUrl, input.transactionRef, links, nowMs) } : {}),
  };
}
