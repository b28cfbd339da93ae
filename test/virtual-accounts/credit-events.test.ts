// Virtual-account credits as merchant events (docs/events.md, docs/flows-virtual-accounts.md):
// - where a worker hands credits over, in its order of precedence (events, to VA_CREDIT_NOTIFY_URL
//   or else the deployment's NOTIFY_URL; else the deprecated callback format; else none);
// - the credit's event: one id per credit (the merchant's dedupe key), the settled amount as an
//   integer in kobo, no account number; signed as every event, a copy replayed after 5 minutes is
//   refused by the verifier;
// - the hand-over activity with an events target starts the event's own delivery workflow (the one
//   pipeline of every flow's events) under that id, to the alias's URL or the deployment's; a
//   retried hand-over finds it started; a start that fails is retried and names the target;
// - on the time-skipping server, a hand-over that gives up tells the merchant once
//   (`virtual_account.credit.needs_attention`), and a credit without an events target records nothing new.
// Over real HTTP, with `notify list | redeliver`: credit-events-e2e.test.ts.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { WebhookVerificationError } from 'standardwebhooks';
import type { ActivityDeps } from '../../src/activities/deps';
import { creditHandoffTarget, createVirtualAccountCreditActivities } from '../../src/activities/virtual-account-credit';
import type { MerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import { createLogger } from '../../src/logging/logger';
import { newNotifySecret, signEvent, verifyEvent } from '../../src/notify';
import {
  merchantEventId,
  type MerchantEventDeliveryInput,
  type MerchantEventEmission,
} from '../../src/shared/merchant-event';
import {
  creditAmountInLowestUnit,
  retryCreditHandoffUpdate,
  VA_CREDIT_DEFAULTS,
  virtualAccountCreditStateQuery,
  virtualAccountCreditWorkflowId,
  type CreditedVirtualAccountTransaction,
  type CreditHandoff,
} from '../../src/shared/virtual-account-credit';
import { creditReceivedEvent } from '../../src/virtual-accounts/credit-handler';
import { vaCredit } from '../support/flow-inputs';
import { rawHistoryText } from '../support/history';
import { LogCapture, testConfig } from '../support/stack';
import { runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';

const secret = newNotifySecret();
const credited = (ref = `VA${randomUUID().slice(0, 8)}`): CreditedVirtualAccountTransaction => {
  const { receivedAt: _r, ...fields } = vaCredit(ref);
  return { ...fields, fieldsSource: 'service-query', creditedAt: new Date().toISOString() };
};
const receivedId = (ref: string) =>
  merchantEventId(virtualAccountCreditWorkflowId(ref), 'virtual_account.credit.received');

describe('where a worker hands credits over (precedence)', () => {
  const CALLBACK = {
    VA_CREDIT_CALLBACK_URL: 'http://merchant.test/credits',
    VA_CREDIT_CALLBACK_SECRET: 'c'.repeat(32),
  };
  it('VA_CREDIT_NOTIFY_URL first (an alias: the credit events go there), even with the old callback or NOTIFY_URL set', () => {
    const alias = { VA_CREDIT_NOTIFY_URL: 'http://merchant.test/va-events', NOTIFY_SECRET: secret };
    for (const more of [CALLBACK, { NOTIFY_URL: 'http://merchant.test/events' }])
      expect(creditHandoffTarget(testConfig({ ...more, ...alias }))).toEqual({
        format: 'event',
        url: 'http://merchant.test/va-events',
      });
  });
  it('the old VA_CREDIT_CALLBACK_URL keeps its own format, and keeps credits off NOTIFY_URL', () => {
    const config = testConfig({ ...CALLBACK, NOTIFY_URL: 'http://merchant.test/events', NOTIFY_SECRET: secret });
    expect(creditHandoffTarget(config)).toEqual({
      format: 'callback',
      url: CALLBACK.VA_CREDIT_CALLBACK_URL,
      secret: CALLBACK.VA_CREDIT_CALLBACK_SECRET,
    });
  });
  it("neither VA setting: events with no URL of their own (the deployment's NOTIFY_URL, as every flow's); nothing set: recorded only", () => {
    const config = testConfig({ NOTIFY_URL: 'http://merchant.test/events', NOTIFY_SECRET: secret });
    expect(creditHandoffTarget(config)).toEqual({ format: 'event' });
    expect(creditHandoffTarget(testConfig())).toBeUndefined();
  });
  it('VA_CREDIT_NOTIFY_URL without NOTIFY_SECRET is refused, naming the secret', () => {
    expect(() => testConfig({ VA_CREDIT_NOTIFY_URL: 'http://merchant.test/va-events' })).toThrow(
      /NOTIFY_SECRET.*required when VA_CREDIT_NOTIFY_URL is set/,
    );
  });
});

describe("the credit's event", () => {
  it('virtual_account.credit.received: its id per credit, created when the credit was recorded; the settled amount in kobo; no account number', () => {
    const credit = credited();
    const key = credit.transactionReference;
    const event = creditReceivedEvent({ idempotencyKey: key, credit });
    expect(event).toEqual({
      type: 'virtual_account.credit.received',
      id: receivedId(key),
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
    // Built again (a retried hand-over, another worker): the same event, byte for byte.
    expect(JSON.stringify(creditReceivedEvent({ idempotencyKey: key, credit }))).toBe(JSON.stringify(event));
    expect(JSON.stringify(event)).not.toContain(credit.virtualAccountNumber);
    expect(JSON.stringify(event)).not.toContain(credit.customerIdentifier);
  });

  it('the replay window: the event signed now verifies; the same event signed 6 minutes ago is refused', () => {
    const credit = credited();
    const event = creditReceivedEvent({ idempotencyKey: credit.transactionReference, credit });
    const now = signEvent(secret, event);
    expect(verifyEvent(secret, now.body, now.headers)).toMatchObject({ type: 'virtual_account.credit.received' });
    const old = signEvent(secret, event, new Date(Date.now() - 360_000));
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

describe('the hand-over with an events target: the event into its own delivery', () => {
  /** What the worker's Temporal client was asked to start; `failWith` makes the next start fail. */
  function temporalStandIn() {
    const started: { workflowType: string; workflowId: string; input: MerchantEventDeliveryInput }[] = [];
    let failWith: Error | undefined;
    const client = {
      workflow: {
        async start(workflowType: string, opts: { workflowId: string; args: [MerchantEventDeliveryInput] }) {
          if (failWith) throw failWith;
          if (started.some((s) => s.workflowId === opts.workflowId))
            throw new WorkflowExecutionAlreadyStartedError('already started', opts.workflowId, workflowType);
          started.push({ workflowType, workflowId: opts.workflowId, input: opts.args[0] });
          return {};
        },
      },
    };
    return { client: client as unknown as Client, started, fail: (err?: Error) => (failWith = err) };
  }

  const activitiesFor = (env: Record<string, string>, temporal: Client, more: Partial<ActivityDeps> = {}) =>
    createVirtualAccountCreditActivities({
      config: testConfig({ NOTIFY_SECRET: secret, ...env }),
      logger: createLogger({ destination: new LogCapture() }),
      temporal,
      ...more,
    } as unknown as ActivityDeps);
  const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> =>
    new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR', () => undefined) }).run(fn, ...args);

  it("NOTIFY_URL only: the delivery starts under the event's id with no URL of its own (the deployment's); a retried hand-over finds it started", async () => {
    const t = temporalStandIn();
    const { handOverVirtualAccountCredit } = activitiesFor({ NOTIFY_URL: 'http://merchant.test/events' }, t.client);
    const credit = credited();
    const ref = credit.transactionReference;
    const first = await run(handOverVirtualAccountCredit, { credit });
    expect(first).toMatchObject({
      status: 'emitted',
      idempotencyKey: ref,
      eventId: receivedId(ref),
      detail: 'handed to its delivery (notify list)',
    });
    expect(t.started).toEqual([
      {
        workflowType: 'merchantEventDeliveryWorkflow',
        workflowId: receivedId(ref),
        input: { event: creditReceivedEvent({ idempotencyKey: ref, credit }), retryForMs: expect.any(Number) },
      },
    ]);
    const again = await run(handOverVirtualAccountCredit, { credit });
    expect(again).toMatchObject({ status: 'emitted', eventId: receivedId(ref) });
    expect(again.detail).toMatch(/had started already/);
    expect(t.started).toHaveLength(1);
  });

  it("VA_CREDIT_NOTIFY_URL: the delivery carries the alias's URL; a start that fails is retried (not a refusal) and names it", async () => {
    const t = temporalStandIn();
    const { handOverVirtualAccountCredit } = activitiesFor(
      { NOTIFY_URL: 'http://merchant.test/events', VA_CREDIT_NOTIFY_URL: 'http://merchant.test/va-events' },
      t.client,
    );
    const credit = credited();
    t.fail(new Error('Temporal unavailable'));
    const err = (await run(handOverVirtualAccountCredit, { credit }).catch((e: unknown) => e)) as ApplicationFailure;
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({
      type: 'CreditHandoffFailed',
      nonRetryable: false,
      message: "the credit's event could not be handed to its delivery: Temporal unavailable",
      details: [{ notify: { url: 'http://merchant.test/va-events' } }],
    });
    t.fail(undefined);
    await expect(run(handOverVirtualAccountCredit, { credit })).resolves.toMatchObject({ status: 'emitted' });
    expect(t.started.map((s) => s.input.url)).toEqual(['http://merchant.test/va-events']);
  });

  it('a function registered in the worker comes first: it takes the credit, nothing is emitted', async () => {
    const t = temporalStandIn();
    const handed: string[] = [];
    const { handOverVirtualAccountCredit } = activitiesFor({ NOTIFY_URL: 'http://merchant.test/events' }, t.client, {
      creditHandler: async (req) => void handed.push(req.idempotencyKey),
    });
    const credit = credited();
    await expect(run(handOverVirtualAccountCredit, { credit })).resolves.toMatchObject({ status: 'delivered' });
    expect(handed).toEqual([credit.transactionReference]);
    expect(t.started).toEqual([]);
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
