// The one place that turns the Temporal connection settings of config (a TEMPORAL_CONFIG_FILE
// profile and the TEMPORAL_* variables, resolved by src/config/temporal-profile.ts through
// @temporalio/envconfig) into SDK connection options. The client's Connection
// (src/temporal/client.ts) and the worker's NativeConnection (src/workers/worker.ts) both use it.
// Only types are imported here, so backends that load the client never load the worker's native module.
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import type { TemporalConnectionSettings, TemporalTlsSettings } from '../config/temporal-profile';

// The settings are config's (it resolves them); named here too for those who connect.
export type { TemporalConnectionSettings, TemporalTlsSettings };

/** What both Connection.connect and NativeConnection.connect accept. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** Raised when a TLS file cannot be read; names the variable, never the path or its contents. */
export class TemporalTlsFileError extends Error {
  constructor(readonly variable: string) {
    super(`${variable}: the file cannot be read`);
    this.name = 'TemporalTlsFileError';
  }
}

function readPem(path: string, variable: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    throw new TemporalTlsFileError(variable);
  }
}

/** One PEM of the TLS settings: inline text wins over a file; neither given: undefined. */
function pem(data: string | undefined, path: string | undefined, variable: string): Buffer | undefined {
  if (data !== undefined) return Buffer.from(data);
  return path ? readPem(path, variable) : undefined;
}

/** Connection options for `settings`; reads the TLS files named there. */
export function temporalConnectionOptions(settings: TemporalConnectionSettings): TemporalConnectionOptions {
  const options: TemporalConnectionOptions = { address: settings.address };
  if (settings.tls) {
    const { caPath, certPath, keyPath, serverName, caData, certData, keyData, sources = {} } = settings.tls;
    const tls: TLSConfig = {};
    if (serverName) tls.serverNameOverride = serverName;
    const ca = pem(caData, caPath, sources.ca ?? 'TEMPORAL_TLS_CA_PATH');
    if (ca) tls.serverRootCACertificate = ca;
    const crt = pem(certData, certPath, sources.cert ?? 'TEMPORAL_TLS_CERT_PATH');
    const key = pem(keyData, keyPath, sources.key ?? 'TEMPORAL_TLS_KEY_PATH');
    if (crt && key) tls.clientCertPair = { crt, key };
    options.tls = tls;
  }
  if (settings.apiKey) options.apiKey = settings.apiKey;
  if (settings.grpcMeta && Object.keys(settings.grpcMeta).length > 0) options.metadata = { ...settings.grpcMeta };
  return options;
}

/** What may be logged about a connection: the address and which protections are on, no key, no path. */
export function describeTemporalConnection(settings: TemporalConnectionSettings): {
  address: string;
  tls: boolean;
  mtls: boolean;
  apiKey: boolean;
} {
  return {
    address: settings.address,
    tls: Boolean(settings.tls) || Boolean(settings.apiKey),
    mtls: Boolean(
      (settings.tls?.certPath || settings.tls?.certData) && (settings.tls?.keyPath || settings.tls?.keyData),
    ),
    apiKey: Boolean(settings.apiKey),
  };
}
