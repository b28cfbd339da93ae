// The SMS workflows on the time-skipping server.
//
// 1. A scheduled campaign waits durably for its send time (three days, skipped): the real
//    activities against the sandbox over HTTP, a worker restart in the middle of the wait, the
//    sandbox clock moved past the send time only after the wait has been checked.
// 2. The send and campaign logic with scripted activities: a batch that provably never left is
//    sent again and nothing else is; a refused key stops the later batches; a cancelled send
//    reports the in-flight batch as outcome_unknown; a pending campaign ends still_pending.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { QueryDefinition, WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createWorkerGroup } from '../../src/workers/worker-group';
import { PaymentsClient } from '../../src/api';
import { createSmsActivities, type SmsActivities } from '../../src/activities/sms';
import { createLogger } from '../../src/logging/logger';
import { DEFAULT_SANDBOX_KEY, startSandbox, type Sandbox } from '../../src/sandbox';
import {
  smsCampaignStateQuery,
  smsSendStateQuery,
  type SmsBatchAnswer,
  type SmsCampaignState,
  type SmsSendInput,
} from '../../src/shared/sms';
import type { StarterContext } from '../../src/starters/connect';
import { startSmsCampaign } from '../../src/starters/sms';
import type { smsCampaignWorkflow, smsSendWorkflow } from '../../src/workflows/sms';
import { eventually } from '../support/polling';
import { LogCapture, workflowBundle } from '../support/stack';
import { createTimeSkippingEnv, runWithWorker } from '../support/time-skipping';

let env: TestWorkflowEnvironment;
let sandbox: Sandbox;
let api: PaymentsClient;
beforeAll(async () => {
  [env, sandbox] = await Promise.all([createTimeSkippingEnv(), startSandbox({ port: 0 })]);
  api = new PaymentsClient({ baseUrl: sandbox.url, secretKey: DEFAULT_SANDBOX_KEY, timeoutMs: 5000 });
}, 120_000);
afterAll(async () => {
  await api?.close();
  await sandbox?.close();
  await env?.teardown();
});

const DAY = 86_400_000;
const logger = createLogger({ destination: new LogCapture(), level: 'warn' });
/** maxCachedWorkflows 0: every workflow task replays the history (no sticky queue tied to one worker). */
const worker = async (taskQueue: string, activities: object, opts: { noCache?: boolean } = {}) =>
  createWorkerGroup({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
    ...(opts.noCache ? { maxCachedWorkflows: 0 } : {}),
  });

/** Reads until `ok` (a read that throws: not started yet); at the deadline, the last read for the test's assertions. */
const until = <S>(read: () => Promise<S>, ok: (s: S) => boolean): Promise<S> =>
  eventually(read, ok, { attempts: 400, intervalMs: 50, ignoreErrors: true, returnLastOnTimeout: true });

it('a scheduled campaign waits durably for its send time (3 days, across a worker restart), then follows it to success', async () => {
  const taskQueue = `sms-ts-${randomUUID()}`;
  const ctx = { client: env.client, taskQueue } as unknown as StarterContext;
  const template = (await api.sms.createTemplate({ name: 'Sale', description: 'sale', message: 'Big sale tomorrow' }))
    .data;
  const scheduledAt = Math.ceil(((await env.currentTimeMs()) + 3 * DAY) / 1000) * 1000;
  const sscheduled_dor = new Date(scheduledAt).toISOString();
  const name = `Sale ${randomUUID().slice(0, 8)}`;
  const g3Reads = () => sandbox.requests().filter((e) => e.method === 'GET' && e.path === '/sms/campaign').length;
  const readsBefore = g3Reads();

  const activities = createSmsActivities({ api, logger });
  const w1 = await worker(taskQueue, activities, { noCache: true });
  const run1 = w1.run();
  const handle = await startSmsCampaign(ctx, {
    reference: `cmp-${randomUUID()}`,
    campaign: {
      name,
      bucket_id: '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d10',
      sender_id: 'SHOP',
      is_scheduled: true,
      sscheduled_dor,
      template_id: template.uuid,
    },
    options: { scheduledCheckEvery: '1 day', pollInterval: '1 minute' },
  });
  const waiting = await until(
    () => handle.query(smsCampaignStateQuery),
    (s) => s.status === 'scheduled',
  );
  expect(waiting).toMatchObject({ status: 'scheduled', scheduledFor: sscheduled_dor, polls: 0 });
  // Only the G3 read by name before the create: nothing polls while it waits.
  expect(g3Reads() - readsBefore).toBe(1);
  w1.shutdown();
  await run1;

  // A new worker picks the wait up from history.
  const w2 = await worker(taskQueue, activities, { noCache: true });
  const result = await w2.runUntil(async () => {
    await env.sleep(2 * DAY + 12 * 3_600_000);
    const mid: SmsCampaignState = await handle.query(smsCampaignStateQuery);
    // Checked once a day that it still exists (pending); still waiting for its time.
    expect(mid).toMatchObject({ status: 'scheduled', polls: 2, serviceStatus: 'pending' });
    // The service sends it at its time (the sandbox clock moves there).
    await sandbox.clock.advance(scheduledAt - sandbox.clock.now() + 60_000);
    return handle.result();
  });
  expect(result).toMatchObject({ status: 'success', serviceStatus: 'success', scheduledFor: sscheduled_dor, polls: 3 });
  const polls = result.steps.filter((s) => s.op === 'poll') as { outcome: string; at: string }[];
  expect(polls.map((p) => p.outcome)).toEqual(['pending', 'pending', 'success']);
  expect(Date.parse(polls[1].at)).toBeLessThan(scheduledAt);
  expect(Date.parse(polls[2].at)).toBeGreaterThanOrEqual(scheduledAt);
});

