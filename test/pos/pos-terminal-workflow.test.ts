// The POS terminal transaction workflow's decisions on the time-skipping server, with scripted
// activities that record every call: each outcome has one next step, and no F3 is ever sent a
// second time unless the F4 just before it answered 404. Backoffs and settle delays are skipped.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { PosActivities } from '../../src/activities/pos';
import { classifyPosResponseCode, PosTerminalInitiateRequestSchema } from '../../src/api';
import {
  FailureTypes,
  PosTransactionInputSchema,
  classifyPosCode,
  type PosInitiateRequest,
  type PosRequeryOutcome,
  type PosTransactionInput,
  type PosTransactionRecord,
  type PosTransactionResult,
} from '../../src/shared/pos';
import type { posTerminalTransactionWorkflow } from '../../src/workflows/pos-terminal';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { LogCapture, workflowBundle } from '../helpers/temporal';
import { createTimeSkippingEnv } from '../helpers/time-skipping';
import { assertNoRetryWithoutRequery, cardInput, stepsToCalls, type CallRecord } from './helpers';

installTemporalRuntime(createLogger({ destination: new LogCapture(), level: 'warn' }), 'WARN');

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
}, 120_000);
afterAll(() => env?.teardown());

type InitiateScript = { code: string } | { fail: string };
type RequeryScript = { code: string } | 'not_found' | { fail: string };

const txn = (ref: string, code: string): PosTransactionRecord => ({
  status: code === '00' ? 'success' : 'failed',
  response_code: code,
  amount: 150000,
  merchant_ref: ref,
  card_pan_masked: '539983******0008',
});

/** Activities that follow a script and record every call in order. */
function scripted(initiates: InitiateScript[], requeries: RequeryScript[], calls: CallRecord[], seen: PosInitiateRequest[] = []) {
  const acts: Pick<PosActivities, 'posTerminalInitiateTransaction' | 'posTerminalRequeryTransaction'> = {
    async posTerminalInitiateTransaction(req) {
      calls.push({ op: 'initiate', merchantRef: req.merchant_ref });
      seen.push(req);
      const s = initiates.shift();
      if (!s) throw new Error('unscripted initiate');
      if ('fail' in s) throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
      return { transaction: txn(req.merchant_ref, s.code) };
    },
    async posTerminalRequeryTransaction(req): Promise<PosRequeryOutcome> {
      const s = requeries.shift();
      if (!s) throw new Error('unscripted requery');
      if (s === 'not_found') {
        calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'not_found' });
        return { found: false };
      }
      if ('fail' in s) {
        calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'error' });
        throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
      }
      calls.push({ op: 'requery', merchantRef: req.merchant_ref, answer: 'found' });
      return { found: true, transaction: txn(req.merchant_ref, s.code) };
    },
  };
  return acts;
}

async function run(
  initiates: InitiateScript[],
  requeries: RequeryScript[],
  input?: Partial<PosTransactionInput>,
): Promise<{ result: PosTransactionResult; calls: CallRecord[]; seen: PosInitiateRequest[]; ref: string }> {
  const calls: CallRecord[] = [];
  const seen: PosInitiateRequest[] = [];
  const ref = `t${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const taskQueue = `pos-ts-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: scripted(initiates, requeries, calls, seen),
  });
  const result = await worker.runUntil(
    env.client.workflow.execute<typeof posTerminalTransactionWorkflow>('posTerminalTransactionWorkflow', {
      workflowId: `pos-txn-${ref}`,
      taskQueue,
      args: [cardInput(ref, input)],
    }),
  );
  // Leftover script entries mean the flow stopped earlier than the test expected.
  expect({ initiates, requeries }).toEqual({ initiates: [], requeries: [] });
  return { result, calls, seen, ref };
}

