// The vending workflow's decisions on the time-skipping server with scripted activities:
// provider check, minimum_vend, one purchase per reference, H4 before any new attempt.
// Also the provider cache of the real activities (with a counting fake client).
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createVendingActivities, type VendingActivities } from '../../src/activities/vending';
import type { ActivityDeps } from '../../src/activities';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { FailureTypes } from '../../src/shared/pos';
import type { MeterInfo, VendCheckOutcome, VendInput, VendRecord, VendResult } from '../../src/shared/vending';
import type { vendElectricityWorkflow } from '../../src/workflows/vending';
import { LogCapture, testConfig, workflowBundle } from '../helpers/temporal';
import { createTimeSkippingEnv } from '../helpers/time-skipping';
import { unusedClaimCheck } from '../pos/helpers';

installTemporalRuntime(createLogger({ destination: new LogCapture(), level: 'warn' }), 'WARN');

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
}, 120_000);
afterAll(() => env?.teardown());

type Call = { op: 'providers' } | { op: 'lookup' } | { op: 'purchase'; reference: string } | { op: 'check'; reference: string; answer: 'found' | 'not_found' | 'error' };
type PurchaseScript = 'ok' | 'failed' | { fail: string };
type CheckScript = 'found' | 'not_found' | { fail: string };

const vend = (reference: string, status = 'success'): VendRecord => ({ reference, status, amount: '5000.00', ...(status === 'success' ? { token: '1234-5678-9012-3456-7890' } : {}) });

function scripted(opts: { purchases: PurchaseScript[]; checks: CheckScript[]; minimumVend?: number; providers?: string[] }, calls: Call[]) {
  let lookups = 0;
  const acts: Pick<VendingActivities, 'vendListProviders' | 'vendLookupMeter' | 'vendPurchase' | 'vendFindByReference'> = {
    async vendListProviders() {
      calls.push({ op: 'providers' });
      return (opts.providers ?? ['EKEDC', 'IE']).map((code) => ({ code }));
    },
    async vendLookupMeter(): Promise<MeterInfo> {
      calls.push({ op: 'lookup' });
      lookups += 1;
      return { reference: `LKP-${lookups}-${randomUUID().slice(0, 6)}`, customer_name: 'ADA OBI', minimum_vend: opts.minimumVend ?? 1000 };
    },
    async vendPurchase(req) {
      calls.push({ op: 'purchase', reference: req.reference });
      const s = opts.purchases.shift();
      if (!s) throw new Error('unscripted purchase');
      if (typeof s === 'object') throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
      return vend(req.reference, s === 'ok' ? 'success' : 'failed');
    },
    async vendFindByReference(req): Promise<VendCheckOutcome> {
      const s = opts.checks.shift();
      if (!s) throw new Error('unscripted check');
      if (typeof s === 'object') {
        calls.push({ op: 'check', reference: req.reference, answer: 'error' });
        throw ApplicationFailure.create({ type: s.fail, message: `scripted ${s.fail}`, nonRetryable: true });
      }
      calls.push({ op: 'check', reference: req.reference, answer: s });
      return s === 'found' ? { found: true, transaction: vend(req.reference) } : { found: false };
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

async function run(opts: Parameters<typeof scripted>[0], over: Partial<VendInput> = {}): Promise<{ result: VendResult; calls: Call[] }> {
  const calls: Call[] = [];
  const taskQueue = `vend-ts-${randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: scripted(opts, calls) });
  const args = input(over);
  const result = await worker.runUntil(
    env.client.workflow.execute<typeof vendElectricityWorkflow>('vendElectricityWorkflow', { workflowId: `vend-${args.order_ref}`, taskQueue, args: [args] }),
  );
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

describe('electricity vending workflow', () => {
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
    const { result, calls } = await run({ purchases: [{ fail: FailureTypes.OutcomeUnknown }, 'ok'], checks: ['not_found'] });
    expect(result).toMatchObject({ status: 'vended', attempt: 2 });
    expect(calls.map((c) => c.op)).toEqual(['providers', 'lookup', 'purchase', 'check', 'purchase']);
    assertNoResendWithoutCheck(calls);
  });

  it('bounded: two unknowns, two not-founds → not_vended, never a third purchase', async () => {
    const { result, calls } = await run({ purchases: [{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.OutcomeUnknown }], checks: ['not_found', 'not_found'] });
    expect(result).toMatchObject({ status: 'not_vended', attempt: 2 });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(2);
    assertNoResendWithoutCheck(calls);
  });

  it('the check cannot answer: outcome_unknown, never sent again', async () => {
    const { result, calls } = await run({ purchases: [{ fail: FailureTypes.OutcomeUnknown }], checks: [{ fail: FailureTypes.Unauthorized }] });
    expect(result).toMatchObject({ status: 'outcome_unknown', attempt: 1 });
    expect(calls.filter((c) => c.op === 'purchase')).toHaveLength(1);
  });

  it('a refused retry (already processed) is checked by reference: found → vended, no third purchase', async () => {
    const { result, calls } = await run({ purchases: [{ fail: FailureTypes.OutcomeUnknown }, { fail: FailureTypes.BadRequest }], checks: ['not_found', 'found'] });
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
    const taskQueue = `vend-bad-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: scripted({ purchases: [], checks: [] }, calls) });
    const err = await worker
      .runUntil(
        env.client.workflow.execute<typeof vendElectricityWorkflow>('vendElectricityWorkflow', {
          workflowId: `vend-bad-${randomUUID()}`,
          taskQueue,
          args: [input({ amount: 10.5, meter_type: 'smart', email: 'nope', meter_no: '12' })],
        }),
      )
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
          return { data: [{ code: 'EKEDC', name: 'Eko' }, { code: 'JED', name: 'Jos' }] };
        },
      },
    };
    return { api: api as unknown as ActivityDeps['api'], logger: createLogger({ destination: new LogCapture() }), config: testConfig(), claimCheck: unusedClaimCheck };
  }

  it('calls H1 once within the TTL, again after it, and once for concurrent callers', async () => {
    const counter = { n: 0 };
    let now = 1_000_000;
    const acts = createVendingActivities(deps(counter), { providerCacheTtlMs: 60_000, now: () => now });
    const [a, b] = await Promise.all([acts.vendListProviders(), acts.vendListProviders()]);
    expect(a).toEqual([{ code: 'EKEDC', name: 'Eko' }, { code: 'JED', name: 'Jos' }]);
    expect(b).toEqual(a);
    await acts.vendListProviders();
    expect(counter.n).toBe(1);
    now += 61_000;
    await acts.vendListProviders();
    expect(counter.n).toBe(2);
  });

  it('a failed H1 is not cached', async () => {
    const counter = { n: 0 };
    const acts = createVendingActivities(deps(counter, true));
    await expect(acts.vendListProviders()).rejects.toThrow(/down/);
    await expect(acts.vendListProviders()).rejects.toThrow(/down/);
    expect(counter.n).toBe(2);
  });
});
