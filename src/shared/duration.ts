// Durations as the flows' inputs accept them: '2s', '5 minutes', or milliseconds.
import type { z } from 'zod';
import { lazy, type Zod } from './lazy';

/**
 * A duration field: milliseconds (whole, not negative, unless `ms` says otherwise) or a string in
 * hours at most, or in days too when `days`; `examples` name the strings in its message.
 */
export const durationField = (
  z: Zod,
  days: boolean,
  examples: string,
  ms = z.number().int('must be whole milliseconds').nonnegative('must not be negative'),
) =>
  z.union([
    ms,
    z
      .string()
      .regex(
        new RegExp(`^\\d+(\\.\\d+)?\\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?${days ? '|d|days?' : ''})$`),
        `must be a duration such as ${examples}`,
      ),
  ]);

/** A Temporal duration as a string ('2s', '5 minutes') or milliseconds. */
export const duration = lazy('duration.duration', (z) => durationField(z, false, '"2s" or "5 minutes"'));
export type DurationInput = z.infer<typeof duration>;

/**
 * The options of a flow that parks an outcome it could not read (POS sale, remote request, vend) and
 * requeries it before it waits for resolveOutcome: for how long (default 24h), the first wait,
 * doubling (default 10s), and the longest (default 10 minutes), as src/workflows/steps/unknown-outcome.ts reads them.
 */
export const parkedRequeryOptions = () => ({
  unknownRequeryFor: duration.optional(),
  requeryBackoff: duration.optional(),
  requeryMaxBackoff: duration.optional(),
});

/** '2s', '500ms', '1 minute', '2 days' or milliseconds → milliseconds (the shapes the input schemas accept). */
export function durationMs(d: string | number): number {
  if (typeof d === 'number') return d;
  const m = /^(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?|d|days?)$/.exec(d.trim());
  if (!m) throw new TypeError(`not a duration: ${d}`);
  const n = Number(m[1]);
  const unit = m[2];
  if (unit === 'ms' || unit.startsWith('milli')) return n;
  if (unit.startsWith('s')) return n * 1000;
  if (unit.startsWith('m')) return n * 60_000;
  if (unit.startsWith('h')) return n * 3_600_000;
  return n * 86_400_000;
}
