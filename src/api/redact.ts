// Response bodies kept on errors (PaymentsApiError.body) lose the values of secret fields, so an
// error that ends up in a log or a workflow failure never carries key material, PINs or OTPs.
// Successful results are returned untouched: the caller asked for them (F2's pin_key, D1's
// session_token). Names are matched lower-cased with separators removed (pin_block = pinBlock), and
// string values are scrubbed of PAN- and track2-shaped text as log lines are.
import { normaliseFieldName, scrubText } from '../logging/logger';

const SECRET_FIELDS = new Set(
  [
    'pin_key',
    'master_key',
    'working_key',
    'session_key',
    'session_token',
    'pin',
    'pin_block',
    'otp',
    'otp_token',
    'cvv',
    'bvn',
    'track2',
    'chipdata',
    'card_number',
    'number',
    'authorization',
    'secret_key',
    'pan',
    'expiry',
    'expiry_month',
    'expiry_year',
  ].map(normaliseFieldName),
);

export const REDACTED = '[REDACTED]';

export function redactBody(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 10) return '[Truncated]';
  if (Array.isArray(value)) return value.map((v) => redactBody(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] =
      SECRET_FIELDS.has(normaliseFieldName(k)) && v !== null && v !== undefined && v !== ''
        ? REDACTED
        : redactBody(v, depth + 1);
  }
  return out;
}
