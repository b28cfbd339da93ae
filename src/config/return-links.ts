// The signed link of GET /payments/return (docs/security.md): whoever builds a payment's return URL
// (the checkout and card starters) signs reference + expiry with RETURN_LINK_KEY; the receiver shows the
// payment's state only for a link whose signature holds and whose expiry has not passed.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

export const returnLinkEnvShape = {
  // HMAC-SHA256 key of the return link (at least 32 characters). Unset: the development key (refused in production).
  RETURN_LINK_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  // How long a return link shows the payment's state, in seconds (default 24 h).
  RETURN_LINK_TTL_S: z.coerce
    .number()
    .int()
    .min(60, 'must be at least 60 s')
    .max(30 * 86_400, 'must be at most 30 days')
    .default(86_400),
};

export interface ReturnLinkConfig {
  /** Never logged. */
  key: string;
  ttlSeconds: number;
}

// The link's form, and the one home of its rule (the starters sign with it, the receiver verifies
// with it and rate-limits the route per client address, src/http/rate-limit.ts):
//
//   <receiver>/payments/return?reference=<ref>&expires=<unix seconds>&sig=<hex HMAC-SHA256>
//   sig = HMAC-SHA256(RETURN_LINK_KEY, "payflow-return-v1\n<reference>\n<expires>")
//
// A guessed or copied reference alone reveals nothing, and a leaked link stops working at its expiry.
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
