// `cli notify` against the stack: `listen` (its own process) verifies and prints a card payment's
// event and refuses a forged one; `list` shows a delivery's status from its search attributes;
// `redeliver` and `replay` deliver an ended event again under the same id.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newNotifySecret, signEvent, verifyEvent, type MerchantEvent } from '../../src/notify';
import { startCardPayment } from '../../src/starters/card-payment';
import { listMerchantEvents } from '../../src/starters/merchant-event-delivery';
import { merchantEventId } from '../../src/shared/merchant-event';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { TEST_CARDS } from '../../src/sandbox';
import { cliAgainst, spawnCli } from '../support/cli';
import { cardPayment } from '../support/flow-inputs';
import { eventually } from '../support/polling';
import { testConfig, useServices } from '../support/stack';

const secret = newNotifySecret();
const config = testConfig({ NOTIFY_SECRET: secret });
const env = useServices(config);
const { cli, cliEnv } = cliAgainst(config, env);

/** A merchant endpoint answering the scripted statuses in turn (the last repeats). */
async function endpoint(statuses: number[]) {
  const got: { headers: IncomingMessage['headers']; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(statuses[Math.min(got.length - 1, statuses.length - 1)]).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  const events = (): MerchantEvent[] =>
    got.map((g) => verifyEvent(secret, g.body, g.headers as Record<string, string>));
  return { url, got, events, close: () => server.close() };
}

const declined = async (url: string) => {
  const ref = `cli-ev-${randomUUID()}`;
  const handle = await startCardPayment(env.services.starters, {
    ...cardPayment(ref, TEST_CARDS.declined, 120_000),
    notify: { url },
  });
  await handle.result();
  return { ref, id: merchantEventId(paymentWorkflowId(ref), 'payment.failed') };
};

/**
 * Waits (in-process: a CLI process per read would cost a second of CPU each) until the delivery of
 * `ref` shows `status`, then answers what `notify list` prints for it.
 */
const listedOnce = async (ref: string, status: string) => {
  await eventually(
    async () => (await listMerchantEvents(env.services.starters, { reference: ref, limit: 100 }))[0]?.status,
    (s) => s === status,
    { timeoutMs: 30_000, description: `the delivery of ${ref} ${status}` },
  );
  return listed(ref);
};

const listed = async (ref: string) => {
  const r = await cli(['notify', 'list', '--reference', ref, '--json']);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as { eventId: string; status?: string }[];
};

describe('notify listen', () => {
  it("prints a card payment's verified event and refuses a forged one", async () => {
    const listen = spawnCli(['notify', 'listen', '--port', '0', '--secret', secret], cliEnv());
    try {
      const out = await eventually(listen.output, (o) => /listening on (\S+)/.test(o), { timeoutMs: 30_000 });
      const url = /listening on (\S+):/.exec(out)![1];
      const ref = `cli-listen-${randomUUID()}`;
      const handle = await startCardPayment(env.services.starters, {
        ...cardPayment(ref, TEST_CARDS.declined, 90_000),
        notify: { url },
      });
      await handle.result();
      const printed = await eventually(listen.output, (o) => o.includes(ref), { timeoutMs: 30_000 });
      expect(printed).toMatch(
        new RegExp(`payment\\.failed  card ${ref}  failed 90000 NGN  seq 1  id evt_payment-${ref}_payment\\.failed`),
      );

      // Signed with another secret: refused (400), printed as refused, never as an event.
      const forged = signEvent(newNotifySecret(), {
        type: 'payment.succeeded',
        id: 'evt_forged',
        created_at: new Date().toISOString(),
        data: {
          version: 1,
          flow: 'card',
          reference: 'forged',
          status: 'success',
          sequence: 1,
          occurred_at: new Date().toISOString(),
        },
      });
      const res = await fetch(url, { method: 'POST', headers: forged.headers, body: forged.body });
      expect(res.status).toBe(400);
      const after = await eventually(listen.output, (o) => o.includes('refused:'), { timeoutMs: 10_000 });
      expect(after).not.toContain('forged');
    } finally {
      listen.child.kill('SIGINT');
      await listen.exited;
    }
  }, 90_000);
});

describe('notify list, redeliver and replay', () => {
  it('a delivery the endpoint answered 410 is listed gone; redeliver sends the same event under the same id; replay does again', async () => {
    const merchant = await endpoint([410, 204]);
    try {
      const { ref, id } = await declined(merchant.url);
      expect((await listedOnce(ref, 'gone'))[0]).toMatchObject({ eventId: id, status: 'gone' });

      const again = await cli(['notify', 'redeliver', id]);
      expect(again).toMatchObject({ code: 0 });
      expect(again.stdout).toContain(`redelivering ${id} (was gone)`);
      expect((await listedOnce(ref, 'delivered'))[0]).toMatchObject({ eventId: id, status: 'delivered' });
      const [first, second] = merchant.events();
      expect(second).toEqual(first);
      expect(second.id).toBe(id);

      const replay = await cli(['notify', 'replay', '--since', '10m']);
      expect(replay.code).toBe(0);
      expect(replay.stdout).toMatch(/\d+ event\(s\) redelivered/);
      await eventually(
        () => merchant.events(),
        (es) => es.length >= 3,
        { timeoutMs: 30_000 },
      );
      expect(merchant.events()[2]).toEqual(first);
    } finally {
      merchant.close();
    }
  }, 120_000);

  it('refuses an id that names no event, and a --since that is not a time', async () => {
    const [r, s] = await Promise.all([
      cli(['notify', 'redeliver', 'evt_nothing_here']),
      cli(['notify', 'list', '--since', 'yesterday-ish']),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('invalid merchant event input: id must name a merchant event');
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('since must be an ISO time or an age such as 2h or 1d');
  }, 60_000);
});
