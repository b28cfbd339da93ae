// Value types more than one env shape uses (config.ts and the shapes it spreads in), each with its one rule and message.
import { z } from 'zod';

/** A comma-separated variable's entries, trimmed, empty ones dropped; unset: none. */
export const csv = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** An optional http(s) URL. */
export const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional();

/** true/false/1/0, or unset (undefined) when the default depends on other variables. */
export const optionalBool = z
  .enum(['true', 'false', '1', '0'])
  .optional()
  .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1'));
