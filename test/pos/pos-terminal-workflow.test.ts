// The POS terminal transaction workflow's decisions on the time-skipping server, with scripted
// activities that record every call: each outcome has one next step, and no F3 is ever sent a
// second time unless the F4 just before it answered 404. Backoffs and settle delays are skipped.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { PosTerminalActivities } from '../../src/activities/pos-terminal';
import { classifyPosResponseCode, PosTerminalInitiateRequestSchema } from '../../src/api';
import {
  PosTransactionRequestSchema,
  classifyPosCode,
  type PosRequeryOutcome,
  type PosSealedInitiateRequest,
  type PosSealedTransactionInput,
  type PosTransactionInput,
  type PosTransactionRecord,
  type PosTransactionResult,
  posTransactionStateQuery,
} from '../../src/shared/pos-terminal';
import { expectResolution, refusedResolution } from '../support/outcome';
import type { posTerminalTransactionWorkflow } from '../../src/workflows/pos-terminal';
import { activitiesByWorkflow } from '../support/activities-by-workflow';
import { hangUntilWorkerShutdown, runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';
import { SECRET_UNAVAILABLE } from '../../src/shared/claim-check';
import { assertNoRetryWithoutRequery, cardInput, sealedCardInput, stepsToCalls, type CallRecord } from './helpers';
import { FailureTypes } from '../../src/shared/failures';
import { eventually } from '../support/polling';

type ScriptedActivities = Pick<
  PosTerminalActivities,
  'posTerminalInitiateTransaction' | 'posTerminalRequeryTransaction' | 'posDiscardSealedCard'
>;
// One worker for the file; each flow's activities follow the script registered under its workflow id.
const shared = activitiesByWorkflow<ScriptedActivities>([
  'posTerminalInitiateTransaction',
  'posTerminalRequeryTransaction',
  'posDiscardSealedCard',
]);
const TASK_QUEUE = `pos-ts-${randomUUID()}`;
const env = useTimeSkippingEnv({
  quietRuntime: true,
  worker: { taskQueue: TASK_QUEUE, activities: () => shared.activities },
});

// `untyped`: an ApplicationFailure without a type (neither the service's nor Temporal's).
// `unanswered`: a call that stays alive (it heartbeats) and never answers.
type InitiateScript = { code: string } | { fail: string } | { hang: true } | { untyped: true } | { unanswered: true };
type RequeryScript = { code: string } | 'not_found' | { fail: string } | { hang: true };

const txn = (ref: string, code: string): PosTransactionRecord => ({
  status: code === '00' ? 'success' : 'failed',
  response_code: code,
  amount: 150000,
  merchant_ref: ref,
  card_pan_masked: '539983******0008',
});

/** Activities that follow a script and record every call in order. */
function scripted(
  initiates: InitiateScript[],
  requeries: RequeryScript[],
  calls: CallRecord[],
  seen: PosSealedInitiateRequest[] = [],
  discarded: string[] = [],
) {
  const acts: ScriptedActivities = {
    async posTerminalInitiateTransaction(req) {
      const s = initiates.shift();
      if (!s) throw new Error('unscripted initiate');
      // The card data expired before this F3: nothing is sent (so no call is recorded).
      if ('fail' in s && s.fail === SECRET_UNAVAILABLE)
        throw ApplicationFailure.create({
          type: SECRET_UNAVAILABLE,
          message: 'the sealed pos-card is no longer available',
          nonRetryable: true,
        });
      calls.push({ op: 'initiate', merchantRef: req.merchant_ref });
      seen.push(req as PosSealedInitiateRequest);
      if ('hang' in s) {
        // A worker that stops mid-call: no heartbeat, no answer (until well after the heartbeat timeout).
        // It does end when its worker shuts down, so the next test's worker does not share the machine with it.
        await hangUntilWorkerShutdown(15_000);
        throw new Error('the hung call ended');
      }
      if ('unanswered' in s) {
        // Its worker is alive and heartbeats, the service never answers: its start-to-close ends it
        // (or its worker's shutdown, so it does not outlive the test).
        const ctx = Context.current();
        for (const until = Date.now() + 30_000; Date.now() < until;) {
          ctx.heartbeat();
          if (
            await ctx.sleep(1_000).then(
              () => false,
              () => true,
            )
          )
            break;
        }
        throw new Error('the unanswered call ended');
      }
      if ('fail' in s)
        throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
      if ('untyped' in s) throw ApplicationFailure.create({ message: 'scripted untyped failure', nonRetryable: true });
      return { transaction: txn(req.merchant_ref, s.code) };
    },
    async posTerminalRequeryTransaction(req): Promise<PosRequeryOutcome> {
      const s = requeries.shift();
      if (!s) throw new Error('unscripted requery');
      if (s === 'not_found') {
        calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'not_found' });
        return { found: false };
      }
      if ('hang' in s) {
        // A read that never answers: its schedule-to-close (the requeryTimeout) ends it.
        calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'error' });
        await hangUntilWorkerShutdown(15_000);
        throw new Error('the hung read ended');
      }
      if ('fail' in s) {
        calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'error' });
        throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
      }
      calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'found' });
      return { found: true, transaction: txn(req.merchant_ref, s.code) };
    },
    async posDiscardSealedCard(handle) {
      discarded.push(handle);
    },
  };
  return acts;
}

