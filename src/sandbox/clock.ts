// The sandbox clock: real time plus an offset that tests move forward with
// `POST /__admin/clock/advance`. Everything time-based in the sandbox reads it: OTP, session,
// USSD and checkout expiry, the POS remote request's completion and 5-minute lifetime, the
// webhook retry schedule, and the dates on which FIXED mandates are debited (fixed-debits.ts). Timers fire when the clock reaches them, either as real time passes
// (a ticker checks every TICK_MS) or at once when the clock is advanced past them.

const TICK_MS = 50;

interface Timer {
  id: number;
  at: number;
  fn: () => void | Promise<unknown>;
}

export class SandboxClock {
  private offsetMs = 0;
  private timers: Timer[] = [];
  private seq = 0;
  private ticker: NodeJS.Timeout | undefined;
  /** Work started by fired timers that has not finished yet (webhook deliveries). */
  private inFlight = new Set<Promise<unknown>>();

  /** Milliseconds since the epoch, on the sandbox clock. */
  now(): number {
    return Date.now() + this.offsetMs;
  }

  iso(at = this.now()): string {
    return new Date(at).toISOString();
  }

  /** How far the sandbox clock runs ahead of real time. */
  get offset(): number {
    return this.offsetMs;
  }

  /**
   * Moves the clock forward and fires every timer that is now due, in time order. Resolves when
   * the work those timers started (e.g. webhook retries) has settled, so a test can look at the
   * result right after.
   */
  async advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the sandbox clock only moves forward');
    this.offsetMs += ms;
    await this.runDue();
  }

  /** Runs `fn` once when the clock reaches `at` (sandbox milliseconds). Returns a cancel function. */
  at(at: number, fn: () => void | Promise<unknown>): () => void {
    const timer: Timer = { id: ++this.seq, at, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Runs `fn` once after `ms` on the sandbox clock. */
  after(ms: number, fn: () => void | Promise<unknown>): () => void {
    return this.at(this.now() + ms, fn);
  }

  /** Timers not yet fired, soonest first (for the admin API). */
  pending(): { at: string }[] {
    return [...this.timers].sort((a, b) => a.at - b.at || a.id - b.id).map((t) => ({ at: this.iso(t.at) }));
  }

  /** Fires every due timer; resolves when the work they started has settled. */
  async runDue(): Promise<void> {
    const started: Promise<unknown>[] = [];
    for (;;) {
      const now = this.now();
      const due = this.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      try {
        const result = due.fn();
        if (result instanceof Promise) started.push(this.track(result));
      } catch {
        // A timer's failure must not stop the others; the owner records its own errors.
      }
    }
    await Promise.allSettled(started);
  }

  /** Resolves when all work started by timers so far has settled. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Registers work that should be awaited by `advance`/`settled` (e.g. a first webhook delivery). */
  track<T>(p: Promise<T>): Promise<T> {
    const tracked = p.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    return tracked;
  }

  start(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => void this.runDue(), TICK_MS);
    this.ticker.unref();
  }

  stop(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
  }

  /** Forgets every timer (reset): the clock's position is kept so time never runs backwards. */
  clearTimers(): void {
    this.timers = [];
  }
}