describe('send and campaign logic with scripted activities', () => {
  const answer = (req: { messages: { phone_number: string }[] }): SmsBatchAnswer => ({
    batch_id: `B${randomUUID().slice(0, 6)}`,
    sent: req.messages.map((m) => ({
      phone_number: m.phone_number,
      status: 'SENT',
      cost: '2.5',
      transaction_id: randomUUID(),
    })),
    errors: [],
    total_cost: String(2.5 * req.messages.length),
    currency: 'NGN',
  });
  const input = (n: number, over: Partial<SmsSendInput> = {}): SmsSendInput => ({
    reference: `s-${randomUUID()}`,
    sender_id: 'SHOP',
    messages: Array.from({ length: n }, (_, i) => ({
      phone_number: `2348077${String(i).padStart(6, '0')}`,
      message: 'hi',
    })),
    options: { batchSize: 2, retryBackoff: '1 minute' },
    ...over,
  });
  /** A campaign flow's input: a campaign sent now (not scheduled); `over` on top. */
  const campaignInput = (reference: string, over: object = {}) => ({
    reference,
    campaign: {
      name: 'N',
      bucket_id: '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d10',
      sender_id: 'S',
      is_scheduled: false,
      template_id: '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d11',
    },
    ...over,
  });
  /** What an activity throws for a request that provably never left (connection refused). */
  const neverLeft = () =>
    ApplicationFailure.create({ type: 'Transient', message: 'connect ECONNREFUSED', nonRetryable: true });
  /** `fn` with a worker of `activities` on a task queue of its own. */
  const withScripted = <T>(activities: object, fn: (taskQueue: string) => Promise<T>): Promise<T> =>
    runWithWorker(env, activities, 'sms-ts', fn);
  const executeSend = (activities: Partial<SmsActivities>, args: SmsSendInput) =>
    withScripted(activities, (taskQueue) =>
      env.client.workflow.execute<typeof smsSendWorkflow>('smsSendWorkflow', {
        taskQueue,
        workflowId: `sms-send-${randomUUID()}`,
        args: [args],
      }),
    );
  /** Cancels the flow once `inFlight` holds of its state, waits until it knows, then lets the held activity answer. */
  async function cancelWhile<S extends { cancelRequested?: boolean }>(
    h: Pick<WorkflowHandle, 'query' | 'cancel'>,
    query: QueryDefinition<S>,
    inFlight: (s: S) => boolean,
    release: () => void,
  ): Promise<void> {
    await until(() => h.query(query), inFlight);
    await h.cancel();
    await until(
      () => h.query(query),
      (s) => s.cancelRequested === true,
    );
    release();
  }

  it('resends only a batch that never left; a refused key stops the later batches (not_sent)', async () => {
    const calls: string[] = [];
    const activities: Partial<SmsActivities> = {
      async smsSendBatch(req, o) {
        calls.push(`b${o.batch}a${o.attempt}`);
        if (o.batch === 1 && o.attempt === 1) throw neverLeft();
        if (o.batch === 2)
          throw ApplicationFailure.create({
            type: 'Unauthorized',
            message: 'API key is empty or invalid',
            nonRetryable: true,
          });
        return answer(req);
      },
    };
    const result = await executeSend(activities, input(6));
    expect(calls).toEqual(['b1a1', 'b1a2', 'b2a1']);
    expect(result.batches.map((b) => [b.outcome, b.attempts])).toEqual([
      ['answered', 2],
      ['refused', 1],
      ['skipped', 0],
    ]);
    expect(result.numbers.map((n) => n.status)).toEqual(['sent', 'sent', 'failed', 'failed', 'not_sent', 'not_sent']);
    expect(result.numbers[4].error).toBe(
      'not sent: the service refused the key on batch 2 (API key is empty or invalid)',
    );
    expect(result).toMatchObject({ status: 'partially_sent', totalCost: '5.00', currency: 'NGN' });
  });

  it('a batch that never left after every allowed resend is not_sent (proven), not unknown', async () => {
    let calls = 0;
    const activities: Partial<SmsActivities> = {
      async smsSendBatch() {
        calls++;
        throw neverLeft();
      },
    };
    const result = await executeSend(
      activities,
      input(1, { options: { notSentRetries: 1, retryBackoff: '1 minute' } }),
    );
    expect(calls).toBe(2);
    expect(result).toMatchObject({ status: 'not_sent', counts: { not_sent: 1 } });
    expect(result.numbers[0].error).toMatch(
      /^batch 1 never reached the service \(.*ECONNREFUSED\) after 2 attempt\(s\)$/,
    );
  });

  it('a send cancelled while a batch is in flight: that batch is let finish (its answer kept), the later ones are not_sent', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const calls: number[] = [];
    const activities: Partial<SmsActivities> = {
      async smsSendBatch(req, o) {
        calls.push(o.batch);
        if (o.batch === 2) await held;
        return answer(req);
      },
    };
    const result = await withScripted(activities, async (taskQueue) => {
      const h = await env.client.workflow.start<typeof smsSendWorkflow>('smsSendWorkflow', {
        taskQueue,
        workflowId: `sms-send-${randomUUID()}`,
        args: [input(6)],
      });
      await cancelWhile(h, smsSendStateQuery, (s) => s.batches[1].outcome === 'sending', release);
      return h.result();
    });
    expect(calls).toEqual([1, 2]);
    expect(result).toMatchObject({ status: 'partially_sent', cancelRequested: true });
    expect(result.batches.map((b) => b.outcome)).toEqual(['answered', 'answered', 'skipped']);
    expect(result.numbers.map((n) => n.status)).toEqual(['sent', 'sent', 'sent', 'sent', 'not_sent', 'not_sent']);
    expect(result.numbers[5].error).toBe('not sent: the send was cancelled');
  });

  it('a campaign cancelled while G2 is in flight: G2 is let finish and the result names the created campaign', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let finds = 0;
    const activities: Partial<SmsActivities> = {
      async smsListCampaignIdsByName() {
        return [];
      },
      async smsCreateCampaign() {
        await held;
        return { uuid: '11111111-2222-4333-8444-666666666666', status: 'pending' };
      },
      async smsFindCampaign() {
        finds++;
        return { found: true, status: 'pending' };
      },
    };
    const result = await withScripted(activities, async (taskQueue) => {
      const h = await env.client.workflow.start<typeof smsCampaignWorkflow>('smsCampaignWorkflow', {
        taskQueue,
        workflowId: `sms-campaign-${randomUUID()}`,
        args: [campaignInput('c2')],
      });
      await cancelWhile(h, smsCampaignStateQuery, (s) => s.status === 'creating', release);
      return h.result();
    });
    expect(result).toMatchObject({
      status: 'still_pending',
      cancelRequested: true,
      campaignId: '11111111-2222-4333-8444-666666666666',
      campaign: { status: 'pending' },
    });
    expect(finds).toBe(0);
  });

  it('a campaign create that never left is sent again; a campaign still pending after followFor ends still_pending', async () => {
    const creates: number[] = [];
    let polls = 0;
    const activities: Partial<SmsActivities> = {
      async smsListCampaignIdsByName() {
        return [];
      },
      async smsCreateCampaign(_req, o) {
        creates.push(o.attempt);
        if (o.attempt === 1) throw neverLeft();
        return { uuid: '11111111-2222-4333-8444-555555555555', status: 'pending' };
      },
      async smsFindCampaign() {
        polls++;
        return { found: true, status: 'pending' };
      },
    };
    const result = await withScripted(activities, (taskQueue) =>
      env.client.workflow.execute<typeof smsCampaignWorkflow>('smsCampaignWorkflow', {
        taskQueue,
        workflowId: `sms-campaign-${randomUUID()}`,
        args: [
          campaignInput('c1', {
            options: { followFor: '2 hours', pollInterval: '1 minute', maxPollInterval: '10 minutes' },
          }),
        ],
      }),
    );
    expect(creates).toEqual([1, 2]);
    expect(result).toMatchObject({
      status: 'still_pending',
      serviceStatus: 'pending',
      campaignId: '11111111-2222-4333-8444-555555555555',
    });
    expect(result.polls).toBe(polls);
    // 1, 2, 4, 8 minutes, then every 10 minutes for two hours: bounded.
    expect(polls).toBeGreaterThan(10);
    expect(polls).toBeLessThan(20);
    expect(result.steps.filter((s) => s.op === 'create').map((s) => s.outcome)).toEqual(['not_sent', 'created']);
  });
});
