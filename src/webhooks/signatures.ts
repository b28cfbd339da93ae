// Signature checks for the service's notifications, always on the raw bytes received.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header names: the spec's, and the real service's (public facts). */
export const PAYMENT_SIGNATURE_HEADERS = ['x-service-encrypted-body', 'x-squad-encrypted-body'] as const;
export const VA_SIGNATURE_HEADERS = ['x-service-signature', 'x-squad-signature'] as const;

export function hmacSha512Hex(key: string, data: Buffer | string): string {
  return createHmac('sha512', key).update(data).digest('hex');
}

/**
 * Constant-time comparison of two hex digests, ignoring case. The received text must be hex digits
 * only and exactly as long as the expected digest (128 characters for HMAC-SHA512): Buffer.from(hex)
 * stops quietly at an odd trailing or non-hex character, so the text is checked, and that check is
 * what gives timingSafeEqual two buffers of one length.
 */
export function hexDigestsEqual(expectedHex: string, receivedHex: string): boolean {
  const received = receivedHex.trim().toLowerCase();
  if (received.length !== expectedHex.length || !/^[0-9a-f]+$/.test(received)) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(received, 'hex'));
}

/**
 * The payment webhook's signature (E-1): the spec says 'not shown'; our reading (and the real service's public material):
 * HMAC-SHA512 of the raw body keyed with the secret key, hex, case-insensitive.
 */
export function verifyPaymentWebhook(rawBody: Buffer, signature: string, secretKey: string): boolean {
  return hexDigestsEqual(hmacSha512Hex(secretKey, rawBody), signature);
}

/** The six values versions 2 and 3 sign, joined by '|', in the spec's order. */
export function virtualAccountSignedString(body: Record<string, unknown>): string {
  return [
    body.transaction_reference,
    body.virtual_account_number,
    body.currency,
    body.principal_amount,
    body.settled_amount,
    body.customer_identifier,
  ]
    .map((v) => (v === undefined || v === null ? '' : String(v)))
    .join('|');
}

/**
 * Which of the credit notification's two signature schemes held: `whole-body` (version 1: every field is signed) or
 * `six-values` (versions 2 and 3: only the six values of virtualAccountSignedString are signed).
 * What the receiver trusts follows from this, never from the body's own `version` field, which no
 * scheme of versions 2 and 3 signs.
 */
export type VirtualAccountSignatureScheme = 'whole-body' | 'six-values';

/**
 * The credit notification's signature (E-2). Checked on the raw bytes first: version 1 signs the whole body, so its HMAC is compared
 * before anything is parsed. Versions 2 and 3 sign six values of the body, so only when the raw
 * check fails is the body parsed — to read those six values, nothing else is used — and the
 * joined string checked, whatever the (unsigned) `version` field says. Answers the parsed body and
 * the scheme that held only when a signature holds.
 */
export function verifyVirtualAccountWebhook(
  rawBody: Buffer,
  signature: string,
  secretKey: string,
): { verified: true; body: unknown; scheme: VirtualAccountSignatureScheme } | { verified: false } {
  const parse = (): unknown => {
    try {
      return JSON.parse(rawBody.toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  };
  if (hexDigestsEqual(hmacSha512Hex(secretKey, rawBody), signature))
    return { verified: true, body: parse(), scheme: 'whole-body' };
  const body = parse();
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { verified: false };
  return hexDigestsEqual(
    hmacSha512Hex(secretKey, virtualAccountSignedString(body as Record<string, unknown>)),
    signature,
  )
    ? { verified: true, body, scheme: 'six-values' }
    : { verified: false };
}
