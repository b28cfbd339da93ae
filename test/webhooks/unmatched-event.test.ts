// A payment webhook no running flow owns is parked for an operator (unmatchedPaymentWebhookWorkflow),
// and the merchant is told once: `webhook.unmatched` (docs/events.md), to the deployment's endpoint,
// with no patch of its own (the deployment endpoint's, `merchant-events-deployment-target`, guards it:
// docs/events.md, "Versioning"). The event carries the reference, the notification's
// kind, amount and currency: nothing of the payer, the token, the metadata or the signature.
// An inbox recorded before this change (test/replay/histories/unmatched-payment-webhook) replays
// without it; on a worker without NOTIFY_URL the inbox asks once and sends nothing.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { createMerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import type { ActivityDeps } from '../../src/activities/deps';
import { newNotifySecret } from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import { paymentWebhookSignal, paymentWorkflowId, unmatchedWebhookQuery } from '../../src/shared/payment-webhook';
import { releaseUnmatchedSignal } from '../../src/workflows/webhook-inbox';
import { useEventReceiver } from '../notify/receiver';
import { chargeSuccessfulEvent, signalUnmatchedWebhook } from '../support/flow-inputs';
import { rawHistoryText } from '../support/history';
import { eventually } from '../support/polling';
import { HISTORIES_DIR, replayHistory } from '../support/replay';
import { quietLogger, workflowBundle } from '../support/stack';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { createWorkerGroup } from '../../src/workers/worker-group';

const PATCH = 'merchant-events-deployment-target';
const secret = newNotifySecret();
const env = useTimeSkippingEnv({ quietRuntime: true });
const listener = useEventReceiver(secret);
afterEach(() => expect(listener.refused).toEqual([]));

/** The event hand-over and delivery of a worker whose NOTIFY_URL is `url` (none: not configured). */
function eventActivities(taskQueue: string, url: string | undefined) {
  const deps = {
    logger: quietLogger(),
    config: { notify: { url, retryForMs: 3_600_000, secret }, temporal: { taskQueue } },
    temporal: env.client,
  } as unknown as ActivityDeps;
  return createMerchantEventDeliveryActivities(deps);
}

/** Runs `fn` on a worker of its own whose deployment endpoint (NOTIFY_URL) is `url`, none: not configured. */
async function withWorker<T>(url: string | undefined, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `unmatched-${randomUUID()}`;
  const worker = await createWorkerGroup({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: eventActivities(taskQueue, url),
  });
  return worker.runUntil(fn(taskQueue));
}

const markerNames = async (h: WorkflowHandle) =>
  ((await h.fetchHistory()).events ?? []).flatMap((e) =>
    e.markerRecordedEventAttributes?.markerName ? [e.markerRecordedEventAttributes.markerName] : [],
  );

describe('webhook.unmatched: a notification no flow owns, parked for an operator', () => {
  it('is told once, under the stable id, with the reference, kind and amount and no payer data; later and repeated notifications join it', async () => {
    const ref = `ORPHAN-${randomUUID().slice(0, 8)}`;
    await withWorker(listener.url, async (taskQueue) => {
      const first = chargeSuccessfulEvent(ref, {
        amount: 250_000,
        gatewayRef: 'GW-SECRET-ISH-1',
        tokenId: 'AUTH_tok_123',
        meta: { customer_email: 'ada@example.com' },
      });
      const h = await signalUnmatchedWebhook(env.client, taskQueue, first);
      await listener.delivered(ref, 1);
      // The same notification again, and another one of the reference: kept, not told again.
      await h.signal(paymentWebhookSignal, first);
      await h.signal(paymentWebhookSignal, chargeSuccessfulEvent(ref, { event: 'charge_reversed', amount: 1 }));
      await eventually(
        () => h.query(unmatchedWebhookQuery),
        (es) => es.length === 2,
        { timeoutMs: 30_000, description: 'two notifications kept' },
      );
      await h.signal(releaseUnmatchedSignal);
      expect(await h.result()).toHaveLength(2);
      await new Promise((r) => setTimeout(r, 300)); // nothing more arrives

      const events = listener.eventsOf(ref);
      expect(events).toHaveLength(1);
      expect(events[0]).toEqual({
        type: 'webhook.unmatched',
        id: merchantEventId(paymentWorkflowId(ref), 'webhook.unmatched'),
        created_at: events[0].data.occurred_at,
        data: {
          version: 1,
          flow: 'unmatched-webhook',
          reference: ref,
          status: 'unmatched',
          reason: 'a charge_successful notification that no running flow owns, kept for an operator',
          amount: 250_000,
          currency: 'NGN',
          sequence: 1,
          occurred_at: events[0].data.occurred_at,
        },
      });
      const body = JSON.stringify(events[0]);
      for (const kept of ['GW-SECRET-ISH-1', 'AUTH_tok_123', 'ada@example.com']) expect(body).not.toContain(kept);
      // One hand-over, and the deployment endpoint's patch marker (the inbox has no target of its own).
      const names = await markerNames(h);
      expect(names.filter((n) => n === 'core_local_activity')).toHaveLength(1);
      expect(names.filter((n) => n === 'core_patch')).toHaveLength(1);
      expect(await rawHistoryText(h)).toContain(PATCH);
    });
  });

  it('a notification without a well-formed currency: told without amount and currency', async () => {
    const ref = `ORPHAN-${randomUUID().slice(0, 8)}`;
    await withWorker(listener.url, async (taskQueue) => {
      const h = await signalUnmatchedWebhook(env.client, taskQueue, chargeSuccessfulEvent(ref, { currency: 'N' }));
      const [event] = await listener.delivered(ref, 1);
      expect(event.data.amount).toBeUndefined();
      expect(event.data.currency).toBeUndefined();
      await h.signal(releaseUnmatchedSignal);
      await h.result();
    });
  });

  it('on a worker without NOTIFY_URL: the inbox asks once ("not configured") and nothing is sent', async () => {
    const ref = `ORPHAN-${randomUUID().slice(0, 8)}`;
    await withWorker(undefined, async (taskQueue) => {
      const h = await signalUnmatchedWebhook(env.client, taskQueue, chargeSuccessfulEvent(ref));
      await h.signal(releaseUnmatchedSignal);
      expect(await h.result()).toHaveLength(1);
      const names = await markerNames(h);
      expect(names.filter((n) => n === 'core_local_activity')).toHaveLength(1);
      const delivery = env.client.workflow.getHandle(merchantEventId(paymentWorkflowId(ref), 'webhook.unmatched'));
      await expect(delivery.describe()).rejects.toThrow(WorkflowNotFoundError);
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(listener.eventsOf(ref)).toEqual([]);
  });

  it("an inbox recorded before this change replays without the event: it never passed the deployment endpoint's patch", async () => {
    const name = 'unmatched-payment-webhook';
    const text = readFileSync(join(HISTORIES_DIR, `${name}.json`), 'utf8');
    expect(text).not.toContain('"markerName"');
    expect(text).not.toContain(Buffer.from(`"${PATCH}"`).toString('base64'));
    await expect(replayHistory(name)).resolves.toBeUndefined();
  });
});
