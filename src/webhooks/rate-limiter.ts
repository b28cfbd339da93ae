// The per-address budget of GET /payments/return (the payer's browser lands there; a guessed link is
// answered 429 past the budget, src/config/return-links.ts has the signing rule).
/**
 * A fixed-window limit per client address: at most `limit` requests per `windowMs`. Bounded: at
 * most `maxClients` addresses are remembered (the oldest window is dropped first).
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit = 30,
    private readonly windowMs = 60_000,
    private readonly maxClients = 10_000,
  ) {}

  /** True when this request may go on; false: answer 429. */
  allow(client: string, nowMs: number = Date.now()): boolean {
    const w = this.windows.get(client);
    if (!w || nowMs - w.start >= this.windowMs) {
      this.windows.delete(client);
      this.windows.set(client, { start: nowMs, count: 1 });
      if (this.windows.size > this.maxClients) this.windows.delete(this.windows.keys().next().value as string);
      return true;
    }
    w.count += 1;
    return w.count <= this.limit;
  }

  /** Seconds until `client` may try again. */
  retryAfterSeconds(client: string, nowMs: number = Date.now()): number {
    const w = this.windows.get(client);
    return w ? Math.max(1, Math.ceil((w.start + this.windowMs - nowMs) / 1000)) : 1;
  }
}