/**
 * Runs one sale to its result on the file's worker, or with `ownWorker` on a worker of its own that
 * stops when the sale ends (a hung activity then ends with it instead of outliving the test).
 */
async function run(
  initiates: InitiateScript[],
  requeries: RequeryScript[],
  input?: Partial<PosSealedTransactionInput>,
  { ownWorker = false } = {},
): Promise<{
  result: PosTransactionResult;
  calls: CallRecord[];
  seen: PosSealedInitiateRequest[];
  ref: string;
  discarded: string[];
}> {
  const calls: CallRecord[] = [];
  const seen: PosSealedInitiateRequest[] = [];
  const discarded: string[] = [];
  const ref = `t${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const workflowId = `pos-txn-${ref}`;
  const acts = scripted(initiates, requeries, calls, seen, discarded);
  const execute = (taskQueue: string) =>
    env.client.workflow.execute<typeof posTerminalTransactionWorkflow>('posTerminalTransactionWorkflow', {
      workflowId,
      taskQueue,
      args: [sealedCardInput(ref, input)],
    });
  shared.script(workflowId, acts);
  const result = ownWorker ? await runWithWorker(env, acts, 'pos-ts', execute) : await execute(TASK_QUEUE);
  // Leftover script entries mean the flow stopped earlier than the test expected.
  expect({ initiates, requeries }).toEqual({ initiates: [], requeries: [] });
  return { result, calls, seen, ref, discarded };
}

describe('POS terminal transaction: one next step per outcome', () => {
  it('00: approved after one F3 and no requery', async () => {
    const { result, calls } = await run([{ code: '00' }], []);
    expect(result).toMatchObject({
      status: 'approved',
      responseCode: '00',
      attempt: 1,
      action: 'Approved: complete the sale',
    });
    expect(calls.map((c) => c.op)).toEqual(['initiate']);
  });

  it('51: declined with "ask for another card"; nothing else is sent', async () => {
    const { result, calls } = await run([{ code: '51' }], []);
    expect(result).toMatchObject({
      status: 'declined',
      responseCode: '51',
      action: 'Insufficient funds: ask for another card',
    });
    expect(calls).toHaveLength(1);
  });

  it('55: declined with "retry with a fresh card read"; nothing else is sent', async () => {
    const { result, calls } = await run([{ code: '55' }], []);
    expect(result).toMatchObject({
      status: 'declined',
      responseCode: '55',
      action: 'Incorrect PIN: retry with a fresh card read',
    });
    expect(calls).toHaveLength(1);
  });

  it('another processor code: declined with the processor message', async () => {
    const { result } = await run([{ code: '05' }], []);
    expect(result).toMatchObject({ status: 'declined', responseCode: '05' });
    expect(result.action).toMatch(/05/);
  });

  it('91: requery; the found transaction is the outcome and F3 is not sent again', async () => {
    const { result, calls } = await run([{ code: '91' }], [{ code: '00' }]);
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', attempt: 1 });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('96: requery finds it still failed with 96 → declined (service has it), never resent', async () => {
    const { result, calls } = await run([{ code: '96' }], [{ code: '96' }]);
    expect(result).toMatchObject({ status: 'declined', responseCode: '96', attempt: 1 });
    expect(result.action).toMatch(/System malfunction.*confirmed by requery/);
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('96 then F4 404: a retry with the same merchant_ref and the same request', async () => {
    const { result, calls, seen } = await run([{ code: '96' }, { code: '00' }], ['not_found']);
    expect(result).toMatchObject({ status: 'approved', attempt: 2 });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery', 'initiate']);
    expect(seen[1]).toEqual(seen[0]);
    assertNoRetryWithoutRequery(calls);
  });

  it('timeout (outcome unknown): requery finds the sale → that is the outcome, one F3', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.OutcomeUnknown }], [{ code: '00' }]);
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    expect(result.steps).toEqual([
      { op: 'initiate', attempt: 1, outcome: 'unknown', detail: 'OutcomeUnknown' },
      { op: 'requery', attempt: 1, outcome: 'found', response_code: '00' },
    ]);
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('lost connection then 404: retried once with backoff, approved', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.OutcomeUnknown }, { code: '00' }], ['not_found']);
    expect(result).toMatchObject({ status: 'approved', attempt: 2 });
    assertNoRetryWithoutRequery(calls);
  });

  it('each resend waits its doubling backoff after the 404, and the first send waits for nothing', async () => {
    const { result, ref } = await run(
      [{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.OutcomeUnknown }, { code: '00' }],
      ['not_found', 'not_found'],
      { options: { retryBackoff: '7s', requerySettleDelay: '1s', maxAttempts: 3 } },
    );
    expect(result).toMatchObject({ status: 'approved', attempt: 3 });
    const history = await env.client.workflow.getHandle(`pos-txn-${ref}`).fetchHistory();
    const timers = (history.events ?? []).flatMap((e) => {
      const t = e.timerStartedEventAttributes?.startToFireTimeout;
      return t ? [Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6)] : [];
    });
    // The settle pause before each F4, then the backoff before each resend: 7 s, then 14 s.
    expect(timers).toEqual([1_000, 7_000, 1_000, 14_000]);
  });

  it('a lost answer that F4 finds declined: the decline and its words, as if F3 had answered', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.OutcomeUnknown }], [{ code: '51' }]);
    expect(result).toMatchObject({
      status: 'declined',
      responseCode: '51',
      action: 'Insufficient funds: ask for another card',
    });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('404 every time: bounded by maxAttempts, ends not_received', async () => {
    const { result, calls } = await run(
      [
        { fail: FailureTypes.OutcomeUnknown },
        { fail: FailureTypes.OutcomeUnknown },
        { fail: FailureTypes.OutcomeUnknown },
      ],
      ['not_found', 'not_found', 'not_found'],
    );
    expect(result).toMatchObject({ status: 'not_received', attempt: 3 });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery', 'initiate', 'requery', 'initiate', 'requery']);
    assertNoRetryWithoutRequery(calls);
  });

  it('maxAttempts 1: a 404 ends not_received without a retry', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.OutcomeUnknown }], ['not_found'], {
      options: { maxAttempts: 1 },
    });
    expect(result.status).toBe('not_received');
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('requery cannot answer: parked as outcome_unknown, F3 never sent again; a later F4 answer ends it with the real outcome', async () => {
    const { result, calls } = await run(
      [{ fail: FailureTypes.OutcomeUnknown }],
      [{ fail: FailureTypes.Unauthorized }, { fail: FailureTypes.Unauthorized }, { code: '00' }],
    );
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery', 'requery', 'requery']);
  });

  it('refused by the service (400): rejected, no requery, no retry', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.BadRequest }], []);
    expect(result).toMatchObject({ status: 'rejected', attempt: 1 });
    // Recorded as refused, not as a send whose outcome is unknown.
    expect(result.steps).toEqual([
      { op: 'initiate', attempt: 1, outcome: 'rejected', detail: FailureTypes.BadRequest },
    ]);
    expect(calls.map((c) => c.op)).toEqual(['initiate']);
  });

  it('96 answered, F4 404 and no attempt left: not_received (an answer is not a refusal)', async () => {
    const { result } = await run([{ code: '96' }], ['not_found'], { options: { maxAttempts: 1 } });
    expect(result).toMatchObject({ status: 'not_received', attempt: 1 });
    expect(result.action).toMatch(/the requery answered 404 after 1 attempt/);
  });

  it.each([
    ['91', 'the send was answered 91: Issuer or switch unavailable'],
    ['', 'the send was answered without a code: No response code: requery by merchant_ref'],
  ])('F3 answered "%s", F4 could not answer, then 404: not_received naming the answer', async (code, words) => {
    const { result } = await run([{ code }], [{ fail: FailureTypes.Unauthorized }, 'not_found']);
    expect(result).toMatchObject({ status: 'not_received', attempt: 1 });
    expect(result.action).toContain(`the requery answered 404 while the outcome was unknown: ${words}`);
  });

  it('a send that fails without a type is recorded as Unknown, then requeried', async () => {
    const { result } = await run([{ untyped: true }], [{ code: '00' }]);
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    expect(result.steps[0]).toEqual({ op: 'initiate', attempt: 1, outcome: 'unknown', detail: 'Unknown' });
  });

  it('a retry refused (e.g. duplicate merchant_ref) is requeried once: found → that outcome, never sent a third time', async () => {
    const { result, calls } = await run(
      [{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.BadRequest }],
      ['not_found', { code: '00' }],
    );
    expect(result).toMatchObject({ status: 'approved', attempt: 2 });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery', 'initiate', 'requery']);
  });

  it('a retry refused and still not found: rejected', async () => {
    const { result } = await run(
      [{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.BadRequest }],
      ['not_found', 'not_found'],
      { options: { maxAttempts: 2 } },
    );
    expect(result).toMatchObject({ status: 'rejected', attempt: 2 });
  });

  it('a workflow-side failure of the activity (not typed) is treated as unknown → requery', async () => {
    const { result, calls } = await run([{ fail: 'SomethingElse' }], [{ code: '51' }]);
    expect(result).toMatchObject({ status: 'declined', responseCode: '51' });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('random outcome scripts never send F3 twice without a 404 requery in between', async () => {
    // A small seeded generator: 24 scenarios over every initiate/requery outcome.
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return (seed >>> 12) % n;
    };
    const initiateOptions: InitiateScript[] = [
      { code: '00' },
      { code: '51' },
      { code: '55' },
      { code: '91' },
      { code: '96' },
      { fail: FailureTypes.OutcomeUnknown },
      { fail: FailureTypes.Transient },
      { fail: FailureTypes.BadRequest },
    ];
    const requeryOptions: RequeryScript[] = [
      'not_found',
      'not_found',
      { code: '00' },
      { code: '91' },
      { fail: FailureTypes.Unauthorized },
    ];
    const all: CallRecord[] = [];
    for (let i = 0; i < 24; i++) {
      const initiates = Array.from({ length: 3 }, () => initiateOptions[rnd(initiateOptions.length)]);
      // The last entry answers a parked (unknown) outcome.
      const requeries = [
        ...Array.from({ length: 3 }, () => requeryOptions[rnd(requeryOptions.length)]),
        { code: '00' },
      ];
      const calls: CallRecord[] = [];
      const ref = `r${i}${randomUUID().slice(0, 8)}`;
      const result = await env.client.workflow.execute<typeof posTerminalTransactionWorkflow>(
        'posTerminalTransactionWorkflow',
        {
          workflowId: shared.script(`pos-txn-${ref}`, scripted([...initiates], [...requeries], calls)),
          taskQueue: TASK_QUEUE,
          args: [sealedCardInput(ref)],
        },
      );
      assertNoRetryWithoutRequery(calls);
      // The workflow's own step record agrees with what the activities saw.
      expect(stepsToCalls(ref, result.steps)).toEqual(calls);
      expect(result.attempt).toBeLessThanOrEqual(3);
      all.push(...calls);
    }
    // The scenarios did exercise retries (otherwise the property above would be vacuous).
    const retried = all.filter(
      (c, i) => c.op === 'initiate' && all[i - 1]?.op === 'requery' && all[i - 1]?.merchantRef === c.merchantRef,
    ).length;
    expect(retried).toBeGreaterThan(3);
  }, 120_000);

  it('the checker itself catches a retry without a 404 requery', () => {
    expect(() =>
      assertNoRetryWithoutRequery([
        { op: 'initiate', merchantRef: 'a' },
        { op: 'initiate', merchantRef: 'a' },
      ]),
    ).toThrow(/not preceded/);
    expect(() =>
      assertNoRetryWithoutRequery([
        { op: 'initiate', merchantRef: 'a' },
        { op: 'requery', merchantRef: 'a', answer: 'found' },
        { op: 'initiate', merchantRef: 'a' },
      ]),
    ).toThrow(/not preceded/);
  });
});

describe('POS terminal transaction: every field rule is checked before anything is sent', () => {
  async function invalidInputOf(input: unknown): Promise<ApplicationFailure> {
    const calls: CallRecord[] = [];
    const err = await env.client.workflow
      .execute('posTerminalTransactionWorkflow', {
        workflowId: shared.script(`pos-txn-bad-${randomUUID()}`, scripted([], [], calls)),
        taskQueue: TASK_QUEUE,
        args: [input],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(calls).toEqual([]); // no activity ran
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('InvalidInput');
    return cause;
  }

  it('fails with InvalidInput naming each broken field, and no activity runs', async () => {
    const bad = sealedCardInput('x'.repeat(26), {
      account_type: '0010',
      amount: 100.5,
      transaction_type: 'Sale',
      card: { handle: 'not-a-handle', bin: '539983', last4: '12345' },
    });
    const cause = await invalidInputOf(bad);
    for (const field of ['merchant_ref', 'account_type', 'amount', 'transaction_type', 'card.handle', 'card.last4']) {
      expect(cause.message).toContain(field);
    }
    // Rules are named, values are not.
    expect(cause.message).not.toContain('12345');
    expect(cause.message).not.toContain('not-a-handle');
  });

  it('a card read in clear is refused by field name (the starter seals it); no value is echoed', async () => {
    const raw = cardInput('RAW-1', { pin_block: '0123456789ABCDEF' });
    const cause = await invalidInputOf(raw);
    for (const field of [
      'card_pan',
      'card_expiry_month',
      'card_expiry_year',
      'card_sequence_number',
      'track2',
      'chipdata',
      'pin_block',
      'cardholder_name',
    ]) {
      expect(cause.message).toContain(`${field} must not be in the workflow input`);
    }
    for (const value of [raw.card_pan, raw.track2, raw.chipdata, raw.pin_block!])
      expect(cause.message).not.toContain(value);
  });

  it('the shared rules agree with the API client on every F3 field', () => {
    const good = cardInput('REF-1');
    const cases: Partial<PosTransactionInput>[] = [
      {},
      { card_sequence_number: '1' },
      { card_sequence_number: '0001' },
      { card_sequence_number: 'abc' },
      { pin_block: '0123456789ABCDE' },
      { pin_block: 'G123456789ABCDEF' },
      { pin_block: undefined },
      { merchant_ref: 'x'.repeat(25) },
      { merchant_ref: 'x'.repeat(26) },
      { merchant_ref: '' },
      { account_type: 'savings' },
      { account_type: '0000' },
      { account_type: 'CHEQUE' },
      { transaction_type: 'refund' },
      { transaction_type: 'Sale' },
      { amount: '150000' },
      { amount: 0 },
      { amount: 1.5 },
      { amount: '1.5' },
      { card_pan: '123' },
      { card_expiry_month: '00' },
      { card_expiry_year: '2029' },
      { track2: 'xyz' },
      { chipdata: 'ABC' },
      { aid: 'zz' },
      { currency: 'EUR' as 'NGN' },
      // Refund and Completion name their original (original_merchant_ref); Purchase and Pre-Authorization never do.
      { transaction_type: 'Refund', original_merchant_ref: 'SALE-1' } as Partial<PosTransactionInput>,
      { transaction_type: 'Completion', original_merchant_ref: 'PRE-1' } as Partial<PosTransactionInput>,
      { transaction_type: 'Completion' },
      { transaction_type: 'Pre-Authorization' },
      { transaction_type: 'Pre-Authorization', original_merchant_ref: 'PRE-1' } as Partial<PosTransactionInput>,
      { original_merchant_ref: 'SALE-1' } as Partial<PosTransactionInput>,
      { transaction_type: 'Refund', original_merchant_ref: 'REF-1' } as Partial<PosTransactionInput>,
      { transaction_type: 'Refund', original_merchant_ref: 'x'.repeat(26) } as Partial<PosTransactionInput>,
    ];
    for (const c of cases) {
      const input = { ...good, ...c };
      const ours = PosTransactionRequestSchema.safeParse(input).success;
      const client = PosTerminalInitiateRequestSchema.safeParse(input).success;
      expect({ case: c, ours }).toEqual({ case: c, ours: client });
    }
  });

  it("the shared response-code classification equals the API client's", () => {
    for (const code of ['00', '51', '55', '91', '96', '', '05', '12', 'Z1']) {
      const a = classifyPosCode(code, 'msg');
      const b = classifyPosResponseCode(code, 'msg');
      expect({ code, outcome: a.outcome, action: a.action }).toEqual({ code, outcome: b.outcome, action: b.action });
    }
  });
});

describe('POS terminal transaction: the sealed card read', () => {
  it('the workflow input and F3 activity carry only the handle and BIN/last four; the state shows the masked PAN', async () => {
    const { result, seen } = await run([{ code: '00' }], []);
    expect(seen[0].card).toEqual({ handle: `cc_${'A'.repeat(22)}`, bin: '539983', last4: '0008' });
    expect(Object.keys(seen[0])).not.toEqual(expect.arrayContaining(['card_pan']));
    expect(result.card).toEqual({ maskedPan: '539983******0008' });
  });

  it('expired before the first F3: card_data_unavailable, nothing sent, nothing to requery', async () => {
    const { result, calls, discarded } = await run([{ fail: SECRET_UNAVAILABLE }], []);
    expect(result).toMatchObject({ status: 'card_data_unavailable', attempt: 0, steps: [] });
    expect(result.action).toMatch(/nothing was sent and nothing was charged.*fresh card read/);
    expect(calls).toEqual([]);
    expect(discarded).toEqual([]);
  });

  it('expired before the retry a 404 allowed: card_data_unavailable after one attempt (never received), no further F3', async () => {
    const { result, calls } = await run(
      [{ fail: FailureTypes.OutcomeUnknown }, { fail: SECRET_UNAVAILABLE }],
      ['not_found'],
    );
    expect(result).toMatchObject({ status: 'card_data_unavailable', attempt: 1 });
    expect(result.action).toMatch(/never received attempt 1.*nothing was charged/);
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('a final answer leaves nothing to discard; a 96 settled by requery discards the card read the F3 activity kept', async () => {
    expect((await run([{ code: '00' }], [])).discarded).toEqual([]);
    expect((await run([{ code: '51' }], [])).discarded).toEqual([]);
    expect((await run([{ code: '96' }], [{ code: '00' }])).discarded).toEqual([`cc_${'A'.repeat(22)}`]);
    expect(
      (await run([{ fail: FailureTypes.OutcomeUnknown }], [{ fail: FailureTypes.Unauthorized }, 'not_found']))
        .discarded,
    ).toHaveLength(1);
    expect((await run([{ fail: FailureTypes.BadRequest }], [])).discarded).toEqual([]);
  });
});

describe('POS terminal transaction: unknown outcomes are actionable', () => {
  it('a worker lost mid-F3 is noticed by the heartbeat timeout and F4 is asked at once, never a second F3', async () => {
    const { result, calls } = await run([{ hang: true }], [{ code: '00' }], undefined, { ownWorker: true });
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    expect(result.steps[0]).toMatchObject({ op: 'initiate', outcome: 'unknown', detail: 'HeartbeatTimeout' });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  }, 60_000);

  it('an F3 alive (heartbeating) but unanswered past its start-to-close is recorded as ActivityTimeout; F4 is asked, never a second F3', async () => {
    // The shortest HTTP deadline (100 ms): the attempt's start-to-close is 15.1 s, waited in real time.
    const { result, calls } = await run(
      [{ unanswered: true }],
      [{ code: '00' }],
      { options: { initiateTimeoutMs: 100 } },
      { ownWorker: true },
    );
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    expect(result.steps[0]).toEqual({ op: 'initiate', attempt: 1, outcome: 'unknown', detail: 'ActivityTimeout' });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  }, 60_000);

  it('after a lost heartbeat and F4 404, F3 is sent again only once the lost call can no longer be in flight', async () => {
    const { result, ref } = await run([{ hang: true }, { code: '00' }], ['not_found', 'not_found'], undefined, {
      ownWorker: true,
    });
    expect(result).toMatchObject({ status: 'approved', attempt: 2 });
    const events = (await env.client.workflow.getHandle(`pos-txn-${ref}`).fetchHistory()).events ?? [];
    const at = (e: (typeof events)[number]) =>
      Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6);
    const lost = events.find((e) => e.activityTaskTimedOutEventAttributes);
    const sends = events.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'posTerminalInitiateTransaction',
    );
    expect(lost).toBeDefined();
    expect(sends).toHaveLength(2);
    // The lost call's HTTP deadline (45 s by default) and the in-flight margin (15 s), from when it was lost.
    expect(at(sends[1]!) - at(lost!)).toBeGreaterThanOrEqual(45_000 + 15_000);
  }, 60_000);

  it('a read that times out is recorded as Unknown, and the sale is parked until F4 answers', async () => {
    const { result } = await run(
      [{ fail: FailureTypes.OutcomeUnknown }],
      [{ hang: true }, { code: '00' }],
      { options: { requeryTimeout: '2s' } },
      { ownWorker: true },
    );
    expect(result).toMatchObject({ status: 'approved', attempt: 1 });
    expect(result.steps[1]).toEqual({ op: 'requery', attempt: 1, outcome: 'error', detail: 'Unknown' });
  }, 60_000);

  async function start(
    initiates: InitiateScript[],
    requeries: RequeryScript[],
    input?: Partial<PosSealedTransactionInput>,
  ) {
    const calls: CallRecord[] = [];
    const discarded: string[] = [];
    const ref = `u${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    const handle = await env.client.workflow.start<typeof posTerminalTransactionWorkflow>(
      'posTerminalTransactionWorkflow',
      {
        workflowId: shared.script(`pos-txn-${ref}`, scripted(initiates, requeries, calls, [], discarded)),
        taskQueue: TASK_QUEUE,
        args: [sealedCardInput(ref, input)],
      },
    );
    const done = () => handle.result();
    const waitFor = async (status: string) => {
      // Each read after a second of the server's clock (skipped, not waited: the 3 s settle delay
      // before a requery would otherwise pass in real time, as nothing awaits the result).
      const state = await eventually(
        () => handle.query(posTransactionStateQuery),
        (s) => s.status === status,
        {
          timeoutMs: 30_000,
          pause: () => env.sleep(1_000),
          description: `status ${status}`,
          returnLastOnTimeout: true,
        },
      );
      expect(state.status).toBe(status);
      return state;
    };
    return { handle, calls, discarded, done, waitFor };
  }
  const unavailable = (n: number): RequeryScript[] =>
    Array.from({ length: n }, () => ({ fail: FailureTypes.Unauthorized }));

  it('parked as outcome_unknown (PaymentStatus), requeried on a backoff; resolveOutcome records operator and reason and ends the sale', async () => {
    const { handle, calls, discarded, done } = await start([{ fail: FailureTypes.OutcomeUnknown }], unavailable(40), {
      options: { unknownRequeryFor: '5 minutes', requeryBackoff: '30s', requeryMaxBackoff: '1 minute' },
    });
    await env.sleep(10 * 60_000);
    const parked = await handle.query(posTransactionStateQuery);
    expect(parked.status).toBe('outcome_unknown');
    expect((await handle.describe()).searchAttributes.PaymentStatus).toEqual(['outcome_unknown']);
    expect(parked.steps.filter((s) => s.op === 'requery').length).toBeGreaterThan(3);
    await expectResolution(
      handle,
      [
        [{ outcome: 'vended', reason: 'x', operator: 'ops-1' }, /approved, declined, not_received/],
        [{ outcome: 'approved', reason: ' ', operator: 'ops-1' }, /reason is required/],
      ],
      { outcome: 'approved', reason: 'acquirer settlement file, rrn 123', operator: 'ops-bola' },
    );
    const result = await done();
    expect(result).toMatchObject({ status: 'approved', resolution: { outcome: 'approved', operator: 'ops-bola' } });
    expect(result.action).toMatch(/Resolved by ops-bola/);
    expect(result.steps.at(-1)).toMatchObject({ op: 'resolve', outcome: 'approved' });
    expect(calls.filter((c) => c.op === 'initiate')).toHaveLength(1);
    expect(discarded).toHaveLength(1); // the kept card read is discarded when the sale ends
    expect((await handle.describe()).searchAttributes.PaymentStatus).toEqual(['approved']);
  });

  it('resolveOutcome is refused while the sale is not parked', async () => {
    const { handle, done, waitFor } = await start([{ fail: FailureTypes.OutcomeUnknown }], ['not_found'], {
      options: { retryBackoff: '1 hour' },
    });
    await waitFor('retry_wait');
    expect(await refusedResolution(handle, { outcome: 'declined', reason: 'x', operator: 'ops-1' })).toMatch(
      /only while the flow is parked/,
    );
    await handle.cancel();
    await done().catch(() => undefined);
  });

  it('cancelled while parked: the cleanup asks F4 and records the real outcome (cancelRequested), never "cancelled"', async () => {
    const { handle, calls, done, waitFor } = await start(
      [{ fail: FailureTypes.OutcomeUnknown }],
      [{ fail: FailureTypes.Unauthorized }, { code: '51' }],
      { options: { requeryBackoff: '1 hour' } },
    );
    await waitFor('outcome_unknown');
    await handle.cancel();
    const result = await done();
    expect(result).toMatchObject({ status: 'declined', responseCode: '51', cancelRequested: true });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery', 'requery']);
  });

  it('cancelled while parked and F4 still cannot answer: outcome_unknown with cancelRequested', async () => {
    const { handle, done, waitFor } = await start([{ fail: FailureTypes.OutcomeUnknown }], unavailable(5), {
      options: { requeryBackoff: '1 hour' },
    });
    await waitFor('outcome_unknown');
    await handle.cancel();
    const result = await done();
    expect(result).toMatchObject({ status: 'outcome_unknown', cancelRequested: true });
    expect(result.action).toMatch(/NOT sent again/);
  });
});
