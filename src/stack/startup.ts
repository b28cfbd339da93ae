// `npm start`'s start-up as steps a signal can cut short (src/stack/start.ts). What each step started
// registers its stop at once; Ctrl-C during any step skips the steps left and stops what started,
// newest first, the same way as a Ctrl-C after the banner. A step still under way when the signal
// came is not waited for past LATE_STEP_WAIT_MS: what it started later is stopped as soon as it is up,
// and a child it left behind stops by itself when this process ends (scripts/supervise.mjs, the
// worker's IPC channel, the embedded PostgreSQL's stdin).

/** How long a Ctrl-C waits for the step under way to finish (and be stopped) before it stops the rest. */
export const LATE_STEP_WAIT_MS = 5_000;

/** Thrown by a step when a signal came before it finished: the start-up stops there. */
export class StartupAborted extends Error {
  constructor(readonly signal: string) {
    super(`${signal} during start-up`);
    this.name = 'StartupAborted';
  }
}

export class Startup {
  private readonly stops: (() => Promise<void>)[] = [];
  private readonly late: Promise<unknown>[] = [];
  private readonly controller = new AbortController();
  private abortedBy: string | undefined;
  private readonly aborted: Promise<never>;
  private rejectAborted: (err: StartupAborted) => void = () => undefined;

  constructor() {
    this.aborted = new Promise<never>((_, reject) => (this.rejectAborted = reject));
    this.aborted.catch(() => undefined); // read only by the steps' races
  }

  /** Aborted at the signal: for steps that can end their own wait (the dev server's readiness poll). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The signal that aborted the start-up, if one did. */
  get abortReason(): string | undefined {
    return this.abortedBy;
  }

  /** A signal came: the step under way and every later one throw StartupAborted. */
  abort(signal: string): void {
    if (this.abortedBy) return;
    this.abortedBy = signal;
    this.controller.abort();
    this.rejectAborted(new StartupAborted(signal));
  }

  /** Registers what stops a thing that started (stopAll runs them newest first). */
  onStop(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }

  /**
   * Waits for `pending` (a step's start) unless a signal comes first; registers `stop` for what it
   * started. After a signal it throws StartupAborted, and what `pending` starts later is stopped.
   */
  async step<T>(pending: Promise<T>, stop?: (started: T) => Promise<void>): Promise<T> {
    if (this.abortedBy) throw new StartupAborted(this.abortedBy);
    try {
      const started = await Promise.race([pending, this.aborted]);
      if (stop) this.onStop(() => stop(started));
      return started;
    } catch (err) {
      if (err instanceof StartupAborted && stop) this.late.push(pending.then(stop, () => undefined));
      throw err;
    }
  }

  /** Stops everything that started, newest first: a step still under way first, for up to LATE_STEP_WAIT_MS. */
  async stopAll(onError: (err: unknown) => void): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.late),
      new Promise((resolve) => (timer = setTimeout(resolve, LATE_STEP_WAIT_MS))),
    ]);
    clearTimeout(timer);
    for (const stop of this.stops.splice(0).reverse()) await stop().catch(onError);
  }
}
