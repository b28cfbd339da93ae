// Waiting in tests: one poll loop for everything that becomes true "eventually" (a workflow's
// query, the visibility store, the sandbox's request log, a child process's output), so a suite
// states what it waits for and how long, not how to loop.

export interface PollOptions {
  /** Give up after this long. Default 10 s (unless `attempts` is given). */
  timeoutMs?: number;
  /**
   * Give up after this many reads, however long they take (a loop of N reads, as many suites wrote
   * them: their deadline grows with a slow read). With `timeoutMs` too, whichever comes first.
   */
  attempts?: number;
  /** The pause between two reads. Default 100 ms. */
  intervalMs?: number;
  /**
   * What the pause between two reads is, instead of `intervalMs` of real time: e.g. a time-skipping
   * test's `() => env.sleep(1_000)`, which moves the server's clock on (timers fire, nothing waits
   * in real time) while nothing awaits a result.
   */
  pause?: () => Promise<void>;
  /** What is awaited, for the error at the deadline. */
  description?: string;
  /** A read that throws counts as "not yet" (e.g. a workflow not started yet); by default it fails at once. */
  ignoreErrors?: boolean;
  /**
   * At the deadline, return the last value read instead of throwing, so that the test's own
   * assertions on it say what is wrong. With `ignoreErrors`, a read that still throws then throws.
   */
  returnLastOnTimeout?: boolean;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Truthy<T> = Exclude<T, undefined | null | false | 0 | ''>;

/** Calls `read` until it returns a truthy value, and returns that value. */
export function eventually<T>(read: () => T | Promise<T>, options?: PollOptions): Promise<Truthy<T>>;
/** Calls `read` until `ok(value)` holds, and returns that value. */
export function eventually<T>(read: () => T | Promise<T>, ok: (value: T) => boolean, options?: PollOptions): Promise<T>;
export async function eventually<T>(
  read: () => T | Promise<T>,
  okOrOptions?: ((value: T) => boolean) | PollOptions,
  maybeOptions: PollOptions = {},
): Promise<T> {
  const ok = typeof okOrOptions === 'function' ? okOrOptions : (v: T) => Boolean(v);
  const options = (typeof okOrOptions === 'function' ? maybeOptions : okOrOptions) ?? {};
  const { intervalMs = 100, description = 'the condition', ignoreErrors = false, attempts } = options;
  const timeoutMs = options.timeoutMs ?? (attempts === undefined ? 10_000 : Infinity);
  const deadline = Date.now() + timeoutMs;
  let last: { value: T } | { error: unknown } | undefined;
  for (let reads = 1; ; reads++) {
    try {
      const value = await read();
      last = { value };
      if (ok(value)) return value;
    } catch (error) {
      if (!ignoreErrors) throw error;
      last = { error };
    }
    if (Date.now() >= deadline || (attempts !== undefined && reads >= attempts)) break;
    await (options.pause ? options.pause() : sleep(intervalMs));
  }
  if (options.returnLastOnTimeout) {
    if (last && 'value' in last) return last.value;
    return read();
  }
  const seen =
    last === undefined
      ? ''
      : 'value' in last
        ? `; last read: ${describe(last.value)}`
        : `; last error: ${String((last.error as Error)?.message ?? last.error)}`;
  const limit = Number.isFinite(timeoutMs) ? `${timeoutMs} ms` : `${attempts} reads`;
  throw new Error(`timed out after ${limit} waiting for ${description}${seen}`);
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
  } catch {
    return String(value);
  }
}
