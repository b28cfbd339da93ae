// pino JSON logging with redaction of every secret the flows handle, wherever it appears. A line
// written while an OpenTelemetry span is active carries its trace and span ids (trace_id, span_id,
// trace_flags), so the logs of a traced request can be found from its trace and back.
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * Field names whose values never reach a log line, at any depth, written as words. A key matches
 * when its normalised form (lower case, everything but letters and digits removed) equals one of
 * these with the spaces removed, so `pinKey`, `pin_key`, `pin-key`, `PIN_KEY` and `PinKey` all match.
 * Not secret, so not listed: claim-check handles (`handle`, `cardHandle`), BIN, last four, brand,
 * masked PANs, amounts and references.
 */
export const SECRET_FIELD_NAMES = [
  // Card data.
  'number',
  'card number',
  'card pan',
  'pan',
  'primary account number',
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'csc',
  'security code',
  'expiry',
  'expiry date',
  'expiry month',
  'expiry year',
  'exp month',
  'exp year',
  'card expiry',
  'card expiry month',
  'card expiry year',
  'track1',
  'track2',
  'track2 data',
  'track data',
  'chip data',
  'icc data',
  'emv data',
  // PINs and OTPs.
  'pin',
  'pin block',
  'pin block hex',
  'encrypted pin',
  'otp',
  'otp token',
  'otp code',
  // BVN.
  'bvn',
  // Terminal and payments keys, tokens, passwords, credentials.
  'pin key',
  'pin key hex',
  'working key',
  'master key',
  'session key',
  'secret key',
  'secret keys',
  'api key',
  'private key',
  'token',
  'session token',
  'access token',
  'refresh token',
  'auth token',
  'id token',
  'admin token',
  'codec token',
  'authorization',
  'proxy authorization',
  'cookie',
  'set cookie',
  'password',
  'passwd',
  'passphrase',
  'secret',
  'client secret',
  'x service encrypted body',
  'x service signature',
  'x squad encrypted body',
  'x squad signature',
  'encryption key',
  'encryption keys',
  'claim check keys',
  // TLS private key locations and URLs that carry database credentials.
  'key path',
  'tls key path',
  'database url',
  'connection string',
  // The configuration variables of the secrets above (an env dump is redacted too).
  'payments secret key',
  'codec server token',
  'payload encryption keys',
  'claim check database url',
  'sandbox admin token',
  'temporal api key',
  'temporal tls key path',
  'postgres password',
  'sandbox secret keys',
] as const;

/** Lower case, no `_`, `-`, spaces or other separators: the form secret names are matched in. */
export function normaliseFieldName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

const SECRET_FIELDS: ReadonlySet<string> = new Set(SECRET_FIELD_NAMES.map(normaliseFieldName));

/** True when a field of this name is redacted wherever it appears. */
export function isSecretFieldName(name: string): boolean {
  return SECRET_FIELDS.has(normaliseFieldName(name));
}

export const REDACTED = '[REDACTED]';

/** Patterns scrubbed from free text (messages, error strings). */
const SECRET_TEXT_PATTERNS: [RegExp, string | ((match: string) => string)][] = [
  [/Bearer\s+[A-Za-z0-9._~+/=-]+/gi, REDACTED], // Authorization header values
  [/\b(?:sandbox_)?sk_[A-Za-z0-9_]{4,}/g, REDACTED], // secret keys
  // Track 2 equivalent data: PAN, the 'D' (or '=') separator, expiry and service code, discretionary data.
  [/;?\b\d{12,19}[D=]\d{4}\d*(?:F|\?)?/gi, REDACTED],
  // Anything shaped like a PAN, also when letters touch it ('…D12', 'pan…abc'): digits bound it, not \b.
  [/(?<!\d)\d{13,19}(?!\d)/g, REDACTED],
  // A PAN written in groups: 13-19 digits separated by single spaces or dashes (4-4-4-4, 4-6-5, ...).
  [/\b\d{4}(?:[ -]\d{2,7}){2,4}\b/g, (m) => (/^\d{13,19}$/.test(m.replace(/[ -]/g, '')) ? REDACTED : m)],
  [/\b([a-z][a-z0-9+.-]*:\/\/[^:/?#\s@]+:)[^@/\s]+@/gi, `$1${REDACTED}@`], // user:password@ in URLs
];

export function scrubText(text: string): string {
  let out = text;
  for (const [re, replacement] of SECRET_TEXT_PATTERNS)
    out = typeof replacement === 'string' ? out.replace(re, replacement) : out.replace(re, replacement);
  return out;
}

/** Deep copy with secret-named keys replaced and secret-shaped text scrubbed. */
export function redactDeep(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 12) return '[Truncated]';
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (Buffer.isBuffer(value)) return `[Buffer ${value.length}]`;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1, seen));
  const out: Record<string, unknown> = {};
  if (value instanceof Error) {
    // Errors keep their name, message, stack and cause, and their own properties (a status, a
    // request) with the same redaction as any object.
    out.type = value.name;
    out.message = scrubText(value.message);
    if (value.stack) out.stack = scrubText(value.stack);
    if (value.cause !== undefined) out.cause = redactDeep(value.cause, depth + 1, seen);
  }
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretFieldName(k) ? REDACTED : redactDeep(v, depth + 1, seen);
  }
  return out;
}

/**
 * The active span's ids in the OpenTelemetry log field names, or nothing outside a span (and when
 * tracing is off: the API's no-op context has no span).
 */
export function activeTraceFields(): { trace_id?: string; span_id?: string; trace_flags?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const ctx = span.spanContext();
  if (!isSpanContextValid(ctx)) return {};
  return { trace_id: ctx.traceId, span_id: ctx.spanId, trace_flags: `0${ctx.traceFlags.toString(16)}`.slice(-2) };
}

export interface CreateLoggerOptions {
  level?: LoggerOptions['level'];
  name?: string;
  /** Destination stream (tests capture lines with it). */
  destination?: pino.DestinationStream;
}

export function createLogger(opts: CreateLoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? 'info',
      name: opts.name,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Fixed paths catch the common shapes fast; formatters.log catches everything else.
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'config.payments.secretKey', 'secretKey'],
        censor: REDACTED,
      },
      formatters: {
        level: (label) => ({ level: label }),
        // The ids go on after redaction, from the active span itself (not a pino mixin, whose fields
        // are redacted with the rest): a span id of 16 decimal digits is PAN-shaped to scrubText, and
        // a caller's own `trace_id` field cannot pose as the real one.
        log: (obj) => ({ ...(redactDeep(obj) as Record<string, unknown>), ...activeTraceFields() }),
      },
      hooks: {
        logMethod(args, method) {
          // Scrub the message string itself (pino's redaction only covers objects).
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubText(a) : a)) as typeof args;
          method.apply(this, scrubbed);
        },
      },
    },
    opts.destination,
  );
}