describe('POS terminal transaction: one next step per outcome', () => {
  it('00: approved after one F3 and no requery', async () => {
    const { result, calls } = await run([{ code: '00' }], []);
    expect(result).toMatchObject({ status: 'approved', responseCode: '00', attempt: 1, action: 'Approved: complete the sale' });
    expect(calls.map((c) => c.op)).toEqual(['initiate']);
  });

  it('51: declined with "ask for another card"; nothing else is sent', async () => {
    const { result, calls } = await run([{ code: '51' }], []);
    expect(result).toMatchObject({ status: 'declined', responseCode: '51', action: 'Insufficient funds: ask for another card' });
    expect(calls).toHaveLength(1);
  });

  it('55: declined with "retry with a fresh card read"; nothing else is sent', async () => {
    const { result, calls } = await run([{ code: '55' }], []);
    expect(result).toMatchObject({ status: 'declined', responseCode: '55', action: 'Incorrect PIN: retry with a fresh card read' });
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

  it('404 every time: bounded by maxAttempts, ends not_received', async () => {
    const { result, calls } = await run(
      [{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.OutcomeUnknown }],
      ['not_found', 'not_found', 'not_found'],
    );
    expect(result).toMatchObject({ status: 'not_received', attempt: 3 });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery', 'initiate', 'requery', 'initiate', 'requery']);
    assertNoRetryWithoutRequery(calls);
  });

  it('maxAttempts 1: a 404 ends not_received without a retry', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.OutcomeUnknown }], ['not_found'], { options: { maxAttempts: 1 } });
    expect(result.status).toBe('not_received');
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('requery cannot answer: outcome_unknown and F3 is never sent again', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.OutcomeUnknown }], [{ fail: FailureTypes.Unauthorized }]);
    expect(result).toMatchObject({ status: 'outcome_unknown', attempt: 1 });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery']);
  });

  it('refused by the service (400): rejected, no requery, no retry', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.BadRequest }], []);
    expect(result).toMatchObject({ status: 'rejected', attempt: 1 });
    expect(calls.map((c) => c.op)).toEqual(['initiate']);
  });

  it('a retry refused (e.g. duplicate merchant_ref) is requeried once: found → that outcome, never sent a third time', async () => {
    const { result, calls } = await run([{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.BadRequest }], ['not_found', { code: '00' }]);
    expect(result).toMatchObject({ status: 'approved', attempt: 2 });
    expect(calls.map((c) => c.op)).toEqual(['initiate', 'requery', 'initiate', 'requery']);
  });

  it('a retry refused and still not found: rejected', async () => {
    const { result } = await run([{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.BadRequest }], ['not_found', 'not_found']);
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
    const initiateOptions: InitiateScript[] = [{ code: '00' }, { code: '51' }, { code: '55' }, { code: '91' }, { code: '96' }, { fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.Transient }, { fail: FailureTypes.BadRequest }];
    const requeryOptions: RequeryScript[] = ['not_found', 'not_found', { code: '00' }, { code: '91' }, { fail: FailureTypes.Unauthorized }];
    const all: CallRecord[] = [];
    for (let i = 0; i < 24; i++) {
      const initiates = Array.from({ length: 3 }, () => initiateOptions[rnd(initiateOptions.length)]);
      const requeries = Array.from({ length: 3 }, () => requeryOptions[rnd(requeryOptions.length)]);
      const calls: CallRecord[] = [];
      const ref = `r${i}${randomUUID().slice(0, 8)}`;
      const taskQueue = `pos-rnd-${randomUUID()}`;
      const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: scripted([...initiates], [...requeries], calls) });
      const result = await worker.runUntil(
        env.client.workflow.execute<typeof posTerminalTransactionWorkflow>('posTerminalTransactionWorkflow', { workflowId: `pos-txn-${ref}`, taskQueue, args: [cardInput(ref)] }),
      );
      assertNoRetryWithoutRequery(calls);
      // The workflow's own step record agrees with what the activities saw.
      expect(stepsToCalls(ref, result.steps)).toEqual(calls);
      expect(result.attempt).toBeLessThanOrEqual(3);
      all.push(...calls);
    }
    // The scenarios did exercise retries (otherwise the property above would be vacuous).
    const retried = all.filter((c, i) => c.op === 'initiate' && all[i - 1]?.op === 'requery' && all[i - 1]?.merchantRef === c.merchantRef).length;
    expect(retried).toBeGreaterThan(3);
  }, 120_000);

  it('the checker itself catches a retry without a 404 requery', () => {
    expect(() => assertNoRetryWithoutRequery([{ op: 'initiate', merchantRef: 'a' }, { op: 'initiate', merchantRef: 'a' }])).toThrow(/not preceded/);
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
  it('fails with InvalidInput naming each broken field, and no activity runs', async () => {
    const calls: CallRecord[] = [];
    const taskQueue = `pos-val-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: scripted([], [], calls) });
    const bad = cardInput('x'.repeat(26), {
      card_sequence_number: '01',
      pin_block: '12345',
      account_type: '0010',
      amount: 100.5,
      card_expiry_month: '13',
      transaction_type: 'Sale',
    });
    const err = await worker
      .runUntil(env.client.workflow.execute<typeof posTerminalTransactionWorkflow>('posTerminalTransactionWorkflow', { workflowId: `pos-txn-bad-${randomUUID()}`, taskQueue, args: [bad] }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('InvalidInput');
    for (const field of ['merchant_ref', 'card_sequence_number', 'pin_block', 'account_type', 'amount', 'card_expiry_month', 'transaction_type']) {
      expect(cause.message).toContain(field);
    }
    // Rules are named, values are not.
    expect(cause.message).not.toContain('12345');
    expect(calls).toEqual([]);
  });

  it('the shared rules agree with the API client on every F3 field', () => {
    const good = cardInput('REF-1');
    const cases: Partial<PosTransactionInput>[] = [
      {},
      { card_sequence_number: '1' }, { card_sequence_number: '0001' }, { card_sequence_number: 'abc' },
      { pin_block: '0123456789ABCDE' }, { pin_block: 'G123456789ABCDEF' }, { pin_block: undefined },
      { merchant_ref: 'x'.repeat(25) }, { merchant_ref: 'x'.repeat(26) }, { merchant_ref: '' },
      { account_type: 'savings' }, { account_type: '0000' }, { account_type: 'CHEQUE' },
      { transaction_type: 'refund' }, { transaction_type: 'Sale' },
      { amount: '150000' }, { amount: 0 }, { amount: 1.5 }, { amount: '1.5' },
      { card_pan: '123' }, { card_expiry_month: '00' }, { card_expiry_year: '2029' },
      { track2: 'xyz' }, { chipdata: 'ABC' }, { aid: 'zz' }, { currency: 'EUR' as 'NGN' },
    ];
    for (const c of cases) {
      const input = { ...good, ...c };
      const ours = PosTransactionInputSchema.safeParse(input).success;
      const client = PosTerminalInitiateRequestSchema.safeParse(input).success;
      expect({ case: c, ours }).toEqual({ case: c, ours: client });
    }
  });

  it('the shared response-code classification equals the API client\'s', () => {
    for (const code of ['00', '51', '55', '91', '96', '', '05', '12', 'Z1']) {
      const a = classifyPosCode(code, 'msg');
      const b = classifyPosResponseCode(code, 'msg');
      expect({ code, outcome: a.outcome, action: a.action }).toEqual({ code, outcome: b.outcome, action: b.action });
    }
  });
});
