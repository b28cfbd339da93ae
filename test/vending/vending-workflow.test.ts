// The vending workflow's decisions on the time-skipping server with scripted activities:
// provider check, minimum_vend, one purchase per reference, H4 before any new attempt.
// Also the provider cache of the real activities (with a counting fake client).
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createVendingActivities, type VendingActivities } from '../../src/activities/vending';
import type { ActivityDeps } from '../../src/activities';
import { createLogger } from '../../src/logging/logger';
import {
  VEND_PROVIDER_LIST_STEP,
  vendStateQuery,
  type ListedMeterLookup,
  type MeterInfo,
  type VendCheckOutcome,
  type VendInput,
  type VendRecord,
  type VendResult,
} from '../../src/shared/vending';
import { expectResolution, refusedResolution } from '../support/outcome';
import type { vendElectricityWorkflow } from '../../src/workflows/vending';
import { LogCapture, testConfig } from '../support/stack';
import { hangUntilWorkerShutdown, runWithWorker, useTimeSkippingEnv } from '../support/time-skipping';
import { activitiesByWorkflow } from '../support/activities-by-workflow';
import { unusedClaimCheck } from '../pos/helpers';
import { FailureTypes } from '../../src/shared/failures';
import { eventually } from '../support/polling';
import type { MerchantEventDeliveryActivities } from '../../src/activities/merchant-event-delivery';
import type { MerchantEvent } from '../../src/notify';
import { IN_FLIGHT_MARGIN_MS, MONEY_ACTIVITY_HEARTBEAT_TIMEOUT_MS } from '../../src/shared/activity-timeouts';

type ScriptedActivities = Pick<
  VendingActivities,
  'vendListProviders' | 'vendLookupMeter' | 'vendLookupListedMeter' | 'vendPurchase' | 'vendFindByReference'
> &
  Pick<MerchantEventDeliveryActivities, 'emitMerchantEvent'>;
// One worker for the file; each sale's activities follow the script registered under its workflow id.
const byFlow = activitiesByWorkflow<ScriptedActivities>([
  'vendListProviders',
  'vendLookupMeter',
  'vendLookupListedMeter',
  'vendPurchase',
  'vendFindByReference',
  'emitMerchantEvent',
]);
const TASK_QUEUE = `vend-ts-${randomUUID()}`;
const env = useTimeSkippingEnv({
  quietRuntime: true,
  worker: { taskQueue: TASK_QUEUE, activities: () => byFlow.activities },
});

/** What the sale asked of the scripted service, and when on the time-skipping server's clock (`at`). */
type Call = (
  | { op: 'providers' }
  | { op: 'lookup' }
  | { op: 'purchase'; reference: string }
  | { op: 'check'; reference: string; answer: 'found' | 'not_found' | 'error' }
) & { at?: number };
type PurchaseScript = 'ok' | 'failed' | 'pending' | { fail: string } | 'hang';
type CheckScript = 'found' | 'not_found' | 'pending' | 'failed' | { fail: string } | 'hang';

const vend = (reference: string, status = 'success'): VendRecord => ({
  reference,
  status,
  amount: '5000.00',
  ...(status === 'success' ? { token: '1234-5678-9012-3456-7890' } : {}),
});

