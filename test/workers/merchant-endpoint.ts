// The merchant's events endpoint in the rollout rehearsal (test/workers/rollout-rehearsal.test.ts):
// every request is verified with the deployment's NOTIFY_SECRET and kept with the answer it got, so
// the test reads what a merchant saw: which events, under which ids, accepted how many times. It
// can be down for some event types (503) while the test wants a delivery in flight.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newNotifySecret, verifyEvent } from '../../src/notify/signing';
import type { MerchantEvent } from '../../src/shared/merchant-event';

export interface EndpointRequest {
  /** undefined: the request did not verify (refused with 400). */
  event?: MerchantEvent;
  status: number;
  at: number;
}

export class MerchantEndpoint {
  readonly secret = newNotifySecret();
  readonly requests: EndpointRequest[] = [];
  /** Event types answered 503 while listed. */
  readonly downFor = new Set<string>();
  private server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let event: MerchantEvent | undefined;
      try {
        event = verifyEvent(this.secret, Buffer.concat(chunks), req.headers);
      } catch {
        event = undefined;
      }
      const status = !event ? 400 : this.downFor.has(event.type) ? 503 : 204;
      this.requests.push({ ...(event ? { event } : {}), status, at: Date.now() });
      res.writeHead(status).end();
    });
  });
  url = '';

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/events`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The requests carrying events of `reference` (and `type`), in arrival order. */
  attempts(reference: string, type?: string): EndpointRequest[] {
    return this.requests.filter((r) => r.event?.data.reference === reference && (!type || r.event.type === type));
  }

  /** The requests that did not verify. */
  unverified(): EndpointRequest[] {
    return this.requests.filter((r) => !r.event);
  }
}
