// The merchant's endpoint under chaos (docs/events.md, docs/chaos.md): every event the flows emit
// arrives here, and while the chaos runs the endpoint misbehaves on purpose. Each request, after
// its signature is verified, meets one of:
//   drop    — the connection is cut before anything is read as handled (nothing recorded);
//   503     — answered 503 (nothing recorded);
//   timeout — held past the delivery's 10 s, then cut (nothing recorded);
//   twice   — recorded as handled, then cut without an answer: the delivery retries, so the
//             endpoint receives the same event again (a duplicate the merchant must ignore);
//   ok      — recorded, 204.
// Once the chaos stops (`calm()`), every request is `ok`. The tally then checks that every flow's
// final outcome arrived at least once, that every delivery of an id carried the same event, and
// that no event was lost.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyEvent, type MerchantEvent } from '../src/notify';
import type { Rng } from './util';

type Behaviour = 'drop' | '503' | 'timeout' | 'twice' | 'ok';

export interface EventTally {
  /** Events received and verified, by id. */
  events: number;
  /** Deliveries in all (a duplicate counts again). */
  deliveries: number;
  /** Ids that arrived more than once (after a cut answer, or a retry that crossed an answer). */
  redelivered: number;
  /** Ids whose deliveries differed (must be 0: the same id always carries the same event). */
  idMismatches: number;
  /** Requests whose signature did not verify (must be 0). */
  refused: number;
  /** What the endpoint did to requests while the chaos ran. */
  faults: Record<Exclude<Behaviour, 'ok'>, number>;
}

export class ChaosMerchantEndpoint {
  private server?: Server;
  private chaos = true;
  private readonly seen = new Map<string, { body: string; count: number; event: MerchantEvent }>();
  private readonly faults: EventTally['faults'] = { drop: 0, '503': 0, timeout: 0, twice: 0 };
  private refused = 0;
  private deliveries = 0;
  url = '';

  constructor(
    private readonly secret: string,
    private readonly rng: Rng,
  ) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        let event: MerchantEvent;
        try {
          event = verifyEvent(this.secret, raw, req.headers as Record<string, string>);
        } catch {
          this.refused++;
          res.writeHead(400).end();
          return;
        }
        const behaviour = this.behaviour();
        if (behaviour !== 'ok') this.faults[behaviour]++;
        if (behaviour === 'drop') return void req.socket.destroy();
        if (behaviour === '503') return void res.writeHead(503).end();
        if (behaviour === 'timeout') return void setTimeout(() => req.socket.destroy(), 11_000);
        this.record(event, raw.toString('utf8'));
        if (behaviour === 'twice') return void req.socket.destroy();
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/events`;
    return this.url;
  }

  /** From now on every request is answered 204. */
  calm(): void {
    this.chaos = false;
  }

  /** The events received for references matching `ref`. */
  /** Events under a reference, or under a sub-reference (`part`: a mandate debit). */
  eventsFor(match: (reference: string) => boolean): MerchantEvent[] {
    return [...this.seen.values()]
      .filter((s) => match(s.event.data.reference) || (s.event.data.part !== undefined && match(s.event.data.part)))
      .map((s) => s.event);
  }

  tally(): EventTally {
    let idMismatches = 0;
    for (const s of this.seen.values()) if (s.body === 'MISMATCH') idMismatches++;
    return {
      events: this.seen.size,
      deliveries: this.deliveries,
      redelivered: [...this.seen.values()].filter((s) => s.count > 1).length,
      idMismatches,
      refused: this.refused,
      faults: { ...this.faults },
    };
  }

  close(): void {
    this.server?.closeAllConnections();
    this.server?.close();
  }

  private behaviour(): Behaviour {
    if (!this.chaos) return 'ok';
    const r = this.rng.int(0, 99);
    if (r < 10) return 'drop';
    if (r < 20) return '503';
    if (r < 25) return 'timeout';
    if (r < 35) return 'twice';
    return 'ok';
  }

  private record(event: MerchantEvent, body: string): void {
    this.deliveries++;
    const known = this.seen.get(event.id);
    if (!known) {
      this.seen.set(event.id, { body, count: 1, event });
      return;
    }
    known.count++;
    // The same id must carry the same event (the timestamp header differs; the body may not).
    if (known.body !== body) known.body = 'MISMATCH';
  }
}
