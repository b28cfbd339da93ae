// A per-client request budget for the codec server: a fixed one-minute window per key (an OIDC
// token's subject, or the client's address). In memory, per process: enough to
// stop one user or script from decoding a namespace's history wholesale, or guessing tokens fast.
const WINDOW_MS = 60_000;
/** Past this many tracked clients, windows that ended are dropped (memory stays bounded). */
const PRUNE_AT = 10_000;

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request of `client`; answers the seconds to wait when its budget is spent, else 0. */
  take(client: string): number {
    const now = this.now();
    let window = this.windows.get(client);
    if (!window || now - window.start >= WINDOW_MS) {
      if (this.windows.size >= PRUNE_AT) this.prune(now);
      window = { start: now, count: 0 };
      this.windows.set(client, window);
    }
    window.count += 1;
    return window.count > this.perMinute ? Math.ceil((window.start + WINDOW_MS - now) / 1000) : 0;
  }

  private prune(now: number): void {
    for (const [client, w] of this.windows) if (now - w.start >= WINDOW_MS) this.windows.delete(client);
  }
}
