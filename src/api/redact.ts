// Response bodies kept on errors (PaymentsApiError.body) lose the values of secret fields, so an
// error that ends up in a log or a workflow failure never carries key material, PINs or OTPs.
// Successful results are returned untouched: the caller asked for them (the key exchange's pin_key,
// the mandate create's session_token). What is secret is the logger's one list (src/logging/redaction.ts: listed names
// in any spelling, and names with a secret word), and string values are scrubbed as log lines are.
import { isSecretFieldName, REDACTED, scrubText } from '../logging/redaction';

export { REDACTED };

export function redactBody(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 10) return '[Truncated]';
  if (Array.isArray(value)) return value.map((v) => redactBody(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = isSecretFieldName(k) && v !== null && v !== undefined && v !== '' ? REDACTED : redactBody(v, depth + 1);
  }
  return out;
}
