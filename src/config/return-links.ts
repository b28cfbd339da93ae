// The signed link of GET /payments/return (docs/security.md): whoever builds a payment's return URL
// (the checkout starter) signs reference + expiry with RETURN_LINK_KEY; the receiver shows the
// payment's state only for a link whose signature holds and whose expiry has not passed.
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
