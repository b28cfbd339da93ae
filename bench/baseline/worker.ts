// The baseline worker process: default data converter (no codec), no interceptors, no logging
// beyond the SDK's, bundling its two workflows at start like ours does under tsx.
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { createBaselineActivities } from './activities';

async function main(): Promise<void> {
  Runtime.install({
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never,
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  const worker = await Worker.create({
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: process.env.TEMPORAL_TASK_QUEUE!,
    workflowsPath: require.resolve('./workflows'),
    activities: createBaselineActivities({
      baseUrl: process.env.PAYMENTS_BASE_URL!,
      secretKey: process.env.PAYMENTS_SECRET_KEY!,
    }),
    shutdownGraceTime: '2s',
  });
  console.log('baseline worker started');
  await worker.run();
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
