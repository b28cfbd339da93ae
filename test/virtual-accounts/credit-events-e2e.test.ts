// Virtual-account credits through the one merchant-events pipeline (issue #39 §1; docs/events.md,
// docs/flows-virtual-accounts.md), end to end: the real dev server, the sandbox over HTTP, the real
// receiver and worker, merchant endpoints over real HTTP, and the CLI as an operator runs it (its
// environment names neither NOTIFY_URL nor NOTIFY_SECRET: it only lists and redelivers).
// - No VA setting: a credit's `virtual_account.credit.received` goes to the worker's NOTIFY_URL,
//   verified by `notify listen`'s listener; `notify list` shows it; `notify redeliver` sends the
//   same event under the same id.
// - VA_CREDIT_NOTIFY_URL (the alias): the credits go there, not to NOTIFY_URL; the delivery owns the
//   unhappy paths: a 503 retried under the same id, a 410 ends it gone, an endpoint down past the
//   window ends it delivery_failed (`notify list --failed`) until an operator redelivers it. The
//   credit itself stays credited: handed over once its event is in the pipeline.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../../src/config/config';
import type { RunningServices } from '../../src/stack/services';
import { newNotifySecret, verifyEvent, type MerchantEvent } from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import {
  creditAmountInLowestUnit,
  virtualAccountCreditWorkflowId,
  type VirtualAccountCreditOutcome,
} from '../../src/shared/virtual-account-credit';
import { listMerchantEvents } from '../../src/starters/merchant-event-delivery';
import { cliEnvironment, runCli } from '../support/cli';
import { vaCustomer } from '../support/flow-inputs';
import { useEventReceiver } from '../notify/receiver';
import { eventually } from '../support/polling';
import { startServices, testConfig } from '../support/stack';

const secret = newNotifySecret();
const receivedId = (ref: string) =>
  merchantEventId(virtualAccountCreditWorkflowId(ref), 'virtual_account.credit.received');

