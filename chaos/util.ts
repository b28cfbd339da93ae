// Small helpers of the chaos harness: a seeded random source, sleeping, and retrying a call
// through worker kills and server restarts.

/** mulberry32: a tiny seeded generator, so a run can be repeated with --seed. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i++) out += this.int(0, 255).toString(16).padStart(2, '0');
    return out.toUpperCase();
  }
  digits(n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += String(this.int(0, 9));
    return out;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class DeadlineError extends Error {
  constructor(
    what: string,
    readonly last?: unknown,
  ) {
    super(`${what}: deadline passed${last instanceof Error ? ` (last error: ${last.message})` : ''}`);
    this.name = 'DeadlineError';
  }
}

/**
 * Calls `fn` until it answers, sleeping between tries, until `deadline` (epoch ms). `fatal`
 * decides which errors end the retrying at once (rethrown).
 */
export async function retry<T>(
  what: string,
  deadline: number,
  fn: () => Promise<T>,
  opts: { intervalMs?: number; fatal?: (err: unknown) => boolean } = {},
): Promise<T> {
  let last: unknown;
  for (;;) {
    try {
      return await beforeDeadline(what, deadline, fn());
    } catch (err) {
      if (err instanceof DeadlineError && last === undefined) throw err;
      if (err instanceof DeadlineError) throw new DeadlineError(what, last);
      if (opts.fatal?.(err)) throw err;
      last = err;
    }
    if (Date.now() > deadline) throw new DeadlineError(what, last);
    await sleep(opts.intervalMs ?? 500);
  }
}

/** `p`, or a DeadlineError when `deadline` (epoch ms) comes first (p keeps running, its outcome ignored). */
export function beforeDeadline<T>(what: string, deadline: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(what)), Math.max(0, deadline - Date.now()));
  });
  p.catch(() => undefined);
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Runs `fn` with at most `limit` calls in flight. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(lanes);
  return out;
}

/** Today + days as YYYY-MM-DD (UTC). */
export function isoDate(daysFromNow = 0): string {
  return new Date(Date.now() + daysFromNow * 86_400_000).toISOString().slice(0, 10);
}
