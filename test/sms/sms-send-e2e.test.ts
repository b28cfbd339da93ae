// G1 instant send end to end: the real worker and starters on the dev server, the sandbox over
// real HTTP. Checked against what the sandbox says it sent (GET /__admin/sms/messages) and its
// request log: batching within the service's limit, a bad number among good ones, 4xx and 5xx
// answers, a lost answer never resent, input rules, and no phone number in any log line.
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/logging/logger';
import { SMS_COST_PER_PAGE, SMS_FAILING_NUMBER, SMS_MAX_MESSAGES_PER_REQUEST, type SentSms } from '../../src/sandbox';
import { runSmsSend, startSmsSend } from '../../src/starters/sms';
import { StarterInputError } from '../../src/starters/input-error';
import type { SmsSendInput } from '../../src/shared/sms';
import { LogCapture, testConfig, useServices } from '../support/stack';
import { recordHistory } from '../support/replay';
import { sandboxAdminCall, type RequestLogEntry } from '../support/sandbox-admin';
import { eventually } from '../support/polling';
import { resolveParkedFlow } from '../../src/starters/ops';
import { smsSendStateQuery } from '../../src/shared/sms';

const capture = new LogCapture();
const logger = createLogger({ destination: capture, level: 'info' });
const config = testConfig();
const env = useServices(config, logger);
afterEach(() => env.admin.clearFaults());

const SEND = '^/sms/send/instant$';
/** Distinct valid numbers; `seed` keeps tests apart. */
const numbers = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => `2348${seed}${String(i).padStart(8 - String(seed).length, '0')}`);
const send = (phones: string[], over: Partial<SmsSendInput> = {}): SmsSendInput => ({
  reference: `sms-${randomUUID()}`,
  sender_id: 'SHOP',
  messages: phones.map((p) => ({ phone_number: p, message: 'Your order has shipped' })),
  ...over,
});
/** The send is parked (outcome_unknown) and still running: its state. */
async function parkedSend(handle: Awaited<ReturnType<typeof startSmsSend>>) {
  await eventually(async () => (await handle.query(smsSendStateQuery)).status === 'outcome_unknown', {
    timeoutMs: 20_000,
    intervalMs: 50,
  });
  expect((await handle.describe()).status.name).toBe('RUNNING');
  return handle.query(smsSendStateQuery);
}
const sentLog = () => sandboxAdminCall<SentSms[]>(env.services.sandboxUrl!, 'GET', '/sms/messages');
const sendCalls = async (from: number): Promise<number[]> =>
  ((await env.admin.requests()) as RequestLogEntry[])
    .slice(from)
    .filter((e) => e.method === 'POST' && e.path === '/sms/send/instant')
    .map((e) => e.status as number);

