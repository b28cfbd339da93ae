// Brings up the project's own services next to a Temporal server: sandbox, codec server,
// webhook receiver and (unless withoutWorker) a worker in this process. Used by `npm start` (which runs
// the worker as a process of its own, src/stack/start.ts) and by the end-to-end tests.
import type { CreditHandler } from '../virtual-accounts/credit-handler';
import { ensureErrorLogSweepSchedule } from '../workers/schedules';
import type { Logger } from 'pino';
import type { Client } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import type { AppConfig } from '../config/config';
import { AesGcmPayloadCodec } from '../codec/aes-gcm-codec';
import { startCodecServer } from '../codec/codec-server';
import { createWebhookReceiver, listen, closeServer } from '../webhooks/receiver';
import { connectTemporalClient, createTemporalClient } from '../temporal/client';
import { connectTemporalWorker } from '../workers/worker';
import { createConfiguredWorker } from '../workers/configured-worker';
import { deploymentVersion, makeVersionCurrent } from '../workers/versioning';
import { workerTuningOptions } from '../workers/tuning';
import { installTemporalRuntime } from '../logging/temporal-logger';
import type { PaymentsClient } from '../api';
import { startSandbox, type Sandbox, type SandboxOptions } from '../sandbox';
import type { ClaimCheckStore } from '../claim-check/store';
import {
  openClaimCheck,
  openPaymentsClient,
  openVirtualAccountCredits,
  type StarterContext,
} from '../starters/connect';

export interface RunServicesOptions {
  config: AppConfig;
  logger: Logger;
  /** Sandbox settings beyond config (tests: free port, clock, webhook version). */
  sandbox?: SandboxOptions;
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Win over config.worker's tuning (src/workers/tuning.ts). */
  workerOverrides?: Partial<WorkerOptions>;
  /** Skip the worker (`npm start`, which runs it as a process of its own, and tests that run their own). */
  withoutWorker?: boolean;
  /** The merchant's credit handler as a function (otherwise config's VA_CREDIT_CALLBACK_URL, if set). */
  creditHandler?: CreditHandler;
  /**
   * The codec server's path capability for a bundled dev UI that cannot send a header (`npm start`
   * makes a random one per run; never CODEC_SERVER_TOKEN). Unset: header authentication only.
   */
  codecPathToken?: string;
}

export interface RunningServices {
  sandbox?: Sandbox;
  sandboxUrl?: string;
  webhookUrl: string;
  codecUrl: string;
  api: PaymentsClient;
  client: Awaited<ReturnType<typeof createTemporalClient>>;
  /** The claim-check store (the worker's activities redeem from it; starters seal into it). */
  claimCheck: ClaimCheckStore;
  /** What the typed starters take: client, task queue and claim-check store. */
  starters: StarterContext;
  stop(): Promise<void>;
}

export async function runServices(opts: RunServicesOptions): Promise<RunningServices> {
  const { config, logger } = opts;
  installTemporalRuntime(logger);
  const stops = new Stops(logger);
  try {
    const webhookServer = createWebhookReceiver({
      client: await temporalClient(config, stops),
      taskQueue: config.temporal.taskQueue,
      secretKey: config.payments.secretKey,
      returnLinks: config.returnLinks,
      logger: logger.child({ component: 'webhooks' }),
    });
    const webhookUrl = await listen(webhookServer, config.webhooks.port, config.webhooks.host);
    stops.add(() => closeServer(webhookServer));
    const sandbox = config.sandbox.enabled ? await startLocalSandbox(opts, webhookUrl, stops) : undefined;
    const codec = await startCodec(opts, stops);
    const api = openPaymentsClient(config, sandbox?.url ?? config.payments.baseUrl);
    stops.add(() => api.close());
    const client = await temporalClient(config, stops);
    const claimCheck = await openClaimCheck(config);
    claimCheck.startSweeper(60_000, (err) => logger.warn({ err }, 'claim-check sweep failed'));
    stops.add(() => claimCheck.close());
    if (!opts.withoutWorker) await startWorker(opts, { api, client, claimCheck }, stops);
    return {
      sandbox,
      sandboxUrl: sandbox?.url,
      webhookUrl,
      codecUrl: codec.url,
      api,
      client,
      claimCheck,
      starters: {
        client,
        taskQueue: config.temporal.taskQueue,
        claimCheck,
        api,
        returnLinks: config.returnLinks,
        listsPosRemoteRequests: config.payments.listsPosRemoteRequests,
      },
      stop: () => stops.stopAll(),
    };
  } catch (err) {
    await stops.stopAll();
    throw err;
  }
}