function scripted(
  opts: {
    purchases: PurchaseScript[];
    checks: CheckScript[];
    minimumVend?: number;
    providers?: string[];
    /** H1 or H2 fails (after Temporal's retries), as the real activities report it. */
    failing?: 'providers' | 'lookup' | 'lookup-once-transient';
    /** Where the merchant events the sale hands to its delivery are kept (with `notify` in the input). */
    events?: MerchantEvent[];
  },
  calls: Call[],
) {
  let lookups = 0;
  const acts: ScriptedActivities = {
    async vendListProviders() {
      calls.push({ op: 'providers' });
      if (opts.failing === 'providers')
        throw ApplicationFailure.create({
          type: 'ServiceError',
          message: `${VEND_PROVIDER_LIST_STEP}: down`,
          nonRetryable: true,
        });
      return (opts.providers ?? ['EKEDC', 'IE']).map((code) => ({ code }));
    },
    // The one-step lookup, as the real activity composes it (H1, then H2 only for a listed provider).
    async vendLookupListedMeter(req): Promise<ListedMeterLookup> {
      if (!(await acts.vendListProviders()).some((p) => p.code.toUpperCase() === req.provider))
        return { listed: false };
      return { listed: true, meter: await acts.vendLookupMeter(req) };
    },
    async vendLookupMeter(): Promise<MeterInfo> {
      calls.push({ op: 'lookup', at: await env.currentTimeMs() });
      if (opts.failing === 'lookup-once-transient' && calls.filter((c) => c.op === 'lookup').length === 1)
        throw ApplicationFailure.create({ type: 'Transient', message: 'H2 meter lookup: 503' });
      if (opts.failing === 'lookup')
        throw ApplicationFailure.create({
          type: 'BadRequest',
          message: 'H2 meter lookup: Invalid meter number',
          nonRetryable: true,
        });
      lookups += 1;
      return {
        reference: `LKP-${lookups}-${randomUUID().slice(0, 6)}`,
        customer_name: 'ADA OBI',
        minimum_vend: opts.minimumVend ?? 1000,
      };
    },
    async vendPurchase(req) {
      calls.push({ op: 'purchase', reference: req.reference, at: await env.currentTimeMs() });
      const s = opts.purchases.shift();
      if (!s) throw new Error('unscripted purchase');
      if (typeof s === 'object')
        throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
      if (s === 'hang') {
        // A worker that stops mid-call: no heartbeat, no answer (until well after the heartbeat timeout).
        await hangUntilWorkerShutdown(15_000);
        throw new Error('the hung call ended');
      }
      return vend(req.reference, s === 'ok' ? 'success' : s);
    },
    async vendFindByReference(req): Promise<VendCheckOutcome> {
      const s = opts.checks.shift();
      if (!s) throw new Error('unscripted check');
      const at = await env.currentTimeMs();
      if (s === 'hang') {
        // A read that never answers: the sale's checkTimeout (its schedule-to-close) ends it.
        calls.push({ op: 'check', reference: req.reference, answer: 'error', at });
        await hangUntilWorkerShutdown(15_000);
        throw new Error('the hung read ended');
      }
      if (typeof s === 'object') {
        calls.push({ op: 'check', reference: req.reference, answer: 'error', at });
        throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
      }
      calls.push({ op: 'check', reference: req.reference, answer: s === 'not_found' ? 'not_found' : 'found', at });
      if (s === 'not_found') return { found: false };
      return { found: true, transaction: vend(req.reference, s === 'found' ? 'success' : s) };
    },
    async emitMerchantEvent({ event }) {
      opts.events?.push(event);
      return 'started';
    },
  };
  return acts;
}

const input = (over: Partial<VendInput> = {}): VendInput => ({
  order_ref: `ord-${randomUUID()}`,
  provider: 'ekedc',
  meter_no: '45067198783',
  meter_type: 'prepaid',
  amount: 5000,
  phone_number: '08012345678',
  email: 'ada@example.com',
  ...over,
});

/**
 * Runs one sale to its result on the file's worker, or with `ownWorker` on a worker of its own that
 * stops when the sale ends (a hung activity then ends with it instead of outliving the test).
 */
async function run(
  opts: Parameters<typeof scripted>[0],
  over: Partial<VendInput> = {},
  { ownWorker = false } = {},
): Promise<{ result: VendResult; calls: Call[] }> {
  const calls: Call[] = [];
  const args = input(over);
  const acts = scripted(opts, calls);
  const execute = (taskQueue: string) =>
    env.client.workflow.execute<typeof vendElectricityWorkflow>('vendElectricityWorkflow', {
      workflowId: byFlow.script(`vend-${args.order_ref}`, acts),
      taskQueue,
      args: [args],
    });
  const result = ownWorker ? await runWithWorker(env, acts, 'vend-ts', execute) : await execute(TASK_QUEUE);
  expect({ purchases: opts.purchases, checks: opts.checks }).toEqual({ purchases: [], checks: [] });
  return { result, calls };
}

/** Every purchase after the first comes right after a "not found" check of the same reference. */
function assertNoResendWithoutCheck(calls: Call[]): void {
  const purchases = calls.filter((c) => c.op === 'purchase') as Extract<Call, { op: 'purchase' }>[];
  expect(new Set(purchases.map((p) => p.reference)).size).toBeLessThanOrEqual(1); // one reference per sale
  calls.forEach((c, i) => {
    if (c.op !== 'purchase' || purchases[0] === c) return;
    const prev = calls[i - 1];
    if (!(prev?.op === 'check' && prev.answer === 'not_found' && prev.reference === c.reference)) {
      throw new Error(`purchase without a preceding not-found check: ${JSON.stringify(calls)}`);
    }
  });
}

