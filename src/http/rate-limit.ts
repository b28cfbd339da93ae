// A request budget per client, the one home of the rule for every server that limits callers (the
// codec server per token subject or address, GET /payments/return per address): a fixed window per
// key, in memory, per process. A refused request is counted too, so hammering does not end sooner.

export interface RateLimitOptions {
  /** Requests per client and window; the next one is refused. */
  limit: number;
  /** Default one minute. */
  windowMs?: number;
  /** At most this many clients are remembered; past it the oldest window is dropped (default 10,000). */
  maxClients?: number;
  /** The clock (tests inject one). */
  now?: () => number;
}

export class RateLimiter {
  /** In order of window start: a window that starts again is moved to the end, so the first is the oldest. */
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxClients: number;
  private readonly now: () => number;

  constructor(opts: RateLimitOptions) {
    this.limit = opts.limit;
    this.windowMs = opts.windowMs ?? 60_000;
    this.maxClients = opts.maxClients ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** Counts one request of `client`: 0 when it may go on, else the seconds to wait (Retry-After, at least 1). */
  take(client: string): number {
    const now = this.now();
    let window = this.windows.get(client);
    if (!window || now - window.start >= this.windowMs) {
      window = { start: now, count: 0 };
      this.windows.delete(client);
      this.windows.set(client, window);
      // A hard bound, even when every remembered window is still running (many addresses at once).
      if (this.windows.size > this.maxClients) this.windows.delete(this.windows.keys().next().value as string);
    }
    window.count += 1;
    if (window.count <= this.limit) return 0;
    return Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000));
  }

  /** How many clients are remembered (the memory bound, for tests). */
  get clients(): number {
    return this.windows.size;
  }
}
