// The codec server as its own process (for the Web UI and `temporal --codec-endpoint`).
import { bootstrap, onShutdown } from '../config/bootstrap';
import { AesGcmPayloadCodec } from './aes-gcm-codec';
import { startCodecServer } from './codec-server';

async function main(): Promise<void> {
  const { config, logger } = bootstrap('codec-server');
  const server = await startCodecServer({
    codec: new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId),
    token: config.codec.token,
    corsOrigins: config.codec.corsOrigins,
    host: config.codec.host,
    port: config.codec.port,
    logger,
  });
  logger.info({ url: server.url }, 'codec server listening');
  onShutdown(logger, () => server.close());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
