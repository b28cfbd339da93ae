// The chaos itself: sandbox faults through the admin API, SIGKILLs of the worker, and one
// restart of the Temporal dev server on the same SQLite file.
import type { FaultRule } from '../src/sandbox';
import type { SandboxAdmin } from './admin';
import type { ChaosStack, ServiceProcess } from './stack';
import { sleep, type Rng } from './util';

type RequestKind = FaultRule['kind'];
const ALL: RequestKind[] = ['latency', 'error5xx', 'reset', 'drop-before-processing', 'drop-after-processing'];

/** The service paths the worker calls (never the harness's own calls: C1, C3, C9, F1/F2, the checkout page). */
const TARGETS: { path: string; method?: string; kinds: RequestKind[] }[] = [
  { path: '/transaction/initiate/process-payment', method: 'POST', kinds: ALL }, // B1, B3
  { path: '/transaction/payment/authorize', method: 'POST', kinds: ALL }, // B2
  { path: '/transaction/validate-payment', method: 'POST', kinds: ALL }, // B4
  { path: '^/transaction/initiate$', method: 'POST', kinds: ALL }, // A1
  { path: '/transaction/charge_card', method: 'POST', kinds: ALL }, // A4
  { path: '/transaction/verify/', method: 'GET', kinds: ALL }, // verify
  { path: '^/transaction$', method: 'POST', kinds: ALL }, // F3
  { path: '/transaction/by-ref/', method: 'GET', kinds: ALL }, // F4
  { path: '^/transaction$', method: 'GET', kinds: ALL }, // A6 (POS remote search)
  { path: '/transaction/mandate/create', method: 'POST', kinds: ALL }, // D1
  { path: '/transaction/mandate/validate-otp', method: 'POST', kinds: ALL }, // D2
  { path: '/transaction/mandate/debit', method: 'POST', kinds: ALL }, // D3
  { path: '/transaction/mandate/get-mandates', method: 'GET', kinds: ALL }, // D5
  { path: '/transaction/mandate/cancel', method: 'POST', kinds: ALL }, // D4
  { path: '^/softpos/pos/remote-request$', method: 'POST', kinds: ALL }, // E1
  { path: '/softpos/pos/remote-request/', method: 'GET', kinds: ALL }, // E2
  { path: '/vending/utilities/electricity/lookup', method: 'POST', kinds: ALL }, // H2
  { path: '^/vending/utilities/electricity$', method: 'POST', kinds: ALL }, // H3
  { path: '/vending/transactions', method: 'GET', kinds: ALL }, // H4
  { path: '/virtual-account/merchant/transactions/all', method: 'GET', kinds: ALL }, // C5 (credit flow)
];

export interface FaultCounts {
  request: Record<string, number>;
  webhook: Record<string, number>;
  released: number;
}

export class FaultInjector {
  readonly counts: FaultCounts = { request: {}, webhook: {}, released: 0 };
  private stopped = false;
  private loop?: Promise<void>;
  constructor(
    private readonly admin: SandboxAdmin,
    private readonly rng: Rng,
    private readonly opts: {
      intervalMs: number;
      excludeKinds?: (path: string) => RequestKind[];
      active?: () => boolean;
      maxArmed?: number;
    },
  ) {}

  start(): void {
    this.loop = (async () => {
      let tick = 0;
      while (!this.stopped) {
        tick++;
        try {
          if (this.opts.active && !this.opts.active()) {
            // The tail: no new faults, but what is held goes out (out of order) as before.
            this.counts.released += (await this.admin.releaseHeld()).released;
            await sleep(this.opts.intervalMs * 2);
            continue;
          }
          await this.injectOne();
          if (tick % 4 === 0) await this.injectWebhook();
          if (tick % 9 === 0) this.counts.released += (await this.admin.releaseHeld()).released;
        } catch {
          // the sandbox is busy; the next tick tries again
        }
        await sleep(this.opts.intervalMs * (0.5 + this.rng.next()));
      }
    })();
  }

