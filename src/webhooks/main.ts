// The webhook receiver as its own process.
import { bootstrap, onShutdown } from '../config/bootstrap';
import { loadReceiverConfig } from '../config/processes';
import { createTemporalClient } from '../temporal/client';
import { closeServer, createWebhookReceiver, listen } from './receiver';
import { startProcessObservability } from '../observability/process';

async function main(): Promise<void> {
  const { config, logger } = bootstrap('webhooks', () => loadReceiverConfig());
  // Metrics (METRICS_PORT) and tracing (OTEL_*) before the client is made.
  const observability = await startProcessObservability(config, logger, { serviceName: 'payflow-webhooks' });
  const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  const server = createWebhookReceiver({
    client,
    taskQueue: config.temporal.taskQueue,
    secretKey: config.payments.secretKey,
    returnLinks: config.returnLinks,
    logger,
  });
  const url = await listen(server, config.webhooks.port, config.webhooks.host);
  logger.info(
    { url: `${url}/webhooks`, healthz: `${url}/healthz`, readyz: `${url}/readyz` },
    'webhook receiver listening',
  );
  onShutdown(logger, async () => {
    await closeServer(server);
    await client.connection.close();
    await observability.stop();
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
