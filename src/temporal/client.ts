// A Temporal client wired with the project's encrypted data converter.
import { Client, Connection } from '@temporalio/client';
import { createDataConverter, type EncryptionSettings } from '../codec/data-converter';

export interface TemporalClientOptions {
  address: string;
  namespace: string;
  encryption: EncryptionSettings;
  connection?: Connection;
}

export async function createTemporalClient(opts: TemporalClientOptions): Promise<Client> {
  const connection = opts.connection ?? (await Connection.connect({ address: opts.address }));
  return new Client({ connection, namespace: opts.namespace, dataConverter: createDataConverter(opts.encryption) });
}