describe('an electricity vend, step by step, with scripted activities', () => {
  it('vends: providers, lookup, one purchase, the token', async () => {
    const { result, calls } = await run({ purchases: ['ok'], checks: [] });
    expect(result).toMatchObject({ status: 'vended', token: '1234-5678-9012-3456-7890', attempt: 1 });
    expect(result.reference).toMatch(/^LKP-1-/);
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup', 'purchase']);
  });

  it('an unlisted provider is rejected before the lookup', async () => {
    const { result, calls } = await run({ purchases: [], checks: [], providers: ['IE'] });
    expect(result).toMatchObject({ status: 'rejected' });
    expect(result.message).toMatch(/EKEDC is not in the provider list/);
    expect(calls.map((c) => c.op)).toEqual(['providers']);
  });

  it('a provider list (H1) that cannot be read: rejected, nothing looked up or purchased, H1 named', async () => {
    const { result, calls } = await run({ purchases: [], checks: [], failing: 'providers' });
    expect(result).toMatchObject({ status: 'rejected', attempt: 0 });
    expect(result.message).toBe(
      `the provider list (H1) could not be read: ${VEND_PROVIDER_LIST_STEP}: down; nothing was vended`,
    );
    expect(calls.map((c) => c.op)).toEqual(['providers']);
  });

  it("a meter lookup (H2) that fails: rejected with H2's reason, nothing purchased", async () => {
    const { result, calls } = await run({ purchases: [], checks: [], failing: 'lookup' });
    expect(result).toMatchObject({ status: 'rejected', attempt: 0 });
    expect(result.message).toBe('meter lookup (H2) failed: H2 meter lookup: Invalid meter number; nothing was vended');
    expect(result.steps).toEqual([{ op: 'lookup', outcome: 'rejected', detail: 'BadRequest' }]);
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup']);
  });

  it('a lookup that fails once (a 503) is read again by the local activity; the sale goes on with one purchase', async () => {
    const { result, calls } = await run({ purchases: ['ok'], checks: [], failing: 'lookup-once-transient' });
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup', 'providers', 'lookup', 'purchase']);
  });

  it('an amount below minimum_vend is rejected and nothing is purchased', async () => {
    const { result, calls } = await run({ purchases: [], checks: [], minimumVend: 6000 });
    expect(result).toMatchObject({ status: 'rejected', attempt: 0 });
    expect(result.message).toMatch(/below the meter's minimum_vend 6000/);
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup']);
  });

  it('unknown outcome, found by reference: vended with one purchase', async () => {
    const { result, calls } = await run({ purchases: [{ fail: FailureTypes.OutcomeUnknown }], checks: ['found'] });
    expect(result).toMatchObject({ status: 'vended', attempt: 1, token: '1234-5678-9012-3456-7890' });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  });

  it('unknown outcome, not found: one retry with the same reference', async () => {
    const { result, calls } = await run({
      purchases: [{ fail: FailureTypes.OutcomeUnknown }, 'ok'],
      checks: ['not_found'],
    });
    expect(result).toMatchObject({ status: 'vended', attempt: 2 });
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup', 'purchase', 'check', 'purchase']);
    assertNoResendWithoutCheck(calls);
  });

  it('bounded: two unknowns, two not-founds → not_vended, never a third purchase', async () => {
    const { result, calls } = await run({
      purchases: [{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.OutcomeUnknown }],
      checks: ['not_found', 'not_found'],
    });
    expect(result).toMatchObject({ status: 'not_vended', attempt: 2 });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(2);
    assertNoResendWithoutCheck(calls);
  });

  it('a refused retry (already processed) is checked by reference: found → vended, no third purchase', async () => {
    const { result, calls } = await run({
      purchases: [{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.BadRequest }],
      checks: ['not_found', 'found'],
    });
    expect(result).toMatchObject({ status: 'vended', attempt: 2 });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(2);
  });

  it('a refused purchase (400) is rejected without a check', async () => {
    const { result, calls } = await run({ purchases: [{ fail: FailureTypes.BadRequest }], checks: [] });
    expect(result.status).toBe('rejected');
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup', 'purchase']);
  });

  it('a purchase answered with a non-success status is failed, not resent', async () => {
    const { result, calls } = await run({ purchases: ['failed'], checks: [] });
    expect(result.status).toBe('failed');
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  });

  it('invalid input fails before any activity, naming the fields', async () => {
    const calls: Call[] = [];
    const err = await env.client.workflow
      .execute<typeof vendElectricityWorkflow>('vendElectricityWorkflow', {
        workflowId: byFlow.script(`vend-bad-${randomUUID()}`, scripted({ purchases: [], checks: [] }, calls)),
        taskQueue: TASK_QUEUE,
        args: [input({ amount: 10.5, meter_type: 'smart', email: 'nope', meter_no: '12' })],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('InvalidInput');
    for (const f of ['amount', 'meter_type', 'email', 'meter_no']) expect(cause.message).toContain(f);
    expect(calls).toEqual([]);
  });
});

describe('provider cache (real activities, counting client)', () => {
  function deps(counter: { n: number }, fail = false): ActivityDeps {
    const api = {
      vending: {
        providers: async () => {
          counter.n += 1;
          if (fail) throw new Error('down');
          return {
            data: [
              { code: 'EKEDC', name: 'Eko' },
              { code: 'JED', name: 'Jos' },
            ],
          };
        },
      },
    };
    return {
      api: api as unknown as ActivityDeps['api'],
      logger: createLogger({ destination: new LogCapture() }),
      config: testConfig(),
      claimCheck: unusedClaimCheck,
    };
  }

  it('calls H1 once within the TTL, again after it, and once for concurrent callers', async () => {
    const counter = { n: 0 };
    let now = 1_000_000;
    const acts = createVendingActivities(deps(counter), { providerCacheTtlMs: 60_000, now: () => now });
    const [a, b] = await Promise.all([acts.vendListProviders(), acts.vendListProviders()]);
    expect(a).toEqual([
      { code: 'EKEDC', name: 'Eko' },
      { code: 'JED', name: 'Jos' },
    ]);
    expect(b).toEqual(a);
    await acts.vendListProviders();
    expect(counter.n).toBe(1);
    now += 61_000;
    await acts.vendListProviders();
    expect(counter.n).toBe(2);
  });

  it('the one-step lookup asks H2 only for a listed provider, and a failed H1 names H1', async () => {
    const counter = { n: 0 };
    let lookups = 0;
    const d = deps(counter);
    (d.api as unknown as { vending: Record<string, unknown> }).vending.lookup = async () => {
      lookups += 1;
      return { data: { reference: 'LKP-9', customer_name: 'ADA', minimum_vend: 1000 } };
    };
    const acts = createVendingActivities(d);
    const activity = new MockActivityEnvironment(); // H2 names its request by the activity id
    const req = { meter_no: '45067198783', meter_type: 'prepaid' as const, provider: 'EKEDC' };
    await expect(activity.run(acts.vendLookupListedMeter, { ...req, provider: 'IE' })).resolves.toEqual({
      listed: false,
    });
    expect(lookups).toBe(0);
    await expect(activity.run(acts.vendLookupListedMeter, req)).resolves.toEqual({
      listed: true,
      meter: { reference: 'LKP-9', customer_name: 'ADA', minimum_vend: 1000 },
    });
    expect([lookups, counter.n]).toEqual([1, 1]); // H1 came from the cache the second time
    const failing = createVendingActivities(deps({ n: 0 }, true));
    await expect(activity.run(failing.vendLookupListedMeter, req)).rejects.toThrow(
      new RegExp(`^${VEND_PROVIDER_LIST_STEP}: `),
    );
  });

  it('a failed H1 is not cached', async () => {
    const counter = { n: 0 };
    const acts = createVendingActivities(deps(counter, true));
    await expect(acts.vendListProviders()).rejects.toThrow(/down/);
    await expect(acts.vendListProviders()).rejects.toThrow(/down/);
    expect(counter.n).toBe(2);
  });
});

describe('money safety: status, unknown outcomes, cancellation, heartbeat', () => {
  /** Starts a sale on the file's worker and returns its handle, `done()` (its result) and the calls. */
  async function start(opts: Parameters<typeof scripted>[0], over: Partial<VendInput> = {}) {
    const calls: Call[] = [];
    const args = input(over);
    const handle = await env.client.workflow.start<typeof vendElectricityWorkflow>('vendElectricityWorkflow', {
      workflowId: byFlow.script(`vend-${args.order_ref}`, scripted(opts, calls)),
      taskQueue: TASK_QUEUE,
      args: [args],
    });
    return { handle, calls, done: () => handle.result() };
  }
  /** The reason an Update was refused (the validator's message). */
  const searchStatus = async (handle: WorkflowHandle) => (await handle.describe()).searchAttributes.PaymentStatus?.[0];

  it('a 200 whose body says pending is not a success: H4 until final, vended, one purchase', async () => {
    const { result, calls } = await run({ purchases: ['pending'], checks: ['pending', 'pending', 'found'] });
    expect(result).toMatchObject({ status: 'vended', attempt: 1, token: '1234-5678-9012-3456-7890' });
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup', 'purchase', 'check', 'check', 'check']);
  });

  it('pending, then failed by H4: failed, never re-purchased', async () => {
    const { result, calls } = await run({ purchases: ['pending'], checks: ['failed'] });
    expect(result.status).toBe('failed');
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  });

  it('a lost answer found pending by H4 is requeried until vended, never sent again', async () => {
    const { result, calls } = await run({
      purchases: [{ fail: FailureTypes.OutcomeUnknown }],
      checks: ['pending', 'found'],
    });
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  });

  it('pending past pendingFor parks as outcome_unknown (PaymentStatus) and a later H4 answer ends it with the real outcome', async () => {
    const checks: CheckScript[] = ['pending', 'pending', 'pending', 'pending', 'pending', 'pending', 'found'];
    const { handle, calls, done } = await start(
      { purchases: ['pending'], checks },
      { options: { pendingFor: '1 minute', requeryBackoff: '20s', requeryMaxBackoff: '20s' } },
    );
    await env.sleep(90_000);
    expect((await handle.query(vendStateQuery)).status).toBe('outcome_unknown');
    expect(await searchStatus(handle)).toBe('outcome_unknown');
    const result = await done();
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  });

  it('the check cannot answer: parked as outcome_unknown, never sent again; resolveOutcome records who and why and ends it', async () => {
    // H4 fails for good (non-retryable): the flow keeps asking on its backoff, then waits for the operator.
    const checks: CheckScript[] = Array.from({ length: 40 }, () => ({ fail: FailureTypes.Unauthorized }));
    const { handle, calls, done } = await start(
      { purchases: [{ fail: FailureTypes.OutcomeUnknown }], checks },
      { options: { unknownRequeryFor: '5 minutes', requeryBackoff: '30s', requeryMaxBackoff: '1 minute' } },
    );
    await env.sleep(10 * 60_000);
    const parked = await handle.query(vendStateQuery);
    expect(parked.status).toBe('outcome_unknown');
    expect(await searchStatus(handle)).toBe('outcome_unknown');
    expect(parked.steps.filter((s) => s.op === 'check').length).toBeGreaterThan(3); // requeried on a backoff
    // Refused: an outcome the flow does not have, a missing operator.
    await expectResolution(
      handle,
      [
        [{ outcome: 'approved', reason: 'x', operator: 'ops-1' }, /outcome must be one of vended, failed, not_vended/],
        [{ outcome: 'vended', reason: 'x', operator: '' }, /operator is required/],
      ],
      { outcome: 'not_vended', reason: 'provider report: reference absent', operator: 'ops-ada' },
    );
    const result = await done();
    expect(result).toMatchObject({ status: 'not_vended', resolution: { outcome: 'not_vended', operator: 'ops-ada' } });
    expect(result.message).toMatch(/resolved by ops-ada: provider report/);
    expect(result.steps.at(-1)).toMatchObject({
      op: 'resolve',
      outcome: 'not_vended',
      detail: 'by ops-ada: provider report: reference absent',
    });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
    expect(await searchStatus(handle)).toBe('not_vended');
  });

  it('resolveOutcome is refused while the sale is not parked', async () => {
    const { handle, done } = await start(
      { purchases: ['pending'], checks: ['pending', 'found'] },
      { options: { requeryBackoff: '1 minute' } },
    );
    const pending = await eventually(
      () => handle.query(vendStateQuery),
      (s) => s.status === 'pending',
      { timeoutMs: 30_000, description: 'the vend pending', returnLastOnTimeout: true },
    );
    expect(pending.status).toBe('pending');
    expect(await refusedResolution(handle, { outcome: 'vended', reason: 'x', operator: 'ops-1' })).toMatch(
      /only while the flow is parked/,
    );
    expect((await done()).status).toBe('vended');
  });

  it('cancelled while pending: the cleanup asks H4 and the result is the real outcome, not "cancelled"', async () => {
    const { handle, calls, done } = await start(
      { purchases: ['pending'], checks: ['found'] },
      { options: { requeryBackoff: '1 hour' } },
    );
    const pending = await eventually(
      () => handle.query(vendStateQuery),
      (s) => s.status === 'pending',
      { timeoutMs: 30_000, description: 'the vend pending', returnLastOnTimeout: true },
    );
    expect(pending.status).toBe('pending');
    await handle.cancel();
    const result = await done();
    expect(result).toMatchObject({ status: 'vended', cancelRequested: true, token: '1234-5678-9012-3456-7890' });
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup', 'purchase', 'check']);
  });

  it('cancelled while parked and H4 still cannot answer: outcome_unknown with cancelRequested, never "cancelled"', async () => {
    const checks: CheckScript[] = Array.from({ length: 10 }, () => ({ fail: FailureTypes.Unauthorized }));
    const { handle, done } = await start(
      { purchases: [{ fail: FailureTypes.OutcomeUnknown }], checks },
      { options: { requeryBackoff: '1 hour' } },
    );
    // Each read after a second of the server's clock, skipped (the settle pause before H4 is not waited out).
    const parked = await eventually(
      () => handle.query(vendStateQuery),
      (s) => s.status === 'outcome_unknown',
      {
        timeoutMs: 30_000,
        pause: () => env.sleep(1_000),
        description: 'the vend parked as outcome_unknown',
        returnLastOnTimeout: true,
      },
    );
    expect(parked.status).toBe('outcome_unknown');
    await handle.cancel();
    const result = await done();
    expect(result).toMatchObject({ status: 'outcome_unknown', cancelRequested: true });
    expect(result.message).toMatch(/reconcile reference/);
  });

  it('a worker lost mid-purchase is noticed by the heartbeat timeout and H4 is asked at once', async () => {
    const { result, calls } = await run({ purchases: ['hang'], checks: ['found'] }, {}, { ownWorker: true });
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(result.steps.find((s) => s.op === 'purchase')).toMatchObject({
      outcome: 'unknown',
      detail: 'HeartbeatTimeout',
    });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  }, 60_000);
});

describe('what a sale says and records, its in-flight window and its cancellation', () => {
  const unknown = { fail: FailureTypes.OutcomeUnknown };
  const down = { fail: FailureTypes.Unauthorized }; // H4 fails for good: the check cannot answer
  const ref = (result: VendResult) => result.reference!;

  it.each([
    ['answered Success', { purchases: ['ok'], checks: [] }, () => 'vended'],
    [
      'answered pending, then final by H4',
      { purchases: ['pending'], checks: ['found'] },
      () => 'vended (answered pending); final after requery by reference (H4)',
    ],
    [
      'a lost answer, found Success by H4',
      { purchases: [unknown], checks: ['found'] },
      () => 'vended (found by reference after a lost answer)',
    ],
    [
      'a lost answer, found pending by H4, then final',
      { purchases: [unknown], checks: ['pending', 'found'] },
      () => 'vended (found pending by reference after a lost answer); final after requery by reference (H4)',
    ],
    [
      'refused at once',
      { purchases: [{ fail: FailureTypes.BadRequest }], checks: [] },
      () => 'the purchase was refused: scripted BadRequest; nothing was vended',
    ],
    [
      'a lost answer, not found, and the resend refused, not found again',
      { purchases: [unknown, { fail: FailureTypes.BadRequest }], checks: ['not_found', 'not_found'] },
      () => 'the purchase was refused: scripted BadRequest; nothing was vended',
    ],
    [
      'two lost answers, not found after either',
      { purchases: [unknown, unknown], checks: ['not_found', 'not_found'] },
      () =>
        'the service never received the purchase (not found by reference (H4) after 2 attempt(s)); nothing was vended',
    ],
    [
      'a lost answer H4 cannot check, then found Success',
      { purchases: [unknown], checks: [down, 'found'] },
      () =>
        'vended (the purchase got no answer (scripted OutcomeUnknown) and the requery by reference (H4) could not answer; it is NOT sent again); final after requery by reference (H4)',
    ],
    [
      'a lost answer H4 cannot check, then not found (past the in-flight window)',
      { purchases: [unknown], checks: [down, 'not_found'] },
      (r: VendResult) =>
        `the service does not know reference ${ref(r)} (not found by reference (H4) after the purchase got no answer); nothing was vended`,
    ],
  ] as [string, Parameters<typeof scripted>[0], (r: VendResult) => string][])(
    '%s: the result says exactly what happened',
    async (_name, script, message) => {
      const { result } = await run(script);
      expect(result.message).toBe(message(result));
    },
  );

  it('every H3 and H4 is recorded as a step, with what it answered', async () => {
    const { result } = await run({ purchases: [unknown, 'ok'], checks: ['not_found'] });
    expect(result.steps).toEqual([
      { op: 'lookup', outcome: 'found' },
      { op: 'purchase', attempt: 1, outcome: 'unknown', detail: expect.stringContaining('OutcomeUnknown') },
      { op: 'check', attempt: 1, outcome: 'not_found' },
      { op: 'purchase', attempt: 2, outcome: 'response', detail: 'success' },
    ]);
    const watched = await run({ purchases: [unknown], checks: [down, down, 'pending', 'found'] });
    expect(watched.result.steps.filter((st) => st.op === 'check')).toEqual([
      { op: 'check', attempt: 1, outcome: 'error', detail: FailureTypes.Unauthorized },
      { op: 'check', attempt: 1, outcome: 'error', detail: 'Unavailable' },
      { op: 'check', attempt: 1, outcome: 'found', detail: 'pending' },
      { op: 'check', attempt: 1, outcome: 'found', detail: 'success' },
    ]);
  });

  it("an H4 read still unanswered at the sale's checkTimeout: its step says Unknown (a time-out carries no type), and the sale is watched, never sent again", async () => {
    const { result, calls } = await run(
      { purchases: [unknown], checks: ['hang', 'found'] },
      { options: { checkTimeout: '2s' } },
      { ownWorker: true },
    );
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(result.steps.filter((st) => st.op === 'check')[0]).toEqual({
      op: 'check',
      attempt: 1,
      outcome: 'error',
      detail: 'Unknown',
    });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  });

  it('maxPurchaseAttempts 3: a third purchase after two not-founds, and no fourth', async () => {
    const { result, calls } = await run(
      { purchases: [unknown, unknown, unknown], checks: ['not_found', 'not_found', 'not_found'] },
      { options: { maxPurchaseAttempts: 3 } },
    );
    expect(result).toMatchObject({ status: 'not_vended', attempt: 3 });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(3);
    assertNoResendWithoutCheck(calls);
  });

  it('the first purchase goes at once; a resend after a reported failure waits retryBackoff, not the in-flight window', async () => {
    const { calls } = await run({ purchases: [unknown, 'ok'], checks: ['not_found'] });
    const [lookupDone, first, check, second] = [
      calls.find((c) => c.op === 'lookup'),
      ...calls.filter((c) => c.op !== 'providers' && c.op !== 'lookup'),
    ];
    expect(first).toMatchObject({ op: 'purchase' });
    // No pause before the first purchase (the resend's backoff is for resends only).
    expect(first!.at! - lookupDone!.at!).toBeLessThan(1_000);
    expect(check).toMatchObject({ op: 'check' });
    expect(second).toMatchObject({ op: 'purchase' });
    // The settle pause (checkSettleDelay, 3 s) before H4; then retryBackoff (2 s) before the resend.
    expect(check!.at! - first!.at!).toBeGreaterThanOrEqual(3_000);
    expect(second!.at! - check!.at!).toBeGreaterThanOrEqual(2_000);
    // An attempt the activity reported ended with its call: no window of 45 s + 15 s to wait out.
    expect(second!.at! - first!.at!).toBeLessThan(45_000);
  });

  /** A sale (its H4 rounds an hour apart) cancelled once it shows `status`; `skipTime`: the server's clock moves on between looks. */
  async function cancelledWhen(script: Parameters<typeof scripted>[0], status: string, skipTime = false) {
    const calls: Call[] = [];
    const args = input({ options: { requeryBackoff: '1 hour' } });
    const handle = await env.client.workflow.start<typeof vendElectricityWorkflow>('vendElectricityWorkflow', {
      workflowId: byFlow.script(`vend-${args.order_ref}`, scripted(script, calls)),
      taskQueue: TASK_QUEUE,
      args: [args],
    });
    await eventually(
      () => handle.query(vendStateQuery),
      (st) => st.status === status,
      { timeoutMs: 30_000, ...(skipTime ? { pause: () => env.sleep(1_000) } : {}), description: `the vend ${status}` },
    );
    await handle.cancel();
    return { result: await handle.result(), calls };
  }
  const note = 'cancel requested after the purchase may have been sent';

  it('a purchase the service answered (pending), then a cancel and "not found": outcome_unknown, never not_vended', async () => {
    const { result } = await cancelledWhen({ purchases: ['pending'], checks: ['not_found'] }, 'pending');
    expect(result).toMatchObject({ status: 'outcome_unknown', cancelRequested: true });
    expect(result.message).toBe(`${note}: the service could not tell; reconcile reference ${ref(result)}`);
  });

  it('a lost answer an H4 found (pending), then a cancel and "not found": outcome_unknown, never not_vended', async () => {
    const { result } = await cancelledWhen({ purchases: [unknown], checks: ['pending', 'not_found'] }, 'pending');
    expect(result).toMatchObject({ status: 'outcome_unknown', cancelRequested: true });
  });

  it('cancelled while parked: H4 found nothing ever and the window is over: not_vended; found pending: outcome_unknown holding it', async () => {
    const parked = (lastCheck: CheckScript) =>
      cancelledWhen({ purchases: [unknown], checks: [down, lastCheck] }, 'outcome_unknown', true);
    const { result: absent } = await parked('not_found');
    expect(absent).toMatchObject({ status: 'not_vended', cancelRequested: true });
    expect(absent.message).toBe(
      `${note}: the service does not know reference ${ref(absent)} (not found by reference (H4)); nothing was vended`,
    );
    const { result: pending } = await parked('pending');
    expect(pending).toMatchObject({
      status: 'outcome_unknown',
      cancelRequested: true,
      transaction: { status: 'pending' },
    });
    expect(pending.message).toBe(`${note}: the service holds it as pending; reconcile reference ${ref(pending)}`);
  });

  it('cancelled while pending and H4 then says Success: vended, and the result says the cancel came after the purchase', async () => {
    const { result, calls } = await cancelledWhen({ purchases: ['pending'], checks: ['found'] }, 'pending');
    expect(result.message).toBe(`vended (${note}; found by reference (H4))`);
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  });

  it("a sale parked as outcome_unknown tells the merchant why, in its event's reason", async () => {
    const events: MerchantEvent[] = [];
    const { result } = await run(
      { purchases: [unknown], checks: [down, 'found'], events },
      { notify: { url: 'https://merchant.example/events' } },
    );
    expect(result.status).toBe('vended');
    expect(events.map((e) => [e.type, e.data.status])).toEqual([
      ['vend.needs_attention', 'outcome_unknown'],
      ['vend.succeeded', 'vended'],
    ]);
    expect(events[0]!.data.reason).toBe(
      ' (the purchase got no answer (scripted OutcomeUnknown) and the requery by reference (H4) could not answer; it is NOT sent again); parked: requeried, or resolved by an operator',
    );
  });

  // A purchase lost with its worker (heartbeat timeout, 10 s of real time): its HTTP call may still be
  // running until its own timeout (45 s) and the margin (15 s) after the loss. Each sale runs on a
  // worker of its own, so the hung call ends with it.
  const lostSale = (script: Parameters<typeof scripted>[0], over: Partial<VendInput> = {}) => {
    const calls: Call[] = [];
    const acts = scripted(script, calls);
    const workflowId = byFlow.script(`vend-${randomUUID()}`, acts);
    const args = input(over);
    /** The sale to its result on its own worker. */
    const result = () =>
      runWithWorker(env, acts, 'vend-hb', (taskQueue) =>
        env.client.workflow.execute<typeof vendElectricityWorkflow>('vendElectricityWorkflow', {
          workflowId,
          taskQueue,
          args: [args],
        }),
      );
    return { calls, acts, workflowId, args, result };
  };

  it('lost with its worker: not resent before its HTTP call could have ended (45 s + 15 s after the loss)', async () => {
    const sale = lostSale({ purchases: ['hang', 'ok'], checks: ['not_found', 'not_found'] });
    const result = await sale.result();
    expect(result).toMatchObject({ status: 'vended', attempt: 2 });
    const [p1, p2] = sale.calls.filter((c) => c.op === 'purchase');
    // Lost at the heartbeat timeout at the earliest; then the call's own timeout and the margin. The
    // window counts from the attempt's start on the server, a little before the activity reads the
    // clock for `at` (one gRPC round trip: 69999 ms once in a loaded CI pass), hence the second.
    expect(p2!.at! - p1!.at!).toBeGreaterThanOrEqual(
      MONEY_ACTIVITY_HEARTBEAT_TIMEOUT_MS + 45_000 + IN_FLIGHT_MARGIN_MS - 1_000,
    );
    assertNoResendWithoutCheck(sale.calls);
  }, 60_000);

  it('lost with its worker and unchecked: an H4 "not found" inside the window is not an answer; the watch goes on to the record', async () => {
    const sale = lostSale(
      { purchases: ['hang'], checks: [down, 'not_found', 'found'] },
      { options: { requeryBackoff: '5s', requeryMaxBackoff: '5s' } },
    );
    const result = await sale.result();
    expect(result).toMatchObject({ status: 'vended', attempt: 1 });
    expect(sale.calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  }, 60_000);

  it('lost with its worker, parked, and cancelled inside the window with H4 saying "not found": outcome_unknown, never not_vended', async () => {
    const sale = lostSale(
      { purchases: ['hang'], checks: [down, 'not_found'] },
      { options: { requeryBackoff: '1 hour' } },
    );
    const result = await runWithWorker(env, sale.acts, 'vend-hb', async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof vendElectricityWorkflow>('vendElectricityWorkflow', {
        workflowId: sale.workflowId,
        taskQueue,
        args: [sale.args],
      });
      // Parked in real time (nothing awaits the result, so the server's clock is not skipped): well inside the window.
      await eventually(
        () => handle.query(vendStateQuery),
        (st) => st.status === 'outcome_unknown',
        { timeoutMs: 45_000, description: 'the vend parked after the lost purchase' },
      );
      await handle.cancel();
      return handle.result();
    });
    expect(result).toMatchObject({ status: 'outcome_unknown', cancelRequested: true });
  }, 60_000);
});