describe('SMS instant send against the sandbox', () => {
  it(`batches a list bigger than the service's ${SMS_MAX_MESSAGES_PER_REQUEST}-message limit: every number sent exactly once, costs added exactly`, async () => {
    const phones = numbers(230, 11);
    const from = (await env.admin.requests()).length;
    const before = (await sentLog()).length;
    const result = await runSmsSend(env.services.starters, send(phones));

    expect(result.status).toBe('sent');
    expect(result.counts).toEqual({
      total: 230,
      sent: 230,
      failed: 0,
      invalid: 0,
      duplicate: 0,
      not_sent: 0,
      outcome_unknown: 0,
    });
    expect(result.batches.map((b) => [b.size, b.attempts, b.outcome])).toEqual([
      [100, 1, 'answered'],
      [100, 1, 'answered'],
      [30, 1, 'answered'],
    ]);
    expect(await sendCalls(from)).toEqual([200, 200, 200]);
    // What the service sent: each number once, in the batch the flow reports.
    const sent = (await sentLog()).slice(before);
    expect(sent.map((s) => s.phone_number).sort()).toEqual([...phones].sort());
    const byNumber = new Map(sent.map((s) => [s.phone_number, s]));
    for (const n of result.numbers) {
      expect(n).toMatchObject({ status: 'sent', cost: String(SMS_COST_PER_PAGE) });
      expect(n.transaction_id).toBe(byNumber.get(n.phone_number!)!.transaction_id);
      expect(result.batches[n.batch! - 1].batch_id).toBe(byNumber.get(n.phone_number!)!.batch_id);
    }
    expect(result.numbers.map((n) => n.index)).toEqual(phones.map((_, i) => i));
    expect(result).toMatchObject({
      totalCost: `${230 * SMS_COST_PER_PAGE}.00`,
      currency: 'NGN',
      costByCurrency: { NGN: '920.00' },
    });
    // Personal data stays out of the logs.
    for (const p of phones) expect(capture.rawText).not.toContain(p);
  });

  it('a bad number among good ones: the others are sent, the bad one is named with its rule, the refused one with the service reason', async () => {
    const good = numbers(3, 22);
    const before = (await sentLog()).length;
    const handle = await startSmsSend(
      env.services.starters,
      send([], {
        messages: [
          { phone_number: good[0], message: 'hello' },
          { phone_number: '0803-ABC', message: 'hello' },
          { phone_number: good[1], message: 'x'.repeat(161) },
          { phone_number: SMS_FAILING_NUMBER, message: 'hello' },
          { phone_number: good[2], message: '' },
          { phone_number: good[0], message: 'hello' },
        ],
      }),
    );
    const result = await handle.result();
    await recordHistory(handle, 'sms-send-bad-number-among-good');
    expect(result.status).toBe('partially_sent');
    expect(result.numbers).toEqual([
      expect.objectContaining({ index: 0, phone_number: good[0], status: 'sent', cost: '4' }),
      {
        index: 1,
        phone_number: '0803-ABC',
        status: 'invalid',
        error: 'messages[1].phone_number must be a phone number: 7 to 15 digits, optionally after a leading +',
      },
      expect.objectContaining({ index: 2, phone_number: good[1], status: 'sent', cost: '8' }),
      {
        index: 3,
        phone_number: SMS_FAILING_NUMBER,
        status: 'failed',
        batch: 1,
        error: 'the service did not send it: Message could not be delivered to this number',
      },
      { index: 4, phone_number: good[2], status: 'invalid', error: 'messages[4].message must not be empty' },
      {
        index: 5,
        phone_number: good[0],
        status: 'duplicate',
        error: 'same phone_number and message as messages[0]: sent once only',
      },
    ]);
    expect(result.counts).toMatchObject({ total: 6, sent: 2, failed: 1, invalid: 2, duplicate: 1 });
    expect(result.totalCost).toBe('12.00');
    expect((await sentLog()).slice(before).map((s) => s.phone_number)).toEqual([good[0], good[1]]);
  });

  it('a 4xx refusal names the batch and its numbers as failed; the other batches are still sent', async () => {
    // A batch bigger than the service takes: the service answers 400 for it.
    const phones = numbers(SMS_MAX_MESSAGES_PER_REQUEST + 1 + 5, 33);
    const before = (await sentLog()).length;
    const result = await runSmsSend(
      env.services.starters,
      send(phones, { options: { batchSize: SMS_MAX_MESSAGES_PER_REQUEST + 1 } }),
    );
    expect(result.status).toBe('partially_sent');
    expect(result.batches).toEqual([
      expect.objectContaining({
        batch: 1,
        size: 101,
        attempts: 1,
        outcome: 'refused',
        detail: expect.stringContaining('messages must hold at most 100 items'),
      }),
      expect.objectContaining({ batch: 2, size: 5, attempts: 1, outcome: 'answered' }),
    ]);
    expect(result.counts).toMatchObject({ sent: 5, failed: 101 });
    expect(result.numbers[0]).toMatchObject({
      status: 'failed',
      batch: 1,
      error: expect.stringMatching(
        /^the service refused batch 1: .*messages must hold at most 100 items; nothing in it was sent$/,
      ),
    });
    expect((await sentLog()).slice(before).map((s) => s.phone_number)).toEqual(phones.slice(101));
  });

  it('a 5xx answer: the batch is outcome_unknown and never resent; the next batch is sent; the send stays parked until an operator resolves the unknown numbers', async () => {
    const phones = numbers(4, 44);
    await env.admin.fault({ method: 'POST', path: SEND, kind: 'error5xx', count: 1 });
    const from = (await env.admin.requests()).length;
    const handle = await startSmsSend(env.services.starters, send(phones, { options: { batchSize: 2 } }));
    const parked = await parkedSend(handle);
    expect(parked.counts).toMatchObject({ sent: 2, outcome_unknown: 2 });
    expect(await sendCalls(from)).toEqual([503, 200]);
    await resolveParkedFlow(env.services.starters, handle.workflowId, {
      outcome: 'failed',
      reason: 'the provider report shows no delivery (test)',
      operator: 'ops@example.com',
    });
    const result = await handle.result();
    await recordHistory(handle, 'sms-send-5xx-outcome-unknown');
    expect(await sendCalls(from)).toEqual([503, 200]);
    expect(result.status).toBe('partially_sent');
    expect(result.resolution).toMatchObject({ outcome: 'failed', operator: 'ops@example.com' });
    expect(result.batches.map((b) => [b.outcome, b.attempts])).toEqual([
      ['outcome_unknown', 1],
      ['answered', 1],
    ]);
    expect(result.numbers.slice(0, 2)).toEqual([
      expect.objectContaining({
        status: 'failed',
        batch: 1,
        error: expect.stringMatching(
          /^resolved by ops@example.com: .*\(was: the answer to batch 1 was lost \(OutcomeUnknown: send SMS batch 1 \(G1\): .+\): it may have been sent; not resent\)$/,
        ),
      }),
      expect.objectContaining({ status: 'failed', batch: 1 }),
    ]);
  });

  it('a batch processed but its answer lost is reported outcome_unknown per number and sent only once', async () => {
    const phones = numbers(3, 55);
    await env.admin.fault({ method: 'POST', path: SEND, kind: 'drop-after-processing', count: 1 });
    const before = (await sentLog()).length;
    const from = (await env.admin.requests()).length;
    const handle = await startSmsSend(env.services.starters, send(phones));
    expect((await parkedSend(handle)).counts).toMatchObject({ total: 3, outcome_unknown: 3, sent: 0 });
    expect((await handle.describe()).searchAttributes.PaymentStatus).toEqual(['outcome_unknown']);
    // Only a parked flow takes a resolution, and only with one of its own outcomes.
    await expect(
      resolveParkedFlow(env.services.starters, handle.workflowId, { outcome: 'vended', reason: 'x', operator: 'o' }),
    ).rejects.toHaveProperty('cause.message', 'outcome must be one of sent, failed');
    await resolveParkedFlow(env.services.starters, handle.workflowId, {
      outcome: 'sent',
      reason: 'the provider report shows delivery (test)',
      operator: 'ops@example.com',
    });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'sent', counts: { sent: 3, outcome_unknown: 0 } });
    expect(await sendCalls(from)).toHaveLength(1);
    // The service did send them — once; the flow says it cannot know, and never sends again.
    expect((await sentLog()).slice(before).map((s) => s.phone_number)).toEqual(phones);
  });

  it('one send per reference: a second start with the same reference is refused, nothing sent twice', async () => {
    const input = send(numbers(1, 66));
    const first = await startSmsSend(env.services.starters, input);
    await expect(startSmsSend(env.services.starters, input)).rejects.toThrow(/already started/i);
    expect((await first.result()).status).toBe('sent');
  });

  it('input rules are checked before anything starts, naming the field and the rule', async () => {
    const bad = async (input: unknown) => {
      try {
        await startSmsSend(env.services.starters, input as SmsSendInput);
      } catch (err) {
        expect(err).toBeInstanceOf(StarterInputError);
        return (err as Error).message;
      }
      throw new Error('accepted');
    };
    expect(await bad({ reference: 'x1', messages: [{ phone_number: '2348012345678', message: 'a' }] })).toBe(
      'invalid SMS send input: sender_id is required',
    );
    expect(await bad({ reference: 'x1', sender_id: 'S', messages: [] })).toBe(
      'invalid SMS send input: messages must contain at least one message',
    );
    expect(
      await bad({
        reference: 'x1',
        sender_id: 'S',
        messages: [{ phone_number: '1', message: 'a' }],
        options: { batchSize: 5000 },
      }),
    ).toBe('invalid SMS send input: options.batchSize must be at most 1000');
    // 'refuse': any bad entry refuses the whole send, naming it.
    expect(
      await bad({
        reference: 'x1',
        sender_id: 'S',
        messages: [
          { phone_number: '2348012345678', message: 'a' },
          { phone_number: 'abc', message: 'b' },
        ],
        options: { invalidMessages: 'refuse' },
      }),
    ).toBe(
      'invalid SMS send input: messages.1.phone_number must be a phone number: 7 to 15 digits, optionally after a leading +',
    );
  });
});
