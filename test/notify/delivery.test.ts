// The delivery workflow against a real HTTP endpoint, on the time-skipping server: every attempt
// is the same signed event under the same id; a non-2xx, a timeout or a refused connection is
// retried on a growing, jittered backoff; 410 stops; after the window (3 days) the delivery is
// delivery_failed, findable by PaymentStatus. Emitting the same event twice starts one delivery.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createMerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import type { ActivityDeps } from '../../src/activities/deps';
import { newNotifySecret, verifyEvent, type MerchantEvent } from '../../src/notify';
import {
  MERCHANT_EVENT_FLOW,
  merchantEventId,
  type MerchantEventDeliveryInput,
  type MerchantEventDeliveryState,
} from '../../src/shared/merchant-event';
import { PaymentFlow, PaymentReference, PaymentStatus } from '../../src/shared/search-attributes';
import { quietLogger } from '../support/stack';
import { runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';

const DELIVERY_WORKFLOWS = require.resolve('../../src/workflows/merchant-event-delivery');
const DAY = 86_400_000;
const secret = newNotifySecret();

/** A merchant endpoint that answers each request with the next scripted answer (the last repeats). */
interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}
type Answer = number | 'hang';
async function merchantEndpoint(answers: Answer[]): Promise<{ url: string; received: Received[]; close(): void }> {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers[Math.min(received.length - 1, answers.length - 1)];
      if (answer === 'hang') held.push(res);
      else res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    received,
    close: () => {
      for (const r of held) r.destroy();
      server.close();
    },
  };
}

/** A URL nothing listens on: the connection is refused. */
async function refusedUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return `http://127.0.0.1:${port}/events`;
}

let n = 0;
function cardEvent(): MerchantEvent {
  n += 1;
  const reference = `ord-${Date.now()}-${n}`;
  const at = new Date().toISOString();
  return {
    type: 'payment.succeeded',
    id: merchantEventId(`payment-${reference}`, 'payment.succeeded'),
    created_at: at,
    data: {
      version: 1,
      flow: 'card',
      reference,
      status: 'success',
      amount: 250_000,
      currency: 'NGN',
      sequence: 1,
      occurred_at: at,
    },
  };
}

const env = useTimeSkippingEnv({ quietRuntime: true });

/** The delivery activities of a worker with (or without) NOTIFY_SECRET, and NOTIFY_URL when `notifyUrl`. */
function activities(withSecret = true, notifyUrl?: string) {
  const notify = { retryForMs: 3 * DAY, ...(withSecret ? { secret } : {}), ...(notifyUrl ? { url: notifyUrl } : {}) };
  const deps = {
    logger: quietLogger(),
    config: { notify, temporal: { taskQueue: 'unused' } },
    temporal: env.client,
  } as unknown as ActivityDeps;
  return createMerchantEventDeliveryActivities(deps);
}

/** `url` undefined: the event names none (the deployment's, `opts.notifyUrl` as the worker's NOTIFY_URL). */
async function deliver(
  event: MerchantEvent,
  url: string | undefined,
  opts: { retryForMs?: number; withSecret?: boolean; notifyUrl?: string } = {},
): Promise<{ state: MerchantEventDeliveryState; timers: number[]; elapsedMs: number; status: unknown }> {
  return runWithWorker(
    env,
    activities(opts.withSecret ?? true, opts.notifyUrl),
    'notify',
    async (taskQueue) => {
      const input: MerchantEventDeliveryInput = {
        event,
        ...(url !== undefined ? { url } : {}),
        retryForMs: opts.retryForMs ?? 3 * DAY,
      };
      const handle = await env.client.workflow.start('merchantEventDeliveryWorkflow', {
        workflowId: event.id,
        taskQueue,
        args: [input],
        typedSearchAttributes: [
          { key: PaymentFlow, value: MERCHANT_EVENT_FLOW },
          { key: PaymentReference, value: event.data.reference },
          { key: PaymentStatus, value: 'delivering' },
        ],
      });
      const state = (await handle.result()) as MerchantEventDeliveryState;
      const history = await handle.fetchHistory();
      const timers = (history.events ?? [])
        .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED)
        .map((e) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0) * 1000);
      // The workflow clock from start to close: the window is kept there, attempts included.
      const events = history.events ?? [];
      const at = (e: (typeof events)[number]) =>
        Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      const elapsedMs = at(events[events.length - 1]) - at(events[0]);
      const described = await handle.describe();
      return { state, timers, elapsedMs, status: described.typedSearchAttributes.get(PaymentStatus) };
    },
    DELIVERY_WORKFLOWS,
  );
}

/** Every request verified under the secret: the events they carried. */
const verified = (received: Received[]): MerchantEvent[] =>
  received.map((r) => verifyEvent(secret, r.body, r.headers as Record<string, string>));

