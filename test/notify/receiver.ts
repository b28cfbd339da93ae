// A merchant endpoint for the emission tests (suite-specific): `notify listen`'s listener on a free
// port, verifying every event's Standard Webhooks signature with the worker's NOTIFY_SECRET, and
// what arrived, by reference. An event that fails verification lands in `refused`, never in `received`.
import type { AppConfig } from '../../src/config/config';
import type { MerchantEvent } from '../../src/notify';
import { startListener, type Listener } from '../../src/starters/commands/merchant-event-delivery';
import { eventually } from '../support/polling';

export interface EventReceiver {
  readonly url: string;
  readonly received: MerchantEvent[];
  readonly refused: string[];
  eventsOf(reference: string): MerchantEvent[];
  /** Waits until `count` events of `reference` arrived (verified); answers them in arrival order. */
  delivered(reference: string, count?: number): Promise<MerchantEvent[]>;
}

/** Starts the receiver before the file's tests and closes it after them. */
export function useEventReceiver(secret: string): EventReceiver {
  let listener: Listener | undefined;
  const received: MerchantEvent[] = [];
  const refused: string[] = [];
  beforeAll(async () => {
    listener = await startListener({ port: 0, host: '127.0.0.1', secret }, (line, event) =>
      event ? received.push(event) : refused.push(line),
    );
  });
  afterAll(() => listener?.server.close());
  const eventsOf = (reference: string) => received.filter((e) => e.data.reference === reference);
  return {
    get url() {
      if (!listener) throw new Error('the receiver is not listening yet (use it inside a test)');
      return listener.url;
    },
    received,
    refused,
    eventsOf,
    delivered: (reference, count = 1) =>
      eventually(
        () => eventsOf(reference),
        (es) => es.length >= count,
        { timeoutMs: 60_000, description: `${count} event(s) for ${reference}` },
      ),
  };
}

/**
 * A receiver that is also the deployment's endpoint: `config`'s NOTIFY_URL (the worker's) is set to
 * it before the services start. Call it before useServices(config).
 */
export function useDeploymentEventReceiver(secret: string, config: AppConfig): EventReceiver {
  const receiver = useEventReceiver(secret);
  beforeAll(() => {
    (config.notify as { url?: string }).url = receiver.url;
  });
  return receiver;
}
