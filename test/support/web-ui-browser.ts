// The Web UI browser tests' stack: a dev server of the test's own whose bundled Web UI decodes
// through our codec server, the worker and starters wired to it, and a headless chromium (Debian's,
// driven by playwright-core). Also the card payment those tests open, started and waited to its PIN.
// With WEB_UI_TEMPORAL=cluster (`npm run test:cluster-ui`), the same tests run on the local
// multi-service cluster (docs/cluster.md) and its standalone UI server instead of the dev server.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { Logger } from 'pino';
import type { RunningServices } from '../../src/stack/services';
import { freePort } from '../../src/http/free-port';
import { startDevServer } from '../../src/stack/temporal-dev-server';
import { startTemporalCluster } from '../../src/stack/temporal-cluster';
import { startClusterUi } from '../../src/stack/cluster-ui';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { waitForState } from '../../src/starters/payment-common';
import { getCardPaymentState, startCardPayment } from '../../src/starters/card-payment';
import { startServices, testConfig, workflowBundle } from './stack';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** How long starting the stack may take: a cluster's first start sets up its schema and waits for its search attributes. */
export const WEB_UI_STACK_START_MS = process.env.WEB_UI_TEMPORAL === 'cluster' ? 300_000 : 90_000;

export interface WebUiStack {
  browser: Browser;
  services: RunningServices;
  /** The bundled Web UI's base URL. */
  uiUrl: string;
  /** Closes the browser and stops the services and the dev server. */
  stop(): Promise<void>;
}

/**
 * Starts the dev server (Web UI wired to the codec server), the services with `codecToken` as
 * CODEC_SERVER_TOKEN, and chromium (launch timeout `stepMs`). Fails with what to do when chromium is
 * missing. Whatever started is stopped again when something else did not.
 */
export async function startWebUiStack(opts: {
  logger: Logger;
  codecToken: string;
  stepMs: number;
}): Promise<WebUiStack> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing, so the Web UI browser test cannot run. Install it as root with \`bash scripts/install-chromium.sh\` ` +
        '(apt-get install chromium; `npm test` does this first), or set SKIP_BROWSER_TESTS=1 to skip this test on purpose (never in CI).',
    );
  }
  const codecPort = await freePort();
  // The bundled UI cannot send an Authorization header: a capability of this run (never the
  // codec token) leads the path, as `npm start` does.
  const pathToken = randomUUID().replace(/-/g, '');
  const codecEndpoint = `http://127.0.0.1:${codecPort}/t/${pathToken}`;
  const [temporal, bundle, launched] = await Promise.allSettled([
    process.env.WEB_UI_TEMPORAL === 'cluster' ? clusterWithUi(codecEndpoint) : devServerWithUi(codecEndpoint),
    workflowBundle(),
    chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: opts.stepMs }),
  ]);
  const server: TemporalWithUi | undefined = temporal.status === 'fulfilled' ? temporal.value : undefined;
  const browser: Browser | undefined = launched.status === 'fulfilled' ? launched.value : undefined;
  let services: RunningServices | undefined;
  const stop = async () => {
    await browser?.close().catch(() => undefined);
    await services?.stop();
    await server?.stop();
  };
  try {
    for (const r of [temporal, bundle, launched]) if (r.status === 'rejected') throw r.reason;
    if (!server || !browser || bundle.status !== 'fulfilled') throw new Error('unreachable');
    const { uiUrl } = server;
    const config = testConfig({
      ...server.env,
      CODEC_PORT: String(codecPort),
      CODEC_SERVER_TOKEN: opts.codecToken,
      CODEC_CORS_ORIGINS: uiUrl,
    });
    services = await startServices(config, {
      logger: opts.logger,
      workflowBundle: bundle.value,
      codecPathToken: pathToken,
    });
    return { browser, services, uiUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A Temporal server with a Web UI that decodes through `codecEndpoint`, and the environment that reaches it. */
interface TemporalWithUi {
  uiUrl: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

async function devServerWithUi(codecEndpoint: string): Promise<TemporalWithUi> {
  const dev = await startDevServer({ uiPort: 0, codecEndpoint });
  return { uiUrl: dev.uiUrl!, env: { TEMPORAL_ADDRESS: dev.address }, stop: () => dev.stop() };
}

/** The local cluster (kept in .data/cluster-web-ui between runs: its schema is set up once) and its UI server. */
async function clusterWithUi(codecEndpoint: string): Promise<TemporalWithUi> {
  const cluster = await startTemporalCluster({ dir: join(PROJECT_ROOT, '.data', 'cluster-web-ui'), frontendPort: 0 });
  try {
    const ui = await startClusterUi(cluster, { port: await freePort(), codecEndpoint });
    return {
      uiUrl: ui.url,
      env: { ...cluster.env, TEMPORAL_ADDRESS: cluster.address },
      stop: async () => {
        await ui.stop();
        await cluster.stop();
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** Starts a 9,000.00 NGN card payment `ref` with `card` (a PIN card) and waits until it asks for the PIN. */
export async function startCardPaymentAwaitingPin(
  services: RunningServices,
  ref: string,
  card: { number: string; cvv: string; expiryMonth: string; expiryYear: string },
  timeoutMs: number,
) {
  const handle = await startCardPayment(services.starters, {
    transactionRef: ref,
    amount: 900_000,
    currency: 'NGN',
    card,
    customer: { name: 'Ada Obi', email: 'ada@example.com' },
  });
  await waitForState(
    () => getCardPaymentState(services.starters, ref),
    (s) => s.status === 'awaiting_pin',
    { timeoutMs },
  );
  return handle;
}
