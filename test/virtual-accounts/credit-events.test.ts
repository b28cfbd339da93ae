// Virtual-account credits as merchant events (docs/events.md, docs/flows-virtual-accounts.md):
// - where a worker hands credits over, in its order of precedence (the events target, else the
//   deprecated callback format, else none);
// - the hand-over as a Standard Webhooks event over real HTTP: verified by `notify listen`'s
//   listener, one id per credit on every attempt (the merchant's dedupe key), the settled amount as
//   an integer in kobo, and the credit's own answer rules (409 taken, 4xx refused, 5xx and 429
//   retried); a correctly signed event replayed after 5 minutes is refused by the verifier;
// - on the time-skipping server, a hand-over that gives up tells the merchant once
//   (`virtual_account.credit.needs_attention`), and a credit without an events target records nothing new.
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WebhookVerificationError } from 'standardwebhooks';
import {
  creditHandoffTarget,
  type createVirtualAccountCreditActivities,
} from '../../src/activities/virtual-account-credit';
import type { MerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import { newNotifySecret, signEvent, verifyEvent, type MerchantEvent } from '../../src/notify';
import { merchantEventId, type MerchantEventEmission } from '../../src/shared/merchant-event';
import {
  creditAmountInLowestUnit,
  retryCreditHandoffUpdate,
  VA_CREDIT_DEFAULTS,
  virtualAccountCreditStateQuery,
  virtualAccountCreditWorkflowId,
  type CreditedVirtualAccountTransaction,
  type CreditHandoff,
} from '../../src/shared/virtual-account-credit';
import {
  CreditHandlerRefused,
  creditReceivedEvent,
  eventCreditHandler,
} from '../../src/virtual-accounts/credit-handler';
import { startListener, type Listener } from '../../src/starters/commands/merchant-event-delivery';
import { closeServer, listen } from '../../src/webhooks/receiver';
import { vaCredit } from '../support/flow-inputs';
import { eventually } from '../support/polling';
import { rawHistoryText } from '../support/history';
import { testConfig } from '../support/stack';
import { runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';

const secret = newNotifySecret();
const credited = (ref = `VA${randomUUID().slice(0, 8)}`): CreditedVirtualAccountTransaction => {
  const { receivedAt: _r, ...fields } = vaCredit(ref);
  return { ...fields, fieldsSource: 'service-query', creditedAt: new Date().toISOString() };
};

describe('where a worker hands credits over (precedence)', () => {
  const CALLBACK = {
    VA_CREDIT_CALLBACK_URL: 'http://merchant.test/credits',
    VA_CREDIT_CALLBACK_SECRET: 'c'.repeat(32),
  };
  it('VA_CREDIT_NOTIFY_URL first (an event, signed with NOTIFY_SECRET), even with the old callback set', () => {
    const config = testConfig({
      ...CALLBACK,
      VA_CREDIT_NOTIFY_URL: 'http://merchant.test/va-events',
      NOTIFY_SECRET: secret,
    });
    expect(creditHandoffTarget(config)).toEqual({ format: 'event', url: 'http://merchant.test/va-events', secret });
  });
  it('the old VA_CREDIT_CALLBACK_URL keeps its own format, and keeps credits off NOTIFY_URL', () => {
    const config = testConfig({ ...CALLBACK, NOTIFY_URL: 'http://merchant.test/events', NOTIFY_SECRET: secret });
    expect(creditHandoffTarget(config)).toEqual({
      format: 'callback',
      url: CALLBACK.VA_CREDIT_CALLBACK_URL,
      secret: CALLBACK.VA_CREDIT_CALLBACK_SECRET,
    });
  });
  it("neither VA setting: the process's NOTIFY_URL, as every flow's events; nothing set: recorded only", () => {
    const config = testConfig({ NOTIFY_URL: 'http://merchant.test/events', NOTIFY_SECRET: secret });
    expect(creditHandoffTarget(config)).toEqual({ format: 'event', url: 'http://merchant.test/events', secret });
    expect(creditHandoffTarget(testConfig())).toBeUndefined();
  });
  it('VA_CREDIT_NOTIFY_URL without NOTIFY_SECRET is refused, naming the secret', () => {
    expect(() => testConfig({ VA_CREDIT_NOTIFY_URL: 'http://merchant.test/va-events' })).toThrow(
      /NOTIFY_SECRET.*required when VA_CREDIT_NOTIFY_URL is set/,
    );
  });
});

describe('the hand-over as an event, over real HTTP', () => {
  let listener: Listener;
  const received: MerchantEvent[] = [];
  const refused: string[] = [];
  /** An endpoint answering `status` and keeping the raw request. */
  let answer = 200;
  const raw: { body: string; headers: Record<string, string> }[] = [];
  let plain: Server;
  let plainUrl: string;
  beforeAll(async () => {
    listener = await startListener({ port: 0, host: '127.0.0.1', secret }, (line, event) =>
      event ? received.push(event) : refused.push(line),
    );
    plain = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        raw.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string> });
        res.writeHead(answer).end();
      });
    });
    plainUrl = await listen(plain, 0);
  });
  afterAll(async () => {
    listener?.server.close();
    await closeServer(plain);
  });

  it('one verified virtual_account.credit.received per attempt, the same id every time; the settled amount in kobo; no account number', async () => {
    const credit = credited();
    const handler = eventCreditHandler({ url: listener.url, secret });
    const key = credit.transactionReference;
    await handler({ idempotencyKey: key, credit });
    await handler({ idempotencyKey: key, credit }); // a retried hand-over (its answer was lost)
    const events = await eventually(
      () => received.filter((e) => e.data.reference === key),
      (es) => es.length === 2,
    );
    const id = merchantEventId(virtualAccountCreditWorkflowId(key), 'virtual_account.credit.received');
    expect(events.map((e) => e.id)).toEqual([id, id]);
    expect(events[0]).toEqual({
      type: 'virtual_account.credit.received',
      id,
      created_at: credit.creditedAt,
      data: {
        version: 1,
        flow: 'virtual-account-credit',
        reference: key,
        status: 'credited',
        amount: 497_500,
        currency: 'NGN',
        sequence: 2,
        occurred_at: credit.creditedAt,
      },
    });
    expect(JSON.stringify(events[0])).not.toContain(credit.virtualAccountNumber);
    expect(refused).toEqual([]);
  });

  it("the credit's answer rules: 2xx and 409 taken; 410 and other 4xx refused for good; 3xx, 408, 429 and 5xx asked again", async () => {
    const handler = eventCreditHandler({ url: `${plainUrl}/credits`, secret });
    const handOver = () => {
      const credit = credited();
      return handler({ idempotencyKey: credit.transactionReference, credit });
    };
    answer = 200;
    await expect(handOver()).resolves.toEqual({ detail: 'HTTP 200 (event)' });
    answer = 409;
    await expect(handOver()).resolves.toEqual({ detail: 'HTTP 409: the handler already had this event' });
    for (const status of [400, 410, 499]) {
      answer = status;
      const err = await handOver().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CreditHandlerRefused);
      expect((err as Error).message).toBe(`the credit's event endpoint refused it: HTTP ${status}`);
    }
    for (const status of [300, 408, 429, 500, 503]) {
      answer = status;
      const err = await handOver().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(CreditHandlerRefused);
      expect((err as Error).message).toBe(`the credit's event endpoint did not take it (HTTP ${status}); retried`);
    }
  });

  it('the replay window: the event as received verifies; the same event signed 6 minutes ago is refused', async () => {
    answer = 200;
    const credit = credited();
    await eventCreditHandler({ url: `${plainUrl}/credits`, secret })({
      idempotencyKey: credit.transactionReference,
      credit,
    });
    const got = raw.at(-1)!;
    expect(verifyEvent(secret, got.body, got.headers)).toMatchObject({ type: 'virtual_account.credit.received' });
    const old = signEvent(
      secret,
      creditReceivedEvent({ idempotencyKey: credit.transactionReference, credit }),
      new Date(Date.now() - 360_000),
    );
    expect(() => verifyEvent(secret, old.body, old.headers)).toThrow(WebhookVerificationError);
  });

  it("a credit released from the service's freeze says so, with the service's reason when it gave one", () => {
    const credit = credited();
    const reasonOf = (releasedFreeze: { reason?: string }) =>
      creditReceivedEvent({ idempotencyKey: credit.transactionReference, credit, releasedFreeze }).data.reason;
    expect(reasonOf({ reason: 'compliance review' })).toBe("released from the service's freeze (compliance review)");
    expect(reasonOf({})).toBe("released from the service's freeze");
    expect(creditReceivedEvent({ idempotencyKey: credit.transactionReference, credit }).data).not.toHaveProperty(
      'reason',
    );
  });

  it('a settled amount that is not a plain decimal leaves out both the amount and the currency', () => {
    const credit = { ...credited(), settledAmount: '1e3' };
    const { data } = creditReceivedEvent({ idempotencyKey: credit.transactionReference, credit });
    expect(data).not.toHaveProperty('amount');
    expect(data).not.toHaveProperty('currency');
  });

  it('amounts are read as digits, never as floats; anything but a plain decimal is left out', () => {
    expect(creditAmountInLowestUnit('4975.00')).toBe(497_500);
    expect(creditAmountInLowestUnit('0.1')).toBe(10);
    expect(creditAmountInLowestUnit('1500.5')).toBe(150_050);
    expect(creditAmountInLowestUnit('12')).toBe(1200);
    for (const bad of ['1.005', '-5.00', '1e3', '', 'NaN']) expect(creditAmountInLowestUnit(bad)).toBeUndefined();
  });
});