/** One stack (sandbox, receiver, worker) for `env`, and what a test does against it. */
function stackFor(env: () => Record<string, string>) {
  const s = {} as { services: RunningServices; config: AppConfig };
  beforeAll(async () => {
    s.config = testConfig(env());
    s.services = await startServices(s.config);
  }, 90_000);
  afterAll(() => s.services?.stop());

  /** A transfer into a fresh account; answers the reference its credit carries. */
  async function transfer(amount: string): Promise<string> {
    const { api } = s.services;
    const customer = vaCustomer(`CUST${randomUUID().replace(/-/g, '').slice(0, 12)}`);
    const account = (await api.virtualAccounts.createCustomer(customer)).data.virtual_account_number;
    await api.virtualAccounts.simulatePayment({ virtual_account_number: account, amount });
    const rows = (await api.virtualAccounts.merchantTransactionsFiltered({ virtualAccount: account, perPage: 5 })).data
      .rows;
    expect(rows).toHaveLength(1);
    return rows[0]!.transaction_reference;
  }

  /** The credit workflow's outcome (it may not have started yet when asked first). */
  const creditOf = (ref: string) =>
    eventually(
      () =>
        s.services.client.workflow
          .getHandle(virtualAccountCreditWorkflowId(ref))
          .result() as Promise<VirtualAccountCreditOutcome>,
      () => true,
      { attempts: 300, intervalMs: 100, ignoreErrors: true, description: `the credit ${ref}` },
    );

  /** The CLI in the environment of a process that only starts and lists flows: no NOTIFY_* at all. */
  const cli = (args: string[]) => {
    const env = cliEnvironment(s.config, s.services.sandboxUrl!);
    for (const name of ['NOTIFY_URL', 'NOTIFY_SECRET', 'VA_CREDIT_NOTIFY_URL']) delete env[name];
    return runCli(args, { env });
  };

  /** Waits in-process until the delivery of `ref` shows `status` (a CLI run per read costs a second of CPU). */
  const deliveryOf = (ref: string, status: string, timeoutMs = 60_000) =>
    eventually(
      async () => (await listMerchantEvents(s.services.starters, { reference: ref, limit: 10 }))[0]?.status,
      (st) => st === status,
      { timeoutMs, description: `the delivery of ${ref} ${status}` },
    );

  const listed = async (args: string[]) => {
    const r = await cli(['notify', 'list', ...args, '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(r.stdout) as { eventId: string; status?: string; reference?: string }[];
  };

  return { s, transfer, creditOf, cli, deliveryOf, listed };
}

describe("no VA setting: credits are events to the worker's NOTIFY_URL", () => {
  // `notify listen`'s listener: every event verified with NOTIFY_SECRET, a forged one refused.
  const listener = useEventReceiver(secret);
  const stack = stackFor(() => ({ NOTIFY_URL: listener.url, NOTIFY_SECRET: secret }));

  it('the credit is emitted once; the listener verifies virtual_account.credit.received; notify list shows it; notify redeliver sends the same event under the same id', async () => {
    const ref = await stack.transfer('1500.00');
    const id = receivedId(ref);
    const outcome = await stack.creditOf(ref);
    expect(outcome).toMatchObject({
      status: 'credited',
      handoff: { status: 'emitted', idempotencyKey: ref, eventId: id, attempts: 1 },
    });

    const [event] = await listener.delivered(ref);
    expect(event).toEqual({
      type: 'virtual_account.credit.received',
      id,
      created_at: outcome.credit.creditedAt,
      data: {
        version: 1,
        flow: 'virtual-account-credit',
        reference: ref,
        status: 'credited',
        amount: creditAmountInLowestUnit(outcome.credit.settledAmount),
        currency: 'NGN',
        sequence: 2,
        occurred_at: outcome.credit.creditedAt,
      },
    });
    // 1500.00 less the sandbox's 0.5 % fee: an integer in kobo, not a decimal string.
    expect(event!.data.amount).toBe(149_250);
    expect(JSON.stringify(event)).not.toContain(outcome.credit.virtualAccountNumber);

    await stack.deliveryOf(ref, 'delivered');
    expect(await stack.listed(['--reference', ref])).toEqual([
      expect.objectContaining({ eventId: id, status: 'delivered', reference: ref }),
    ]);
    const text = await stack.cli(['notify', 'list', '--reference', ref]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`  delivered  ${ref}  ${id.replace(/\./g, '\\.')}\\n`));

    const again = await stack.cli(['notify', 'redeliver', id]);
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain(`redelivering ${id} (was delivered)`);
    const both = await listener.delivered(ref, 2);
    expect(both).toHaveLength(2);
    expect(both[1]).toEqual(both[0]);
    expect(listener.refused).toEqual([]);
  }, 150_000);
});

describe('VA_CREDIT_NOTIFY_URL, the alias: credits go there; the delivery owns retries, gone and delivery_failed', () => {
  /** A merchant endpoint whose answer the test sets; `flaky`: 503 to an event's first request, 204 after. */
  function endpoint() {
    const got: { headers: IncomingMessage['headers']; body: string }[] = [];
    const seen = new Map<string, number>();
    const ep = { mode: 'ok' as 'ok' | 'flaky' | 'gone' | 'down', got, url: '', close: () => server.close() };
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        got.push({ headers: req.headers, body });
        const id = String(req.headers['webhook-id']);
        seen.set(id, (seen.get(id) ?? 0) + 1);
        const status =
          ep.mode === 'gone' ? 410 : ep.mode === 'down' ? 500 : ep.mode === 'flaky' && seen.get(id) === 1 ? 503 : 204;
        res.writeHead(status).end();
      });
    });
    const started = new Promise<void>((r) =>
      server.listen(0, '127.0.0.1', () => {
        ep.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
        r();
      }),
    );
    const events = (ref: string): MerchantEvent[] =>
      got
        .map((g) => verifyEvent(secret, g.body, g.headers as Record<string, string>))
        .filter((e) => e.data.reference === ref);
    return { ep, started, events };
  }
  const deployment = endpoint();
  const credits = endpoint();
  beforeAll(() => Promise.all([deployment.started, credits.started]));
  afterAll(() => {
    deployment.ep.close();
    credits.ep.close();
  });
  const stack = stackFor(() => ({
    NOTIFY_URL: deployment.ep.url,
    VA_CREDIT_NOTIFY_URL: credits.ep.url,
    NOTIFY_SECRET: secret,
    // The shortest window NOTIFY_RETRY_FOR takes: an endpoint down for a minute ends the delivery.
    NOTIFY_RETRY_FOR: '1m',
  }));

  it('a 503 is retried under the same id and body until the endpoint takes it; the credit was handed over at once', async () => {
    credits.ep.mode = 'flaky';
    const ref = await stack.transfer('700.00');
    const outcome = await stack.creditOf(ref);
    expect(outcome.handoff).toMatchObject({ status: 'emitted', eventId: receivedId(ref), attempts: 1 });
    await stack.deliveryOf(ref, 'delivered');
    const events = credits.events(ref);
    expect(events).toHaveLength(2);
    expect(events[1]).toEqual(events[0]);
    expect(events[0]!.id).toBe(receivedId(ref));
  }, 120_000);

  it('a 410 ends the delivery gone, at the first answer; the credit stays credited', async () => {
    credits.ep.mode = 'gone';
    const ref = await stack.transfer('800.00');
    expect((await stack.creditOf(ref)).status).toBe('credited');
    await stack.deliveryOf(ref, 'gone');
    expect(credits.events(ref)).toHaveLength(1);
    expect(await stack.listed(['--reference', ref])).toEqual([
      expect.objectContaining({ eventId: receivedId(ref), status: 'gone' }),
    ]);
  }, 120_000);

  it('an endpoint down past the window: delivery_failed, listed by notify list --failed; redelivered once it is back, the same id', async () => {
    credits.ep.mode = 'down';
    const ref = await stack.transfer('900.00');
    const id = receivedId(ref);
    expect((await stack.creditOf(ref)).handoff).toMatchObject({ status: 'emitted', eventId: id });
    await stack.deliveryOf(ref, 'delivery_failed', 150_000);
    const attempts = credits.events(ref);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(attempts.map((e) => e.id))).toEqual(new Set([id]));
    expect((await stack.listed(['--failed'])).map((r) => r.eventId)).toContain(id);

    credits.ep.mode = 'ok';
    const again = await stack.cli(['notify', 'redeliver', id]);
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain(`redelivering ${id} (was delivery_failed)`);
    await stack.deliveryOf(ref, 'delivered');
    expect(credits.events(ref).at(-1)).toEqual(attempts[0]);
  }, 240_000);

  it("none of these credits went to NOTIFY_URL: the alias is the credits' target", () => {
    expect(deployment.ep.got).toEqual([]);
  });
});
