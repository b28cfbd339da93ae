// pino JSON logging with redaction of every secret the flows handle, wherever it appears.
import pino, { type Logger, type LoggerOptions } from 'pino';

/**
 * Keys whose values never reach a log line, matched case-insensitively at any depth.
 * Card data (PAN, CVV, track2, chip data), PINs and PIN blocks, OTPs and bank tokens,
 * terminal keys, BVNs, the Authorization header and the secret key.
 */
const SECRET_KEY_NAMES = [
  'number', 'card_number', 'cardnumber', 'card_pan', 'pan', 'cvv', 'cvv2', 'expiry_month', 'expiry_year',
  'track2', 'chipdata', 'pin', 'pin_block', 'pinblock', 'otp', 'otp_token', 'token', 'session_token',
  'pin_key', 'working_key', 'master_key', 'session_key', 'bvn', 'authorization', 'secret_key', 'secretkey',
  'x-service-encrypted-body', 'x-service-signature', 'x-squad-encrypted-body', 'x-squad-signature',
  'password', 'codec_token', 'encryption_key', 'encryptionkeys',
];
const SECRET_KEYS = new Set(SECRET_KEY_NAMES.map((k) => k.toLowerCase()));

export const REDACTED = '[REDACTED]';

/** Patterns scrubbed from free text (messages, error strings). */
const SECRET_TEXT_PATTERNS: RegExp[] = [
  /Bearer\s+[A-Za-z0-9._~+/=-]+/gi, // Authorization header values
  /\b(?:sandbox_)?sk_[A-Za-z0-9_]{4,}/g, // secret keys
  /\b\d{13,19}\b/g, // anything shaped like a PAN
];

export function scrubText(text: string): string {
  let out = text;
  for (const re of SECRET_TEXT_PATTERNS) out = out.replace(re, REDACTED);
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
  if (value instanceof Error) {
    return { type: value.name, message: scrubText(value.message), stack: value.stack ? scrubText(value.stack) : undefined };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.has(k.toLowerCase()) ? REDACTED : redactDeep(v, depth + 1, seen);
  }
  return out;
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
        log: (obj) => redactDeep(obj) as Record<string, unknown>,
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
