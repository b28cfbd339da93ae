// A Temporal client wired with the project's encrypted data converter.
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
// eslint-disable-next-line no-restricted-imports -- the package root also loads its workflow entry, which patches the workflow runtime, into every client process
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import { activeTracing } from '../observability/trace-context';
import { createDataConverter, type EncryptionSettings } from '../codec/data-converter';
import { temporalConnectionOptions, type TemporalConnectionSettings } from './connection';
import { temporalClientInterceptors } from './closed-connection-guard';

/** `{ ...config.temporal, encryption: config.encryption }` carries address, TLS and API key. */
export interface TemporalClientOptions extends TemporalConnectionSettings {
  namespace: string;
  encryption: EncryptionSettings;
  connection?: Connection;
}

/**
 * A client Connection with the TLS and API key of `settings` (config.temporal), whose retried
 * calls fail cleanly when it is closed (./closed-connection-guard.ts).
 */
export function connectTemporalClient(settings: TemporalConnectionSettings): Promise<Connection> {
  return Connection.connect(temporalClientConnectionOptions(settings));
}

/** What connectTemporalClient connects with (also for Connection.lazy). */
export function temporalClientConnectionOptions(settings: TemporalConnectionSettings): ConnectionOptions {
  return { ...temporalConnectionOptions(settings), interceptors: temporalClientInterceptors() };
}

export async function createTemporalClient(opts: TemporalClientOptions): Promise<Client> {
  const connection = opts.connection ?? (await connectTemporalClient(opts));
  // With tracing installed, starting, signalling and updating a workflow opens a span whose context rides in its headers.
  const tracing = activeTracing();
  return new Client({
    connection,
    namespace: opts.namespace,
    dataConverter: createDataConverter(opts.encryption),
    ...(tracing
      ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] } }
      : {}),
  });
}
