// A Temporal client wired with the project's encrypted data converter.
import { Client, Connection } from '@temporalio/client';
import { createDataConverter, type EncryptionSettings } from '../codec/data-converter';
import { temporalConnectionOptions, type TemporalConnectionSettings } from './connection';

/** `{ ...config.temporal, encryption: config.encryption }` carries address, TLS and API key. */
export interface TemporalClientOptions extends TemporalConnectionSettings {
  namespace: string;
  encryption: EncryptionSettings;
  connection?: Connection;
}

/** A client Connection with the TLS and API key of `settings` (config.temporal). */
export function connectTemporalClient(settings: TemporalConnectionSettings): Promise<Connection> {
  return Connection.connect(temporalConnectionOptions(settings));
}

export async function createTemporalClient(opts: TemporalClientOptions): Promise<Client> {
  const connection = opts.connection ?? (await connectTemporalClient(opts));
  return new Client({ connection, namespace: opts.namespace, dataConverter: createDataConverter(opts.encryption) });
}