/** What was started, stopped in the reverse order; a stop that fails is logged and the rest go on. */
class Stops {
  private readonly stops: (() => Promise<void>)[] = [];

  constructor(private readonly logger: Logger) {}

  add(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }

  async stopAll(): Promise<void> {
    for (const s of this.stops.reverse()) {
      await s().catch((err: unknown) => this.logger.warn({ err }, 'error while stopping a service'));
    }
  }
}

/** A Temporal client on a connection of its own (closed with the services). */
async function temporalClient(config: RunServicesOptions['config'], stops: Stops): Promise<Client> {
  const connection = await connectTemporalClient(config.temporal);
  stops.add(() => connection.close());
  return createTemporalClient({ ...config.temporal, encryption: config.encryption, connection });
}

async function startLocalSandbox(opts: RunServicesOptions, webhookUrl: string, stops: Stops): Promise<Sandbox> {
  const { config, logger } = opts;
  const sandbox = await startSandbox({
    port: config.sandbox.port,
    secretKeys: [config.payments.secretKey],
    adminToken: config.sandbox.adminToken,
    webhookUrl: `${webhookUrl}/webhooks`,
    logger: logger.child({ component: 'sandbox' }),
    ...opts.sandbox,
  });
  stops.add(() => sandbox.close());
  return sandbox;
}

async function startCodec(opts: RunServicesOptions, stops: Stops): Promise<{ url: string }> {
  const { config, logger } = opts;
  const codec = await startCodecServer({
    codec: new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId),
    token: config.codec.token,
    ...(opts.codecPathToken !== undefined ? { pathToken: opts.codecPathToken } : {}),
    production: config.production,
    corsOrigins: config.codec.corsOrigins,
    host: config.codec.host,
    port: config.codec.port,
    logger: logger.child({ component: 'codec-server' }),
  });
  stops.add(() => codec.close());
  return codec;
}

/** The worker, polling as its deployment version, with the Schedules it keeps. */
async function startWorker(
  opts: RunServicesOptions,
  { api, client, claimCheck }: Pick<RunningServices, 'api' | 'client' | 'claimCheck'>,
  stops: Stops,
): Promise<void> {
  const { config, logger } = opts;
  const vaCredits = await openVirtualAccountCredits(config);
  stops.add(() => vaCredits.close());
  const workerConnection = await connectTemporalWorker(config.temporal);
  const version = deploymentVersion(config.deployment);
  const worker = await createConfiguredWorker(
    config,
    {
      connection: workerConnection,
      client,
      api,
      logger,
      claimCheck,
      vaCredits,
      ...(opts.creditHandler ? { creditHandler: opts.creditHandler } : {}),
    },
    {
      workflowBundle: opts.workflowBundle,
      deployment: version,
      tuning: workerTuningOptions(config.worker),
      overrides: opts.workerOverrides,
      nexus: { returnLinks: config.returnLinks },
    },
  );
  const running = worker.run();
  if (version && config.deployment.makeCurrent) await makeVersionCurrent(client, version);
  if (config.virtualAccounts.errorLogSweepEverySeconds > 0) {
    await ensureErrorLogSweepSchedule(client, {
      taskQueue: config.temporal.taskQueue,
      everySeconds: config.virtualAccounts.errorLogSweepEverySeconds,
    });
  }
  stops.add(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await workerConnection.close();
  });
}
