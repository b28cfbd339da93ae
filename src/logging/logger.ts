// pino JSON logging with redaction of every secret the flows handle, wherever it appears. A line
// written while an OpenTelemetry span is active carries its trace and span ids (trace_id, span_id,
// trace_flags), so the logs of a traced request can be found from its trace and back. In development at
// a terminal (`npm start`, `npm run worker`) the same redacted lines are printed for a person instead
// (formatHumanLine); production, and any output that is not a terminal, stays JSON.
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { isSecretFieldName, REDACTED, scrubText } from './redaction';
import { productionModeOf } from '../shared/production-mode';

// What is secret has one home (src/logging/redaction.ts), shared with the API client's error bodies.
export {
  fieldNameWords,
  isSecretFieldName,
  normaliseFieldName,
  REDACTED,
  scrubText,
  SECRET_FIELD_NAMES,
  SECRET_WORDS,
} from './redaction';

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

/** json: one JSON object per line (production, log collectors); human: a line a person reads at a terminal. */
export type LogFormat = 'json' | 'human';

/** Human at a terminal outside production mode (docs/configuration.md); JSON otherwise. */
export function defaultLogFormat(
  env: NodeJS.ProcessEnv = process.env,
  stdout: { isTTY?: boolean } = process.stdout,
): LogFormat {
  return stdout.isTTY === true && !productionModeOf(env) ? 'human' : 'json';
}

/** Fields every line has, shown in the line's head (or not at all) rather than as key=value. */
const HEAD_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'name', 'component', 'msg', 'err']);

const fieldText = (value: unknown): string =>
  typeof value === 'string' ? (/[\s"=]/.test(value) ? JSON.stringify(value) : value) : JSON.stringify(value);

/** Indents the lines after the first (a multi-line message, a stack) under the line's head. */
const continued = (text: string): string => text.replace(/\n/g, '\n    ');

/**
 * One JSON log line (already redacted) as a person reads it:
 * `08:25:01.123 INFO  worker[activities] card charge sent  reference=ord-1 attempt=2`, an error's stack
 * on the lines below. A line that is not JSON is returned as it is.
 */
export function formatHumanLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const level = String(entry.level ?? '')
    .toUpperCase()
    .padEnd(5);
  const who = `${String(entry.name ?? '')}${entry.component ? `[${String(entry.component)}]` : ''}`;
  const fields = Object.entries(entry)
    .filter(([k, v]) => !HEAD_FIELDS.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${fieldText(v)}`);
  const err = entry.err as { type?: string; message?: string; stack?: string } | undefined;
  const errText = err ? `\n${err.stack ?? `${err.type ?? 'Error'}: ${err.message ?? ''}`}` : '';
  const head = [time, level, who, continued(String(entry.msg ?? ''))].filter(Boolean).join(' ');
  return `${head}${fields.length ? `  ${fields.join(' ')}` : ''}${continued(errText)}\n`;
}

/** A pino destination that prints each line through formatHumanLine to `out` (stdout by default). */
export function humanDestination(out: { write(text: string): unknown } = process.stdout): pino.DestinationStream {
  return { write: (line: string) => void out.write(formatHumanLine(line.trimEnd())) };
}

export interface CreateLoggerOptions {
  level?: LoggerOptions['level'];
  name?: string;
  /** Destination stream (tests capture lines with it); JSON unless `format` says otherwise. */
  destination?: pino.DestinationStream;
  /** Default: defaultLogFormat() (human at a terminal outside production), JSON with a `destination`. */
  format?: LogFormat;
}

export function createLogger(opts: CreateLoggerOptions = {}): Logger {
  const format = opts.format ?? (opts.destination ? 'json' : defaultLogFormat());
  const destination = format === 'human' ? humanDestination(opts.destination ?? process.stdout) : opts.destination;
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
    destination,
  );
}
