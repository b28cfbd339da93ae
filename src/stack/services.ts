// Brings up the project's own services next to a Temporal server: sandbox, codec server,
// webhook receiver and (unless withoutWorker) a worker in this process. Used by `npm start` (which runs
// the worker as a process of its own, src/stack/start.ts) and by the end-to-end tests.
import type { CreditHandler } from '../virtual-accounts/credit-handler';
import { ensureErrorLogSweepSchedule } from '../workers/schedules';
import type { Logger } from 'pino';
import type { WorkerOptions } from '@temporalio/worker';
import type { AppConfig } from '../config/config';
import { AesGcmPayloadCodec } from '../codec/aes-gcm-codec';
import { startCodecServer } from '../codec/codec-server';
import { createWebhookReceiver, listen, closeServer } from '../webhooks/receiver';
import { connectTemporalClient, createTemporalClient } from '../temporal/client';
import { connectTemporalWorker, createPaymentsWorker } from '../workers/worker';
import { deploymentVersion, makeVersionCurrent } from '../workers/versioning';
import { activityQueueTuning, workerTuningOptions } from '../workers/tuning';
import { createActivities } from '../activities';
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
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) {
      await s().catch((err: unknown) => logger.warn({ err }, 'error while stopping a service'));
    }
  };

  try {
    const webhookServer = createWebhookReceiver({
      client: await (async () => {
        const connection = await connectTemporalClient(config.temporal);
        stops.push(() => connection.close());
        return createTemporalClient({ ...config.temporal, encryption: config.encryption, connection });
      })(),
      taskQueue: config.temporal.taskQueue,
      secretKey: config.payments.secretKey,
      returnLinks: config.returnLinks,
      logger: logger.child({ component: 'webhooks' }),
    });
    const webhookUrl = await listen(webhookServer, config.webhooks.port, config.webhooks.host);
    stops.push(() => closeServer(webhookServer));

    let sandbox: Sandbox | undefined;
    let baseUrl = config.payments.baseUrl;
    if (config.sandbox.enabled) {
      sandbox = await startSandbox({
        port: config.sandbox.port,
        secretKeys: [config.payments.secretKey],
        adminToken: config.sandbox.adminToken,
        webhookUrl: `${webhookUrl}/webhooks`,
        logger: logger.child({ component: 'sandbox' }),
        ...opts.sandbox,
      });
      stops.push(() => sandbox!.close());
      baseUrl = sandbox.url;
    }

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
    stops.push(() => codec.close());

    const api = openPaymentsClient(config, baseUrl);
    stops.push(() => api.close());

    const clientConnection = await connectTemporalClient(config.temporal);
    stops.push(() => clientConnection.close());
    const client = await createTemporalClient({
      ...config.temporal,
      encryption: config.encryption,
      connection: clientConnection,
    });

    const claimCheck = await openClaimCheck(config);
    claimCheck.startSweeper(60_000, (err) => logger.warn({ err }, 'claim-check sweep failed'));
    stops.push(() => claimCheck.close());

    if (!opts.withoutWorker) {
      const vaCredits = await openVirtualAccountCredits(config);
      stops.push(() => vaCredits.close());
      const workerConnection = await connectTemporalWorker(config.temporal);
      const version = deploymentVersion(config.deployment);
      const worker = await createPaymentsWorker({
        ...config.temporal,
        encryption: config.encryption,
        connection: workerConnection,
        activities: createActivities({
          api,
          logger: logger.child({ component: 'activities' }),
          config,
          claimCheck,
          vaCredits,
          temporal: client,
          ...(opts.creditHandler ? { creditHandler: opts.creditHandler } : {}),
        }),
        workflowBundle: opts.workflowBundle,
        layout: config.taskQueues.layout,
        deployment: version,
        tuning: workerTuningOptions(config.worker),
        queues: config.taskQueues.polled,
        activityQueues: activityQueueTuning(config.taskQueues),
        overrides: opts.workerOverrides,
        nexus: { returnLinks: config.returnLinks },
      });
      const running = worker.run();
      if (version && config.deployment.makeCurrent) await makeVersionCurrent(client, version);
      if (config.virtualAccounts.errorLogSweepEverySeconds > 0) {
        await ensureErrorLogSweepSchedule(client, {
          taskQueue: config.temporal.taskQueue,
          everySeconds: config.virtualAccounts.errorLogSweepEverySeconds,
        });
      }
      stops.push(async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        await workerConnection.close();
      });
    }

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
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
