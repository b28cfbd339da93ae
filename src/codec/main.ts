// The codec server as its own process (for the Web UI and `temporal --codec-endpoint`).
import { bootstrap, onShutdown } from '../config/bootstrap';
import { loadCodecConfig } from '../config/processes';
import { AesGcmPayloadCodec } from './aes-gcm-codec';
import { startCodecServer } from './codec-server';
import { OidcVerifier } from './oidc';
import { startProcessObservability } from '../observability/process';

async function main(): Promise<void> {
  const { config, logger } = bootstrap('codec-server', () => loadCodecConfig());
  const observability = await startProcessObservability(config, logger, { serviceName: 'payflow-codec-server' });
  const server = await startCodecServer({
    codec: new AesGcmPayloadCodec(config.encryption.keys, config.encryption.activeKeyId),
    // CODEC_AUTH_MODE: the static token, or the user's OIDC token per namespace (src/config/codec-auth.ts).
    ...(config.codec.auth.oidc ? { oidc: new OidcVerifier(config.codec.auth.oidc) } : { token: config.codec.token }),
    encode: config.codec.auth.encodeEnabled,
    rateLimitPerMinute: config.codec.auth.rateLimitPerMinute,
    // CODEC_PATH_TOKEN: the path capability of a Web UI with no login (docker-compose), as `npm start`
    // gives its UI one; unset, header authentication only. Refused in production in any case.
    ...(config.codec.pathToken !== undefined ? { pathToken: config.codec.pathToken } : {}),
    production: config.production,
    corsOrigins: config.codec.corsOrigins,
    host: config.codec.host,
    port: config.codec.port,
    logger,
  });
  logger.info(
    {
      url: server.url,
      healthz: `${server.url}/healthz`,
      readyz: `${server.url}/readyz`,
      auth: config.codec.auth.mode,
      encode: config.codec.auth.encodeEnabled,
    },
    'codec server listening',
  );
  onShutdown(logger, async () => {
    await server.close();
    await observability.stop();
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
