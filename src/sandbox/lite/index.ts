// A local stand-in for the payments service (spec groups E, F, H and the admin API),
// in memory, starting in milliseconds; runs in-process for tests or as its own process.
import { createServer } from 'node:http';
import { adminHandler } from './admin';
import { DEFAULT_SANDBOX_KEY, SandboxCore, send, fail, type LedgerEntry, type SandboxClock } from './core';
import { registerPos } from './pos';
import { registerVending } from './vending';
import { registerMandates } from './mandates';
import { registerDirect } from './direct';
import { registerVirtualAccounts } from './virtual-accounts';
import { registerSms } from './sms';
import { ok } from './core';

export { DEFAULT_SANDBOX_KEY, type LedgerEntry, type SandboxClock } from './core';
export { TEST_TERMINALS, TEST_PAN_OUTCOMES, POS_REMOTE_DECLINED_AMOUNT, POS_REMOTE_NEVER_COMPLETES_AMOUNT, POS_REMOTE_LIFETIME_MS } from './pos';
export { TEST_METERS, PROVIDERS } from './vending';
export { MANDATE_OTP, MANDATE_SESSION_MS, MANDATE_MIN_DEBIT } from './mandates';
export { PARTNER_BANK_ACCOUNTS } from './virtual-accounts';
export { SANDBOX_PIN, SANDBOX_OTP, TEST_CARDS, STEP_LIFETIME_MS } from './direct';

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
  const host = opts.host ?? '127.0.0.1';
  let publicUrl = opts.publicUrl ?? '';
  const build = () => {
    const core = new SandboxCore(opts.secretKeys ?? [DEFAULT_SANDBOX_KEY], opts.posProcessorTimeoutMs ?? 30_000);
    const pos = registerPos(core, { posRemoteCompleteAfterMs: opts.posRemoteCompleteAfterMs ?? 4_000 });
    registerVending(core);
    registerMandates(core);
    registerSms(core);
    const direct = registerDirect(core, () => publicUrl, {
      url: opts.webhookUrl,
      retryScheduleMs: opts.webhookRetryScheduleMs ?? [5_000, 30_000, 120_000, 600_000, 3_600_000],
      logger: opts.logger,
    });
    const va = registerVirtualAccounts(core, { url: opts.webhookUrl, version: opts.webhookVersion ?? 2, retryScheduleMs: opts.webhookRetryScheduleMs ?? [5_000, 30_000, 120_000, 600_000, 3_600_000] });
    direct.setVirtualAccountSimulator((body, key) => va.simulate(body, key));
    return { core, pos, direct, va };
  };
  let state = build();
  const admin = () =>
    adminHandler(state.core, {
      settle: () => state.pos.settle(),
      extra: ({ method, path, body }) => {
        const ussd = /^\/__admin\/ussd\/([^/]+)\/pay$/.exec(path);
        if (method === 'POST' && ussd) return state.direct.payUssd(decodeURIComponent(ussd[1])) ? ok({ paid: true }) : fail(400, 'No USSD payment pending for that reference');
        if (method === 'POST' && path === '/__admin/webhook-faults/release') return ok({ released: state.direct.releaseHeld() });
        if (method === 'GET' && path === '/__admin/webhooks') return ok({ payments: state.direct.deliveries(), virtualAccounts: state.va.deliveries() });
        if (method === 'POST' && path === '/__admin/webhook-faults') {
          if (!['duplicate', 'fail', 'hold'].includes(String(body.kind)) || typeof body.count !== 'number') return fail(400, 'kind must be duplicate, fail or hold, count a number');
          state.direct.addWebhookFault(body.kind as 'duplicate' | 'fail' | 'hold', body.count);
          return ok({});
        }
        return fail(404, 'Unknown admin endpoint');
      },
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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  if (!opts.publicUrl) publicUrl = `http://${host}:${port}`;
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
      // Same as POST /__admin/reset: forget state, keep the (possibly advanced) clock.
      const clock = state.core.clock;
      state = build();
      Object.assign(state.core, { clock });
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(ticker);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
