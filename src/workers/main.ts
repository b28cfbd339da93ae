// The worker as its own process (docker-compose, or next to an external Temporal).
import { NativeConnection } from '@temporalio/worker';
import { bootstrap } from '../config/bootstrap';
import { installTemporalRuntime } from '../logging/temporal-logger';
import { PaymentsClient } from '../api';
import { createActivities } from '../activities';
import { createPaymentsWorker } from './worker';

async function main(): Promise<void> {
  const { config, logger } = bootstrap('worker');
  installTemporalRuntime(logger);
  const api = new PaymentsClient({ baseUrl: config.payments.baseUrl, secretKey: config.payments.secretKey, timeoutMs: config.payments.timeoutMs, paths: config.payments.paths });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const worker = await createPaymentsWorker({
    address: config.temporal.address,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    encryption: config.encryption,
    connection,
    activities: createActivities({ api, logger: logger.child({ component: 'activities' }), config }),
  });
  logger.info({ taskQueue: config.temporal.taskQueue, address: config.temporal.address }, 'worker started');
  // Worker.run() stops gracefully on SIGINT/SIGTERM by itself.
  await worker.run();
  await connection.close();
  await api.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
