// A local stand-in for the payments service (spec groups E, F, H and the admin API),
// in memory, starting in milliseconds; runs in-process for tests or as its own process.
import { createServer } from 'node:http';
import { adminHandler } from './admin';
import { DEFAULT_SANDBOX_KEY, SandboxCore, send, fail, type LedgerEntry, type SandboxClock } from './core';
import { registerPos } from './pos';
import { registerVending } from './vending';
import { registerMandates } from './mandates';

export { DEFAULT_SANDBOX_KEY, type LedgerEntry, type SandboxClock } from './core';
export { TEST_TERMINALS, TEST_PAN_OUTCOMES, POS_REMOTE_DECLINED_AMOUNT, POS_REMOTE_NEVER_COMPLETES_AMOUNT, POS_REMOTE_LIFETIME_MS } from './pos';
export { TEST_METERS, PROVIDERS } from './vending';
export { MANDATE_OTP, MANDATE_SESSION_MS, MANDATE_MIN_DEBIT } from './mandates';

export interface SandboxOptions {
  port?: number;
  host?: string;
  secretKeys?: string[];
  webhookUrl?: string;
  webhookVersion?: 1 | 2 | 3;
  webhookRetryScheduleMs?: number[];
  publicUrl?: string;
  posRemoteCompleteAfterMs?: number;
  posProcessorTimeoutMs?: number;
  logger?: { info(...a: unknown[]): void; warn(...a: unknown[]): void };
}

export interface Sandbox {
  url: string;
  port: number;
  clock: SandboxClock;
  ledger(): LedgerEntry[];
  reset(): void;
  close(): Promise<void>;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const build = () => {
    const core = new SandboxCore(opts.secretKeys ?? [DEFAULT_SANDBOX_KEY], opts.posProcessorTimeoutMs ?? 30_000);
    const pos = registerPos(core, { posRemoteCompleteAfterMs: opts.posRemoteCompleteAfterMs ?? 4_000 });
    registerVending(core);
    registerMandates(core);
    return { core, pos };
  };
  let state = build();
  const admin = () =>
    adminHandler(state.core, {
      settle: () => state.pos.settle(),
      reset: () => {
        const clock = state.core.clock;
        state = build();
        // Keep the clock: tests that advanced it expect time not to run backwards.
        Object.assign(state.core, { clock });
      },
    });

  const server = createServer((req, res) => {
    state.core.handle(req, res, admin()).catch((err: unknown) => {
      opts.logger?.warn({ err: (err as Error).message }, 'sandbox handler failed');
      send(res, fail(500, 'Internal sandbox error'));
    });
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const ticker = setInterval(() => state.pos.settle(), 250);
  ticker.unref();
  return {
    url: `http://${host}:${port}`,
    port,
    get clock() {
      return state.core.clock;
    },
    ledger: () => {
      state.pos.settle();
      return [...state.core.ledgerEntries];
    },
    reset: () => {
      state = build();
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(ticker);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