  private async injectOne(): Promise<void> {
    const target = this.rng.pick(TARGETS);
    // One armed fault per path, a few in all: faults on a quiet path must not pile up and starve
    // the one flow that retries there (every retry would meet the next fault).
    const armed = await this.admin.call<FaultRule[]>('GET', '/faults');
    if (
      armed.length >= (this.opts.maxArmed ?? 8) ||
      armed.some((r) => r.path === target.path && r.method === target.method)
    )
      return;
    const excluded = this.opts.excludeKinds?.(target.path) ?? [];
    const kinds = target.kinds.filter((k) => !excluded.includes(k));
    if (kinds.length === 0) return;
    const kind = this.rng.pick(kinds);
    await this.admin.addFault({
      path: target.path,
      kind,
      count: 1,
      ...(target.method ? { method: target.method } : {}),
      ...(kind === 'latency' ? { latencyMs: this.rng.pick([1_500, 4_000, 10_000]) } : {}),
      ...(kind === 'error5xx' ? { status: this.rng.pick([500, 502, 503, 504]) } : {}),
    });
    this.counts.request[kind] = (this.counts.request[kind] ?? 0) + 1;
  }

  private async injectWebhook(): Promise<void> {
    const kind = this.rng.pick(['duplicate', 'fail', 'hold'] as const);
    const target = this.rng.pick(['payment', 'virtual-account'] as const);
    await this.admin.addWebhookFault({ kind, target, count: this.rng.int(1, 3) });
    const key = `${kind}:${target}`;
    this.counts.webhook[key] = (this.counts.webhook[key] ?? 0) + 1;
  }

  /** Stops injecting, clears what is armed and releases held webhooks. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await this.admin.clearFaults().catch(() => undefined);
    await this.admin.clearWebhookFaults().catch(() => undefined);
    this.counts.released += (await this.admin.releaseHeld().catch(() => ({ released: 0 }))).released;
  }

  /** Faults still armed (never hit) at the moment of asking. */
  async armed(): Promise<number> {
    return (await this.admin.call<unknown[]>('GET', '/faults').catch(() => [])).length;
  }
}

/**
 * Kills the worker with SIGKILL when the finished flows cross each of `kills` evenly spaced
 * thresholds (with random jitter, so the moment inside a flow is random), restarts it at once,
 * and restarts the Temporal server once when half the flows have finished.
 */
export class Killer {
  kills = 0;
  serverRestarts = 0;
  readonly events: { at: string; what: string; ms: number }[] = [];
  private stopped = false;
  private loop?: Promise<void>;
  constructor(
    private readonly stack: ChaosStack,
    private readonly rng: Rng,
    private readonly opts: {
      totalFlows: number;
      kills: number;
      serverRestart: boolean;
      finished: () => number;
      log: (l: string) => void;
    },
  ) {}

  start(): void {
    const { totalFlows, kills } = this.opts;
    const killAt = Array.from({ length: kills }, (_, i) => Math.floor(((i + 1) * totalFlows) / (kills + 1)));
    const restartAt = Math.floor(totalFlows / 2);
    this.loop = (async () => {
      while (!this.stopped && (this.kills < kills || (this.opts.serverRestart && this.serverRestarts === 0))) {
        const done = this.opts.finished();
        if (this.opts.serverRestart && this.serverRestarts === 0 && done >= restartAt) {
          await sleep(this.rng.int(0, 2_000));
          const t = Date.now();
          this.opts.log(`restarting the Temporal dev server (flows finished: ${done})`);
          await this.stack.restartTemporal();
          this.serverRestarts++;
          this.events.push({ at: new Date().toISOString(), what: 'server-restart', ms: Date.now() - t });
        } else if (this.kills < kills && done >= killAt[this.kills]) {
          await sleep(this.rng.int(0, 3_000));
          const t = Date.now();
          // One worker process of several (the cluster run has 3): the others keep polling.
          const victim = this.stack.workers.length > 1 ? this.rng.pick(this.stack.workers) : this.stack.worker;
          await victim.kill('SIGKILL');
          this.kills++;
          this.opts.log(`SIGKILL ${victim.name} #${this.kills} (flows finished: ${this.opts.finished()})`);
          await sleep(this.rng.int(200, 1_500));
          await this.restartWorker(victim);
          this.events.push({ at: new Date().toISOString(), what: 'worker-kill', ms: Date.now() - t });
          await sleep(this.rng.int(1_000, 4_000)); // let it work a little before the next kill
        }
        await sleep(250);
      }
    })();
  }

  private async restartWorker(worker: ServiceProcess): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        await worker.start();
        return;
      } catch (err) {
        this.opts.log(`worker restart failed (${(err as Error).message}); again`);
        if (i > 5) throw err;
        await sleep(2_000);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    for (const w of this.stack.workers) if (!w.running) await this.restartWorker(w);
  }
}