describe('a delivery that succeeds', () => {
  it('is retried after 503, 500 and 302 and delivered, the same signed event under the same id each time', async () => {
    const merchant = await merchantEndpoint([503, 500, 302, 204]);
    try {
      const event = cardEvent();
      const { state, status } = await deliver(event, merchant.url);
      expect(state).toMatchObject({ status: 'delivered', attempts: 4, finalHttpStatus: 204, eventId: event.id });
      expect(status).toBe('delivered');
      const events = verified(merchant.received);
      expect(events).toHaveLength(4);
      for (const e of events) expect(e).toEqual(event);
      expect(new Set(merchant.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([event.id]));
    } finally {
      merchant.close();
    }
  });

  it('counts an attempt with no answer within 10 s as failed, and delivers on the next', async () => {
    const merchant = await merchantEndpoint(['hang', 200]);
    try {
      const event = cardEvent();
      const { state } = await deliver(event, merchant.url);
      expect(state).toMatchObject({ status: 'delivered', attempts: 2 });
      expect(verified(merchant.received).map((e) => e.id)).toEqual([event.id, event.id]);
    } finally {
      merchant.close();
    }
  }, 60_000);
});

describe('a delivery that stops', () => {
  it('stops at 410 Gone after one attempt', async () => {
    const merchant = await merchantEndpoint([410]);
    try {
      const { state, status } = await deliver(cardEvent(), merchant.url);
      expect(state).toMatchObject({ status: 'gone', attempts: 1, finalHttpStatus: 410 });
      expect(status).toBe('gone');
      expect(merchant.received).toHaveLength(1);
    } finally {
      merchant.close();
    }
  });

  it('gives up after the 3-day window of refused connections: delivery_failed, on a doubling jittered backoff', async () => {
    const { state, timers, elapsedMs, status } = await deliver(cardEvent(), await refusedUrl());
    expect(state.status).toBe('delivery_failed');
    expect(status).toBe('delivery_failed');
    expect(state.lastError).toMatch(/connection error: ECONNREFUSED/);
    expect(state.attempts).toBeGreaterThan(60);
    // Every wait is half to all of its step (5 s doubling, at most 1 h); the waits and the attempts
    // (real time, as much as a loaded machine makes them) fill the window on the workflow clock.
    timers.slice(0, -1).forEach((ms, i) => {
      const step = Math.min(5_000 * 2 ** i, 3_600_000);
      expect(ms).toBeGreaterThanOrEqual(Math.floor(step / 2 / 1000) * 1000);
      expect(ms).toBeLessThanOrEqual(step);
    });
    expect(new Set(timers.slice(12, -1)).size).toBeGreaterThan(1);
    const total = timers.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(3 * DAY);
    expect(total).toBeGreaterThan(3 * DAY - state.attempts * 10_000);
    expect(elapsedMs).toBeGreaterThanOrEqual(3 * DAY);
    expect(elapsedMs).toBeLessThan(3 * DAY + 60_000);
  }, 120_000);

  it('is delivery_failed at once on a worker with no NOTIFY_SECRET, and sends nothing', async () => {
    const merchant = await merchantEndpoint([200]);
    try {
      const { state } = await deliver(cardEvent(), merchant.url, { withSecret: false });
      expect(state).toMatchObject({ status: 'delivery_failed', attempts: 1 });
      expect(state.lastError).toMatch(/NOTIFY_SECRET is not set/);
      expect(merchant.received).toHaveLength(0);
    } finally {
      merchant.close();
    }
  });
});

describe("an event that names no URL (the deployment's endpoint)", () => {
  it("is delivered to the worker's NOTIFY_URL, read at the attempt", async () => {
    const merchant = await merchantEndpoint([200]);
    try {
      const { state, status } = await deliver(cardEvent(), undefined, { notifyUrl: merchant.url });
      expect(state).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(state.url).toBeUndefined();
      expect(status).toBe('delivered');
      expect(merchant.received).toHaveLength(1);
    } finally {
      merchant.close();
    }
  });

  it('is not_configured at once on a worker with no NOTIFY_URL: one attempt, no retries, findable by status', async () => {
    const { state, status, timers } = await deliver(cardEvent(), undefined);
    expect(state).toMatchObject({ status: 'not_configured', attempts: 1 });
    expect(state.lastError).toMatch(/no NOTIFY_URL/);
    expect(timers).toEqual([]);
    expect(status).toBe('not_configured');
  });

  it('is not handed over at all by a worker with no NOTIFY_URL: the emission answers not-configured', async () => {
    const event = cardEvent();
    expect(await activities().emitMerchantEvent({ event })).toBe('not-configured');
    await expect(env.client.workflow.getHandle(event.id).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });
});

describe('emission', () => {
  it('starts one delivery per event id: a second emission (a replayed local activity) is "already started"', async () => {
    const merchant = await merchantEndpoint(['hang', 200]);
    try {
      const event = cardEvent();
      await runWithWorker(
        env,
        activities(),
        'notify-emit',
        async () => {
          const acts = createMerchantEventDeliveryActivities({
            logger: quietLogger(),
            config: { notify: { secret, retryForMs: DAY }, temporal: { taskQueue: 'notify-emit-q' } },
            temporal: env.client,
          } as unknown as ActivityDeps);
          expect(await acts.emitMerchantEvent({ event, url: merchant.url })).toBe('started');
          expect(await acts.emitMerchantEvent({ event, url: merchant.url })).toBe('already-started');
          const handle = env.client.workflow.getHandle(event.id);
          const d = await handle.describe();
          expect(d.taskQueue).toBe('notify-emit-q');
          expect(d.typedSearchAttributes.get(PaymentFlow)).toBe('merchant-event');
          expect(d.typedSearchAttributes.get(PaymentReference)).toBe(event.data.reference);
          expect(d.typedSearchAttributes.get(PaymentStatus)).toBe('delivering');
          await expect(
            env.client.workflow.start('merchantEventDeliveryWorkflow', {
              workflowId: event.id,
              taskQueue: 'notify-emit-q',
              args: [{ event, url: merchant.url, retryForMs: DAY }],
            }),
          ).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
          await handle.terminate('test over');
        },
        DELIVERY_WORKFLOWS,
      );
    } finally {
      merchant.close();
    }
  });
});