describe('a hand-over that gives up tells the merchant (time-skipping)', () => {
  const env = useTimeSkippingEnv();
  type Activities = ReturnType<typeof createVirtualAccountCreditActivities> & MerchantEventDeliveryActivities;

  /** Scripted activities: the hand-over fails as an events target's failure does (naming it), or as another's. */
  function scripted(named: boolean) {
    const emitted: MerchantEventEmission[] = [];
    let down = true;
    const activities: Partial<Activities> = {
      async recordVirtualAccountCredit(credit) {
        return {
          status: 'credited',
          credit: { ...credit, fieldsSource: 'service-query', creditedAt: new Date().toISOString() },
          deliveries: 1,
        };
      },
      async readVirtualAccountCreditFreeze() {
        return { known: true };
      },
      async handOverVirtualAccountCredit(req): Promise<CreditHandoff> {
        if (down)
          throw ApplicationFailure.create({
            type: 'CreditHandoffFailed',
            message: 'the event endpoint answered HTTP 503',
            details: named ? [{ notify: { url: 'http://merchant.test/va-events' } }] : [],
          });
        return {
          status: 'delivered',
          idempotencyKey: req.credit.transactionReference,
          attempts: 1,
          at: new Date().toISOString(),
        };
      },
      async emitMerchantEvent(e) {
        emitted.push(e);
        return 'started';
      },
    };
    return { activities, emitted, up: () => (down = false) };
  }

  const giveUp = async (named: boolean) => {
    const s = scripted(named);
    return runWithWorker(env, s.activities, 'va-ev', async (taskQueue) => {
      const credit = vaCredit(`VA${randomUUID().slice(0, 8)}`);
      const handle = await env.client.workflow.start('virtualAccountCreditWorkflow', {
        workflowId: virtualAccountCreditWorkflowId(credit.transactionReference),
        taskQueue,
        args: [credit],
      });
      await env.sleep(VA_CREDIT_DEFAULTS.handoffRetryForMs + 60_000);
      expect((await handle.query(virtualAccountCreditStateQuery)).status).toBe('handoff_failed');
      s.up();
      await handle.executeUpdate(retryCreditHandoffUpdate, { args: [{ operator: 'ops@merchant', reason: 'fixed' }] });
      await handle.result();
      return { credit, emitted: s.emitted, decoded: await rawHistoryText(handle) };
    });
  };

  it("with an events target: one virtual_account.credit.needs_attention (handoff_failed), under the credit's id", async () => {
    const { credit, emitted, decoded } = await giveUp(true);
    const ref = credit.transactionReference;
    expect(emitted).toEqual([
      {
        url: 'http://merchant.test/va-events',
        event: {
          type: 'virtual_account.credit.needs_attention',
          id: merchantEventId(virtualAccountCreditWorkflowId(ref), 'virtual_account.credit.needs_attention'),
          created_at: expect.any(String),
          data: expect.objectContaining({
            flow: 'virtual-account-credit',
            reference: ref,
            status: 'handoff_failed',
            amount: 497_500,
            currency: 'NGN',
            sequence: 1,
          }),
        },
      },
    ]);
    expect(decoded).toContain('va-credit-handoff-gave-up-event');
  });

  it('without one (a registered handler or the old callback): nothing emitted, no patch marker', async () => {
    const { emitted, decoded } = await giveUp(false);
    expect(emitted).toEqual([]);
    expect(decoded).not.toContain('va-credit-handoff-gave-up-event');
    expect(decoded).not.toContain('emitMerchantEvent');
  });
});
