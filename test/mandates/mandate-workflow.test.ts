// Mandate workflow logic on the time-skipping server, with activities that behave like the
// service (a small in-memory model with scripted faults): a year of monthly debits in seconds
// with continue-as-new, the OTP update paths, the debit validator, unknown D3 outcomes settled
// through D5, duplicate references, scheduled-debit refusals, cancellation, creation faults.
// FIXED mandates here send their own debits (`fixedDebits: 'send'`); the default, observing the
// service's own debits, is tested in mandate-fixed-observe.test.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowUpdateFailedError, WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import {
  cancelMandateSignal,
  cancelMandateUpdate,
  debitKeyReference,
  debitMandateUpdate,
  fixedSchedule,
  IDEMPOTENCY_KEY_RULE,
  resolveDebitUpdate,
  mandateStateQuery,
  resendMandateOtpUpdate,
  submitMandateOtpUpdate,
  type MandateInput,
  type MandateState,
} from '../../src/shared/mandate';
import type { mandateWorkflow } from '../../src/workflows/mandate';
import type { MandateDebitAnswer, MandateDebitRequest } from '../../src/activities/mandate';
import { cancelMandate } from '../../src/starters/mandate';
import { SECRET_UNAVAILABLE } from '../../src/shared/claim-check';
import { PaymentStatus } from '../../src/shared/search-attributes';
import { eventually } from '../support/polling';
import { useTimeSkippingEnv, whileSkippingTime } from '../support/time-skipping';
import { activitiesByWorkflow } from '../support/activities-by-workflow';
import {
  applyFakeDebit,
  cancelFakeMandate,
  DAY,
  day,
  mandateInput,
  type MandateTestActivities as Activities,
} from './helpers';

// One worker for the file: a mandate's activities are those of the fake service its test started it with (start below).
const TASK_QUEUE = `mandate-${randomUUID()}`;
const env = useTimeSkippingEnv({ worker: { taskQueue: TASK_QUEUE, activities: () => byFlow.activities } });
/** The test server's time at each test's start: awaiting a result may skip it years ahead (it jumps once no timer is left). */
let now: number;
beforeEach(async () => {
  now = await env.currentTimeMs();
});

const refuse = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

/**
 * A stand-in for the claim-check store (the real one is exercised in mandate-e2e): the test seals
 * the BVN and OTPs into this map and hands the workflow only handles; the fake activities redeem
 * them (once) like withSealed, and a missing handle fails SecretUnavailable like an expired one.
 */
const sealedValues = new Map<string, string>();
const seal = (value: string): string => {
  const handle = `cc_${randomBytes(16).toString('base64url')}`;
  sealedValues.set(handle, value);
  return handle;
};
const redeem = (handle: string, what: string): string => {
  const value = sealedValues.get(handle);
  if (value === undefined)
    throw refuse(
      SECRET_UNAVAILABLE,
      `the sealed ${what} is no longer available (already used, expired or unknown): submit it again`,
    );
  sealedValues.delete(handle);
  return value;
};
type DebitFault =
  | 'applyThenLose'
  | 'lose'
  | 'loseAndApplyLater'
  | { refuse: string }
  | 'cancelAtServiceFirst'
  | 'answerPending'
  | 'answerWithoutStatus' // a 200 without data.status: the activity reads it as pending, its status ''
  | 'answerFailed'
  | 'refuseAsDuplicate';

/** A model of the service: OTP 123456, sessions that can be expired, balances, duplicate refs refused; faults scripted per D3 call. */
function fakeService() {
  const calls: string[] = []; // every D3 call's reference, in order
  const applied = new Map<string, number>(); // reference → amount, what the service holds
  const mandates = new Map<string, { ref: string; balance: number; total: number; status: string }>();
  const debitFaults: (DebitFault | undefined)[] = [];
  const lateArrivals: MandateDebitRequest[] = [];
  const counts = { create: 0, cancel: 0, resend: 0, findByRef: 0, verify: 0 };
  /** Verify's view of D3 references: Success for applied ones, plus these (pending / failed answers). */
  const txStatus = new Map<string, 'Pending' | 'Failed'>();
  const heartbeatTimeouts: (number | undefined)[] = [];
  const bvnsSent: string[] = [];
  const knobs = {
    gate: undefined as Promise<void> | undefined,
    sessionExpired: false,
    d5Down: false,
    verifyDown: false,
    createFault: undefined as undefined | 'loseAfterCreating' | 'loseBeforeCreating' | { refuse: string },
    cancelRefusal: undefined as string | undefined,
  };

  const apply = (req: MandateDebitRequest) => {
    const m = mandates.get(req.mandateId)!;
    if (m.status !== 'approved') throw refuse('BadRequest', `debit ${req.reference}: Mandate is not ready for debit`);
    if (applied.has(req.reference))
      throw refuse('DuplicateReference', `debit ${req.reference}: Duplicate transaction reference`);
    applyFakeDebit(m, req, applied);
  };

  const activities: Activities = {
    async createMandate(input) {
      counts.create += 1;
      // Peeked, not redeemed: D1 may be sent again after D5 proved the first absent (the activity keeps the record for it).
      if (!sealedValues.has(input.customer.bvnHandle))
        throw refuse(
          SECRET_UNAVAILABLE,
          'the sealed bvn is no longer available (already used, expired or unknown): submit it again',
        );
      bvnsSent.push(sealedValues.get(input.customer.bvnHandle)!);
      const fault = knobs.createFault;
      knobs.createFault = undefined;
      if (fault && typeof fault === 'object') throw refuse('BadRequest', `create mandate: ${fault.refuse}`);
      if (fault === 'loseBeforeCreating') throw refuse('OutcomeUnknown', 'create mandate: socket hang up');
      const id = `MD-${input.mandateRef}`;
      mandates.set(id, { ref: input.mandateRef, balance: input.amount, total: 0, status: 'initiated' });
      if (fault === 'loseAfterCreating') throw refuse('OutcomeUnknown', 'create mandate: socket hang up');
      return { mandateId: id, sessionToken: 'session' };
    },
    async validateMandateOtp(_token, handle) {
      const otp = redeem(handle, 'mandate-otp');
      if (knobs.sessionExpired) throw refuse('SessionExpired', 'Invalid or expired session.');
      if (otp !== '123456') throw refuse('BadRequest', 'validate mandate OTP: Invalid OTP');
      for (const m of mandates.values()) if (m.status === 'initiated') m.status = 'approved';
      return { mandateReferenceNumber: 'MRN1' };
    },
    async resendMandateOtp() {
      counts.resend += 1;
      knobs.sessionExpired = false;
    },
    async debitMandate(req): Promise<MandateDebitAnswer> {
      calls.push(req.reference);
      heartbeatTimeouts.push(Context.current().info.heartbeatTimeoutMs);
      if (knobs.gate) await knobs.gate;
      for (const late of lateArrivals.splice(0)) apply(late);
      const fault = debitFaults[calls.length - 1];
      if (fault === 'answerPending' || fault === 'answerWithoutStatus' || fault === 'answerFailed') {
        if (applied.has(req.reference) || txStatus.has(req.reference))
          throw refuse('DuplicateReference', `debit ${req.reference}: Duplicate transaction reference`);
        const pending = fault !== 'answerFailed';
        txStatus.set(req.reference, pending ? 'Pending' : 'Failed');
        return {
          status: pending ? 'pending' : 'failed',
          serviceStatus: fault === 'answerWithoutStatus' ? '' : pending ? 'pending' : 'failed',
          amount: req.amount,
        };
      }
      if (fault === 'lose') throw refuse('OutcomeUnknown', `debit ${req.reference}: headers timeout`);
      // The service says it holds the reference, though verify does not show it.
      if (fault === 'refuseAsDuplicate')
        throw refuse('DuplicateReference', `debit ${req.reference}: Duplicate transaction reference`);
      if (fault === 'loseAndApplyLater') {
        lateArrivals.push(req);
        throw refuse('OutcomeUnknown', `debit ${req.reference}: headers timeout`);
      }
      if (fault && typeof fault === 'object') throw refuse('BadRequest', `debit ${req.reference}: ${fault.refuse}`);
      if (fault === 'cancelAtServiceFirst') mandates.get(req.mandateId)!.status = 'cancelled';
      apply(req);
      if (fault === 'applyThenLose') throw refuse('OutcomeUnknown', `debit ${req.reference}: headers timeout`);
      return { status: 'success', serviceStatus: 'success', amount: req.amount };
    },
    async lookupTransaction(ref) {
      counts.verify += 1;
      if (knobs.verifyDown) throw refuse('ServiceError', 'verify transaction: 503');
      const amount = applied.get(ref);
      if (amount !== undefined) return { found: true, status: 'Success', amount };
      const status = txStatus.get(ref);
      return status ? { found: true, status, amount: 0 } : { found: false };
    },
    async cancelMandate(id) {
      counts.cancel += 1;
      return cancelFakeMandate(mandates.get(id)!, knobs.cancelRefusal);
    },
    async getMandate(id) {
      if (knobs.d5Down) throw refuse('ServiceError', 'look up mandate: 503');
      const m = mandates.get(id);
      return m ? { mandateId: id, status: m.status, balance: m.balance, totalDebited: m.total } : undefined;
    },
    async findMandateByRef(ref) {
      counts.findByRef += 1;
      for (const [id, m] of mandates)
        if (m.ref === ref) return { mandateId: id, status: m.status, balance: m.balance, totalDebited: m.total };
      return undefined;
    },
  };
  /** A pending debit becomes final at the service. */
  const settlePending = (ref: string, to: 'Success' | 'Failed', amount: number, mandateId: string) => {
    txStatus.delete(ref);
    if (to === 'Failed') txStatus.set(ref, 'Failed');
    else apply({ reference: ref, amount, mandateId, narration: '', customerEmail: '' });
  };
  return {
    activities,
    calls,
    applied,
    mandates,
    debitFaults,
    counts,
    knobs,
    bvnsSent,
    txStatus,
    settlePending,
    heartbeatTimeouts,
  };
}
type Service = ReturnType<typeof fakeService>;
const byFlow = activitiesByWorkflow<Activities>(Object.keys(fakeService().activities) as (keyof Activities)[]);

const input = (over: Partial<MandateInput> = {}): MandateInput => mandateInput(now, seal('22212345678'), over);

/** Starts the mandate `i` on the file's worker, its activities those of `service`. */
const start = (service: Service, i: MandateInput) =>
  env.client.workflow.start<typeof mandateWorkflow>('mandateWorkflow', {
    workflowId: byFlow.script(`mandate-${i.mandateRef}`, service.activities),
    taskQueue: TASK_QUEUE,
    args: [i],
  });

const waitStatus = (h: WorkflowHandle, status: MandateState['status']): Promise<MandateState> =>
  waitFor(h, (s) => s.status === status, status);

async function approved(service: Service, i: MandateInput) {
  const handle = await start(service, i);
  await waitStatus(handle, 'awaiting_otp');
  await handle.executeUpdate(submitMandateOtpUpdate, { args: [seal('123456')] });
  return handle;
}

/**
 * Queries until `ok` holds. A query does not skip time on the time-skipping server, so a flow
 * waiting on a timer here waits in real time: the deadline is in time (generous for a loaded CI
 * machine), not in reads.
 */
function waitFor(
  h: WorkflowHandle,
  ok: (s: MandateState) => boolean,
  what = 'the expected state',
): Promise<MandateState> {
  return eventually(() => h.query(mandateStateQuery), ok, { timeoutMs: 30_000, intervalMs: 25, description: what });
}

/** The workflow's PaymentStatus search attribute. */
async function paymentStatus(h: WorkflowHandle): Promise<string | undefined> {
  const desc = await h.describe();
  return desc.typedSearchAttributes.get(PaymentStatus);
}

const causeOf = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(WorkflowUpdateFailedError);
  return String((e as Error).cause);
};

describe('FIXED schedule (pure)', () => {
  it('MONTHLY interval 1 from the 31st clamps to each month end; interval 2 splits the month; WEEKLY 7 is daily; YEARLY keeps Feb 29 → 28', () => {
    const monthly = fixedSchedule(
      { frequency: 'MONTHLY', interval: 1, initialDebitAmount: 20_000, initialDebitDate: '2027-01-31' },
      '2027-05-31',
    ).map(day);
    expect(monthly).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31']);
    const twice = fixedSchedule(
      { frequency: 'MONTHLY', interval: 2, initialDebitAmount: 20_000, initialDebitDate: '2027-01-01' },
      '2027-02-28',
    ).map(day);
    expect(twice).toEqual(['2027-01-01', '2027-01-16', '2027-02-01', '2027-02-15']);
    const daily = fixedSchedule(
      { frequency: 'WEEKLY', interval: 7, initialDebitAmount: 20_000, initialDebitDate: '2027-03-01' },
      '2027-03-08',
    ).map(day);
    expect(daily).toEqual([
      '2027-03-01',
      '2027-03-02',
      '2027-03-03',
      '2027-03-04',
      '2027-03-05',
      '2027-03-06',
      '2027-03-07',
      '2027-03-08',
    ]);
    const yearly = fixedSchedule(
      { frequency: 'YEARLY', interval: 1, initialDebitAmount: 20_000, initialDebitDate: '2028-02-29' },
      '2030-12-31',
    ).map(day);
    expect(yearly).toEqual(['2028-02-29', '2029-02-28', '2030-02-28']);
  });
});

describe("a mandate's lifecycle, with scripted activities on the time-skipping server", () => {
  it('FIXED monthly: a year of debits on schedule, with continue-as-new, in seconds', async () => {
    const service = fakeService();
    const fixed = {
      frequency: 'MONTHLY' as const,
      interval: 1,
      initialDebitAmount: 100_000,
      initialDebitDate: day(now + DAY),
    };
    const endDate = day(fixedSchedule(fixed, '2199-12-31', 13)[12] - DAY); // the day before a 13th date
    const i = input({ debitType: 'fixed', fixedDebits: 'send', startDate: day(now), fixed, endDate, debitsPerRun: 5 });
    const started = Date.now();
    const final = await (await approved(service, i)).result();
    expect(final).toMatchObject({
      status: 'completed',
      endReason: 'balance spent',
      totalDebited: 1_200_000,
      balance: 0,
      debitCount: 12,
      failures: [],
      unresolvedDebits: [],
    });
    expect(service.calls).toEqual(Array.from({ length: 12 }, (_, n) => `${i.mandateRef}-D${n + 1}`));
    // Each debit served its own date, one calendar month apart, carried across runs.
    expect(final.recentDebits.map((d) => d.scheduledFor)).toEqual(fixedSchedule(fixed, endDate).map(day));
    expect(final.recentDebits.every((d) => d.status === 'success' && d.kind === 'scheduled')).toBe(true);
    expect(Date.now() - started).toBeLessThan(60_000);
    const desc = await env.client.workflow.getHandle(`mandate-${i.mandateRef}`).describe();
    expect(desc.runId).not.toBe(desc.raw.workflowExecutionInfo?.firstRunId); // continue-as-new happened
  });

  it('VARIABLE: the validator refuses below N200, over the balance, before approval and a wrong OTP keeps waiting; refused updates leave no history', async () => {
    const service = fakeService();
    const i = input({ amount: 500_000 });
    const h = await start(service, i);
    expect(await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 30_000 }] }))).toContain(
      'not approved',
    );
    await waitStatus(h, 'awaiting_otp');
    expect(await causeOf(h.executeUpdate(submitMandateOtpUpdate, { args: [seal('000000')] }))).toContain('Invalid OTP');
    // The format (4 to 8 digits) is the starter's check; the workflow takes only a sealed handle.
    expect(await causeOf(h.executeUpdate(submitMandateOtpUpdate, { args: ['123456'] }))).toContain(
      'otp must be sealed',
    );
    expect((await h.query(mandateStateQuery)).status).toBe('awaiting_otp');
    expect((await h.executeUpdate(submitMandateOtpUpdate, { args: [seal('123456')] })).status).toBe('approved');
    expect(await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 19_999 }] }))).toContain(
      'at least 20000 kobo',
    );
    expect(await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 600_000 }] }))).toContain(
      'exceeds the remaining balance',
    );
    expect(await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 20_000.5 }] }))).toContain('integer');
    const d1 = await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 200_000 }] });
    expect(d1).toMatchObject({
      reference: `${i.mandateRef}-D1`,
      status: 'success',
      confirmedBy: 'response',
      kind: 'requested',
    });
    expect(await h.query(mandateStateQuery)).toMatchObject({ balance: 300_000, totalDebited: 200_000 });
    expect(await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 300_001 }] }))).toContain(
      'exceeds the remaining balance 300000',
    );
    const raw = JSON.stringify(await h.fetchHistory());
    expect((raw.match(/WORKFLOW_EXECUTION_UPDATE_ACCEPTED/g) ?? []).length).toBe(3); // wrong OTP, right OTP, one debit
    expect(await h.executeUpdate(cancelMandateUpdate)).toMatchObject({ status: 'cancelled' });
    expect(await h.result()).toMatchObject({ status: 'cancelled', balance: 300_000 });
    expect(service.calls).toEqual([`${i.mandateRef}-D1`]);
  });

  it("VARIABLE: the validator's edges: exactly N200 and exactly what is left are debited; a malformed key, a bad narration and a missing request are refused before any D3", async () => {
    const service = fakeService();
    const i = input({ amount: 100_000 });
    const h = await approved(service, i);
    const refusals: [unknown, string][] = [
      [{ amount: 20_000, idempotencyKey: 'two words' }, IDEMPOTENCY_KEY_RULE.message],
      [{ amount: 20_000, idempotencyKey: 42 }, IDEMPOTENCY_KEY_RULE.message],
      [{ amount: 20_000, narration: '' }, 'narration must be 1-100 characters'],
      [{ amount: 20_000, narration: 'n'.repeat(101) }, 'narration must be 1-100 characters'],
      [{ amount: 20_000, narration: 42 }, 'narration must be 1-100 characters'],
      [null, 'amount must be an integer in kobo'],
    ];
    for (const [request, message] of refusals) {
      expect(await causeOf(h.executeUpdate(debitMandateUpdate, { args: [request as MandateDebitRequest] }))).toBe(
        `ApplicationFailure: ${message}`,
      );
    }
    expect(service.calls).toEqual([]);
    const least = await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 20_000, narration: 'n'.repeat(100) }] });
    expect(least).toMatchObject({ status: 'success', amount: 20_000 });
    const rest = await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 80_000 }] });
    expect(rest).toMatchObject({ status: 'success', amount: 80_000 });
    expect(await h.result()).toMatchObject({ status: 'completed', balance: 0, totalDebited: 100_000 });
    expect(service.calls).toHaveLength(2);
  });

  it('FIXED: a debit on request is refused before anything is sent (its debits follow the schedule)', async () => {
    const service = fakeService();
    const fixed = {
      frequency: 'MONTHLY' as const,
      interval: 1,
      initialDebitAmount: 100_000,
      initialDebitDate: day(now + 30 * DAY),
    };
    const h = await approved(service, input({ debitType: 'fixed', fixedDebits: 'send', startDate: day(now), fixed }));
    expect(await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 30_000 }] }))).toBe(
      'ApplicationFailure: only a VARIABLE mandate is debited on request',
    );
    expect(service.calls).toEqual([]);
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('VARIABLE: a debit accepted while another is in flight, for exactly what that one leaves, is debited under the lock', async () => {
    const service = fakeService();
    const i = input({ amount: 100_000 });
    const h = await approved(service, i);
    let open!: () => void;
    service.knobs.gate = new Promise<void>((r) => (open = r));
    const first = h.executeUpdate(debitMandateUpdate, { args: [{ amount: 40_000 }] });
    await eventually(() => service.calls.length === 1, { description: 'the first D3 in flight' });
    // Accepted against what is available beside the debit in flight; it waits for the lock.
    const second = await h.startUpdate(debitMandateUpdate, {
      args: [{ amount: 60_000 }],
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    open();
    expect(await first).toMatchObject({ status: 'success', amount: 40_000 });
    expect(await second.result()).toMatchObject({ status: 'success', amount: 60_000 });
    expect(await h.result()).toMatchObject({ status: 'completed', balance: 0, totalDebited: 100_000 });
  });

  it('VARIABLE: past the end date, a debit still waiting on a pending one keeps the flow open, and a new debit is refused: none is sent after the end', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'answerPending';
    // Ends at the end of the test server's day; a pending debit is requeried after three days.
    const i = input({ endDate: day(now), pendingRequeryMs: [3 * DAY] });
    const h = await approved(service, i);
    const ref = `${i.mandateRef}-D1`;
    const pending = h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000 }] });
    await waitFor(h, (s) => s.unresolvedDebits.length === 1, 'a pending debit');
    await env.sleep(2 * DAY);
    expect(await h.query(mandateStateQuery)).toMatchObject({ status: 'approved' });
    expect(await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 30_000 }] }))).toBe(
      `ApplicationFailure: the mandate ended on ${i.endDate}`,
    );
    service.settlePending(ref, 'Success', 50_000, `MD-${i.mandateRef}`);
    await env.sleep(2 * DAY); // past the requery
    expect(await pending).toMatchObject({ status: 'success', confirmedBy: 'requery' });
    expect(await h.result()).toMatchObject({
      status: 'completed',
      endReason: 'end date reached',
      totalDebited: 50_000,
    });
    expect(service.calls).toEqual([ref]);
  });

  it('an expired session: a new OTP is sent and the update says so; the next expiry ends the mandate expired and releases it at the service', async () => {
    const service = fakeService();
    const i = input({ maxSessionResends: 1 });
    const h = await start(service, i);
    await waitStatus(h, 'awaiting_otp');
    service.knobs.sessionExpired = true;
    expect(await causeOf(h.executeUpdate(submitMandateOtpUpdate, { args: [seal('123456')] }))).toContain(
      'a new OTP was sent',
    );
    expect(service.counts.resend).toBe(1);
    service.knobs.sessionExpired = true;
    expect(await causeOf(h.executeUpdate(submitMandateOtpUpdate, { args: [seal('123456')] }))).toContain(
      'the mandate has expired',
    );
    expect(await h.result()).toMatchObject({ status: 'expired', endReason: 'the OTP session expired too often' });
    expect(service.counts.cancel).toBe(1);
  });

  it('resend OTP on request, then no OTP in time: expired, released at the service', async () => {
    const service = fakeService();
    const i = input({ otpTimeoutMs: 60_000 });
    const h = await start(service, i);
    await waitStatus(h, 'awaiting_otp');
    expect((await h.executeUpdate(resendMandateOtpUpdate)).status).toBe('awaiting_otp');
    expect(service.counts.resend).toBe(1);
    const final: MandateState = await h.result();
    expect(final).toMatchObject({ status: 'expired', endReason: 'no OTP before the timeout' });
    expect([...service.mandates.values()][0].status).toBe('cancelled');
  });

  it('D3 applied but unanswered: verify by its reference finds it → success, never resent', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'applyThenLose';
    const i = input();
    const h = await approved(service, i);
    const d = await whileSkippingTime(env, h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000 }] }));
    expect(d).toMatchObject({ reference: `${i.mandateRef}-D1`, status: 'success', confirmedBy: 'requery' });
    expect(service.calls).toEqual([`${i.mandateRef}-D1`]);
    expect(await h.query(mandateStateQuery)).toMatchObject({
      totalDebited: 50_000,
      balance: 1_150_000,
      unresolvedDebits: [],
    });
    await h.signal(cancelMandateSignal);
    expect((await h.result()).status).toBe('cancelled');
  });

  it('D3 unanswered and absent by verify → sent once more with the SAME reference; applied once', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'lose';
    const i = input();
    const h = await approved(service, i);
    const d = await whileSkippingTime(env, h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000 }] }));
    expect(d).toMatchObject({ reference: `${i.mandateRef}-D1`, status: 'success', confirmedBy: 'resend' });
    expect(service.calls).toEqual([`${i.mandateRef}-D1`, `${i.mandateRef}-D1`]);
    expect([...service.applied.entries()]).toEqual([[`${i.mandateRef}-D1`, 50_000]]);
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('D3 unanswered and verify shows it pending: followed (not resent) until final', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'lose';
    const i = input({ pendingRequeryMs: [5_000, 15_000, 45_000] });
    const ref = debitKeyReference(i.mandateRef, 'lp-1');
    service.txStatus.set(ref, 'Pending');
    const h = await approved(service, i);
    const d = h.executeUpdate(debitMandateUpdate, { args: [{ amount: 70_000, idempotencyKey: 'lp-1' }] });
    const during = await waitFor(h, (st) => st.unresolvedDebits[0]?.status === 'pending', 'the debit pending');
    expect(during.unresolvedDebits[0]).toMatchObject({ reference: ref, error: `debit ${ref}: headers timeout` });
    // The same key meanwhile: the same debit, once it is final (not the pending one).
    const again = h.executeUpdate(debitMandateUpdate, { args: [{ amount: 70_000, idempotencyKey: 'lp-1' }] });
    service.settlePending(ref, 'Success', 70_000, `MD-${i.mandateRef}`);
    expect(await whileSkippingTime(env, d)).toMatchObject({ status: 'success', confirmedBy: 'requery' });
    expect(await again).toMatchObject({ reference: ref, status: 'success' });
    expect(service.calls).toEqual([ref]);
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('D3 unanswered, verify shows another amount under its reference: not concluded either way, never resent', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'lose';
    const i = input({ pendingRequeryMs: [5_000], unresolvedRequeryFirstMs: 3_600_000 });
    const ref = debitKeyReference(i.mandateRef, 'amt-1');
    service.applied.set(ref, 10_000); // the service shows 10,000 kobo under the reference
    const h = await approved(service, i);
    const d = await whileSkippingTime(
      env,
      h.executeUpdate(debitMandateUpdate, { args: [{ amount: 70_000, idempotencyKey: 'amt-1' }] }),
    );
    expect(d).toMatchObject({ reference: ref, status: 'outcome_unknown' });
    expect(d.error).toContain('verify shows 10000 kobo under this reference, not 70000');
    expect(service.calls).toEqual([ref]);
    await h.executeUpdate(resolveDebitUpdate, {
      args: [{ debitKey: 'amt-1', outcome: 'not_debited', reason: 'checked with the service', operator: 'ops' }],
    });
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('D3 unanswered twice and verify never shows it: failed, with the sends counted; a "duplicate" refusal of the resend parks it instead', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'lose';
    service.debitFaults[1] = 'lose';
    const i = input();
    const h = await approved(service, i);
    const ref1 = debitKeyReference(i.mandateRef, 'nr-1');
    const d1 = await whileSkippingTime(
      env,
      h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000, idempotencyKey: 'nr-1' }] }),
    );
    expect(d1).toMatchObject({ status: 'failed', confirmedBy: 'requery' });
    expect(d1.error).toContain(`never reached the service (verify does not know ${ref1} after 2 sends)`);

    service.debitFaults[2] = 'lose';
    service.debitFaults[3] = 'refuseAsDuplicate';
    const ref2 = debitKeyReference(i.mandateRef, 'nr-2');
    const d2 = await whileSkippingTime(
      env,
      h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000, idempotencyKey: 'nr-2' }] }),
    );
    expect(d2).toMatchObject({ reference: ref2, status: 'outcome_unknown' });
    expect(d2.error).toContain('the service knows the reference but verify does not show it');
    expect(service.calls).toEqual([ref1, ref1, ref2, ref2]);
    await h.executeUpdate(resolveDebitUpdate, {
      args: [{ debitKey: 'nr-2', outcome: 'not_debited', reason: 'checked with the service', operator: 'ops' }],
    });
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('the first D3 arrives late: the resend is refused as a duplicate, and only verify finding it makes it success', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'loseAndApplyLater';
    const i = input();
    const h = await approved(service, i);
    const d = await whileSkippingTime(env, h.executeUpdate(debitMandateUpdate, { args: [{ amount: 70_000 }] }));
    expect(d).toMatchObject({ status: 'success', confirmedBy: 'requery', reference: `${i.mandateRef}-D1` });
    expect(service.calls).toEqual([`${i.mandateRef}-D1`, `${i.mandateRef}-D1`]);
    expect(service.applied.size).toBe(1);
    expect(await h.query(mandateStateQuery)).toMatchObject({ totalDebited: 70_000, balance: 1_130_000 });
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('an unknown outcome (verify down) is parked as outcome_unknown, does not block the next debit, and the background requery settles it', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'lose';
    const i = input({ unresolvedRequeryFirstMs: 60_000 });
    const h = await approved(service, i);
    service.knobs.verifyDown = true;
    const d1 = await whileSkippingTime(
      env,
      h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000, idempotencyKey: 'order-1' }] }),
    );
    expect(d1).toMatchObject({
      status: 'outcome_unknown',
      key: 'order-1',
      reference: debitKeyReference(i.mandateRef, 'order-1'),
    });
    expect(d1.error).toContain('verify could not be asked');
    expect(service.calls).toHaveLength(1); // not resent blind
    expect(await paymentStatus(h)).toBe('outcome_unknown');
    // Held back: a debit over the balance less the unresolved amount is refused.
    expect(
      await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 1_150_001, idempotencyKey: 'order-x' }] })),
    ).toContain('exceeds the remaining balance 1150000');
    // Not blocked: the next debit goes out; the unresolved amount is held back from what is available.
    const d2 = await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 60_000, idempotencyKey: 'order-2' }] });
    expect(d2).toMatchObject({ status: 'success' });
    expect(await h.query(mandateStateQuery)).toMatchObject({
      totalDebited: 60_000,
      balance: 1_140_000,
      available: 1_090_000,
      unresolvedDebits: [expect.objectContaining({ key: 'order-1' })],
    });
    service.knobs.verifyDown = false;
    // The background requery (1 min, then doubling) reads the documented not-found twice: it never reached the service.
    await env.sleep(10 * 60_000);
    const s = await waitFor(h, (st) => st.unresolvedDebits.length === 0);
    expect(s.recentDebits.map((d) => [d.key, d.status, d.confirmedBy])).toEqual([
      ['order-1', 'failed', 'requery'],
      ['order-2', 'success', 'response'],
    ]);
    expect(s).toMatchObject({ totalDebited: 60_000, balance: 1_140_000, available: 1_140_000 });
    expect(await paymentStatus(h)).toBe('approved');
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('VARIABLE across continue-as-new: references, balance and debits carry on in the next run', async () => {
    const service = fakeService();
    const i = input({ amount: 500_000, debitsPerRun: 2 });
    const h = await approved(service, i);
    const firstRun = (await h.describe()).runId;
    for (let n = 1; n <= 5; n++) {
      expect(await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 30_000 }] })).toMatchObject({
        reference: `${i.mandateRef}-D${n}`,
        status: 'success',
      });
    }
    const s = await h.query(mandateStateQuery);
    expect(s).toMatchObject({ status: 'approved', debitCount: 5, totalDebited: 150_000, balance: 350_000 });
    expect(s.recentDebits.map((d) => d.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect((await h.describe()).runId).not.toBe(firstRun);
    expect(await h.executeUpdate(cancelMandateUpdate)).toMatchObject({ status: 'cancelled', totalDebited: 150_000 });
  });

  it('a debit waiting behind a cancel is refused after it: handlers run one at a time and re-check the state', async () => {
    const service = fakeService();
    const i = input();
    const h = await approved(service, i);
    let open!: () => void;
    service.knobs.gate = new Promise<void>((r) => (open = r));
    const first = h.executeUpdate(debitMandateUpdate, { args: [{ amount: 40_000 }] });
    while (service.calls.length === 0) await new Promise((r) => setTimeout(r, 10)); // D3 in flight
    const cancel = h.executeUpdate(cancelMandateUpdate);
    await new Promise((r) => setTimeout(r, 200));
    // Accepted (the validator saw it approved); refused under the lock, after the cancel.
    const second = h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000 }] }).then(
      () => 'debited',
      (e: unknown) => {
        const cause = (e as WorkflowUpdateFailedError).cause as ApplicationFailure;
        return `${cause.type}: ${cause.message}`;
      },
    );
    await new Promise((r) => setTimeout(r, 200));
    open();
    expect(await first).toMatchObject({ status: 'success', reference: `${i.mandateRef}-D1` });
    expect(await cancel).toMatchObject({ status: 'cancelled', totalDebited: 40_000 });
    expect(await second).toBe('NotApproved: the mandate is cancelled, not approved');
    expect(service.calls).toEqual([`${i.mandateRef}-D1`]);
  });

  it('FIXED: a refused scheduled debit is tried again a day later with a new reference; the schedule goes on', async () => {
    const service = fakeService();
    service.debitFaults[0] = { refuse: 'Insufficient funds' };
    const fixed = {
      frequency: 'MONTHLY' as const,
      interval: 1,
      initialDebitAmount: 100_000,
      initialDebitDate: day(now + DAY),
    };
    const i = input({ debitType: 'fixed', fixedDebits: 'send', amount: 300_000, startDate: day(now), fixed });
    const final = await (await approved(service, i)).result();
    expect(final).toMatchObject({ status: 'completed', totalDebited: 300_000, debitCount: 4 });
    expect(final.recentDebits.map((d) => [d.reference, d.status, d.scheduledFor])).toEqual([
      [`${i.mandateRef}-D1`, 'failed', fixed.initialDebitDate],
      [`${i.mandateRef}-D2`, 'success', fixed.initialDebitDate],
      [`${i.mandateRef}-D3`, 'success', expect.any(String)],
      [`${i.mandateRef}-D4`, 'success', expect.any(String)],
    ]);
    const gap = Date.parse(final.recentDebits[1].at) - Date.parse(final.recentDebits[0].at);
    expect(gap).toBeGreaterThanOrEqual(DAY);
    expect(gap).toBeLessThan(DAY + 60_000);
    expect(final.failures).toEqual([`${i.mandateRef}-D1: debit ${i.mandateRef}-D1: Insufficient funds`]);
  });

  it('FIXED: a debit refused as "not ready" because the service cancelled the mandate ends the flow cancelled', async () => {
    const service = fakeService();
    service.debitFaults[1] = 'cancelAtServiceFirst';
    const fixed = {
      frequency: 'WEEKLY' as const,
      interval: 1,
      initialDebitAmount: 100_000,
      initialDebitDate: day(now + DAY),
    };
    const i = input({ debitType: 'fixed', fixedDebits: 'send', startDate: day(now), fixed });
    const final = await (await approved(service, i)).result();
    expect(final).toMatchObject({
      status: 'cancelled',
      endReason: 'cancelled at the service',
      totalDebited: 100_000,
      debitCount: 2,
    });
    expect(service.calls).toHaveLength(2); // no retries of a cancelled mandate
  });

  it('FIXED: dates before the approval day are skipped; the last debit is capped at the balance, then it completes', async () => {
    const service = fakeService();
    const today = Math.floor(now / DAY) * DAY;
    const fixed = {
      frequency: 'WEEKLY' as const,
      interval: 1,
      initialDebitAmount: 100_000,
      initialDebitDate: day(today - 14 * DAY),
    };
    const i = input({
      debitType: 'fixed',
      fixedDebits: 'send',
      amount: 250_000,
      startDate: day(today - 14 * DAY),
      fixed,
    });
    const final = await (await approved(service, i)).result();
    expect(final).toMatchObject({
      status: 'completed',
      endReason: 'balance spent',
      skippedBeforeApproval: 2,
      totalDebited: 250_000,
      balance: 0,
    });
    expect(final.recentDebits.map((d) => [d.amount, d.scheduledFor])).toEqual([
      [100_000, day(today)],
      [100_000, day(today + 7 * DAY)],
      [50_000, day(today + 14 * DAY)],
    ]);
  });

  it('cancel: by signal while awaiting the OTP; a mandate the service already cancelled; a refusal keeps it running; twice by the starter (one D4)', async () => {
    const service = fakeService();
    const a = input();
    const ha = await start(service, a);
    await waitStatus(ha, 'awaiting_otp');
    await ha.signal(cancelMandateSignal);
    expect(await ha.result()).toMatchObject({ status: 'cancelled', endReason: 'cancelled on request' });
    expect(service.counts.cancel).toBe(1);

    const c = input();
    const hc = await approved(service, c);
    service.mandates.get(`MD-${c.mandateRef}`)!.status = 'cancelled'; // cancelled elsewhere
    expect(await hc.executeUpdate(cancelMandateUpdate)).toMatchObject({
      status: 'cancelled',
      endReason: 'cancelled (the service reported it already cancelled)',
    });

    const d = input();
    const hd = await approved(service, d);
    service.knobs.cancelRefusal = 'Mandate not found';
    expect(await causeOf(hd.executeUpdate(cancelMandateUpdate))).toContain('Mandate not found');
    expect(await hd.query(mandateStateQuery)).toMatchObject({
      status: 'approved',
      failures: ['cancel: Mandate not found'],
    });
    service.knobs.cancelRefusal = undefined;
    expect((await hd.executeUpdate(cancelMandateUpdate)).status).toBe('cancelled');

    // Last: the starter awaits the ended flow's result, which lets the test server skip time.
    const b = input();
    await approved(service, b);
    const cancelsBefore = service.counts.cancel;
    const first = await cancelMandate(env, b.mandateRef);
    const second = await cancelMandate(env, b.mandateRef);
    expect(first).toMatchObject({ status: 'cancelled', endReason: 'cancelled on request' });
    expect(second).toEqual(first);
    expect(service.counts.cancel).toBe(cancelsBefore + 1); // one D4 for two cancels
  });

  it('creation: invalid FIXED settings fail before D1; a refused D1 fails with its message; an unanswered D1 is looked up by reference', async () => {
    const service = fakeService();
    const bad = input({
      debitType: 'fixed',
      fixed: {
        frequency: 'MONTHLY',
        interval: 40,
        initialDebitAmount: 10_000,
        initialDebitDate: day(now + 90 * 365 * DAY),
      },
    });
    const r1 = await (await start(service, bad)).result();
    expect(r1.status).toBe('failed');
    expect(r1.endReason).toContain('fixed.interval must be a whole number from 1 to 28 for MONTHLY');
    expect(r1.endReason).toContain('fixed.initialDebitAmount must be an integer of at least 20000 kobo');
    expect(r1.endReason).toContain('fixed.initialDebitDate must lie between startDate and endDate');
    expect(service.counts.create).toBe(0);

    service.knobs.createFault = { refuse: 'Customer already exists with the same email address.' };
    expect(await (await start(service, input())).result()).toMatchObject({
      status: 'failed',
      endReason: 'create mandate: Customer already exists with the same email address.',
    });

    // Created, answer lost: the session token is gone, so it is cancelled at the service and the flow fails.
    service.knobs.createFault = 'loseAfterCreating';
    const lost = input();
    expect(await (await start(service, lost)).result()).toMatchObject({
      status: 'failed',
      endReason: expect.stringContaining('creation response was lost'),
    });
    expect(service.mandates.get(`MD-${lost.mandateRef}`)!.status).toBe('cancelled');

    // Never reached the service: D5 proves it absent, D1 goes once more. (The settle pauses are
    // real time while the test only queries, so they are short here.)
    service.knobs.createFault = 'loseBeforeCreating';
    const h = await start(service, input({ debitSettleMs: 200 }));
    await waitStatus(h, 'awaiting_otp');
    expect(service.counts.create).toBe(4);
    expect(service.counts.findByRef).toBe(3); // found at once (lost after creating); absent twice (lost before)
    await h.executeUpdate(cancelMandateUpdate);
  });
});

describe('claim check: the BVN and the OTP arrive only as handles', () => {
  it('an OTP whose sealed record expired fails its Update with SecretUnavailable ("send it again") and the flow keeps waiting', async () => {
    const service = fakeService();
    const h = await start(service, input());
    await waitStatus(h, 'awaiting_otp');
    const gone = await h
      .executeUpdate(submitMandateOtpUpdate, { args: [`cc_${randomBytes(16).toString('base64url')}`] })
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (gone as WorkflowUpdateFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe(SECRET_UNAVAILABLE);
    expect(cause.message).toBe('the OTP expired before it was sent: send it again');
    expect((await h.query(mandateStateQuery)).status).toBe('awaiting_otp');
    expect((await h.executeUpdate(submitMandateOtpUpdate, { args: [seal('123456')] })).status).toBe('approved');
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('a BVN whose sealed record expired before D1 ends the flow failed, telling the caller to start again with the BVN; nothing reached the service', async () => {
    const service = fakeService();
    const i = input();
    sealedValues.delete(i.customer.bvnHandle); // as if its TTL ended while no worker ran
    const final = await (await start(service, i)).result();
    expect(final).toMatchObject({
      status: 'failed',
      endReason: expect.stringContaining('start the mandate again with the BVN'),
    });
    expect(final.endReason).toContain('nothing was sent');
    expect(service.mandates.size).toBe(0);
    expect(service.bvnsSent).toEqual([]);
  });

  it('an input that carries the BVN itself (not sealed) is refused before D1', async () => {
    const service = fakeService();
    const i = input();
    const raw = {
      ...i,
      customer: { firstName: 'Ada', lastName: 'Obi', address: '1 Way', phone: '08012345678', bvn: '22212345678' },
    } as unknown as MandateInput;
    const final = await (await start(service, raw)).result();
    expect(final.status).toBe('failed');
    expect(final.endReason).toContain('customer.bvnHandle must be a claim-check handle');
    expect(final.endReason).toContain('customer.bvn must not be in the workflow input');
    expect(final.endReason).not.toContain('22212345678');
    expect(service.counts.create).toBe(0);
  });

  it('the BVN sealed for the flow is what D1 sends, also on the resend after D5 proved the first absent', async () => {
    const service = fakeService();
    service.knobs.createFault = 'loseBeforeCreating';
    const i = input({ debitSettleMs: 200 });
    const h = await start(service, i);
    await waitStatus(h, 'awaiting_otp');
    await h.executeUpdate(cancelMandateUpdate);
    expect(service.bvnsSent).toEqual(['22212345678', '22212345678']);
  });
});

describe('money safety (issue #12): send-once debits, idempotency keys, statuses, unknown outcomes, cancellation', () => {
  it('the same idempotency key twice gives the same debit (one D3, the reference derived from the key); another amount under the key is refused', async () => {
    const service = fakeService();
    const i = input({ amount: 500_000, debitsPerRun: 1 });
    const h = await approved(service, i);
    const first = await h.executeUpdate(debitMandateUpdate, {
      args: [{ amount: 100_000, idempotencyKey: 'inv-42' }],
    });
    expect(first).toMatchObject({
      key: 'inv-42',
      reference: debitKeyReference(i.mandateRef, 'inv-42'),
      status: 'success',
      amount: 100_000,
    });
    expect(debitKeyReference(i.mandateRef, 'inv-42')).toMatch(new RegExp(`^${i.mandateRef}-K[0-9a-z]{13}$`));
    // A backend retry (another Update id, after continue-as-new: debitsPerRun 1) answers the same debit.
    const again = await h.executeUpdate(debitMandateUpdate, {
      args: [{ amount: 100_000, idempotencyKey: 'inv-42' }],
    });
    expect(again).toEqual(first);
    expect(
      await causeOf(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 120_000, idempotencyKey: 'inv-42' }] })),
    ).toContain('was used for a debit of 100000 kobo');
    // Two at once under one key: still one debit.
    const [a, b] = await Promise.all([
      h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000, idempotencyKey: 'inv-43' }] }),
      h.executeUpdate(debitMandateUpdate, { args: [{ amount: 50_000, idempotencyKey: 'inv-43' }] }),
    ]);
    expect(a).toEqual(b);
    expect(service.calls).toEqual([
      debitKeyReference(i.mandateRef, 'inv-42'),
      debitKeyReference(i.mandateRef, 'inv-43'),
    ]);
    expect(await h.query(mandateStateQuery)).toMatchObject({
      totalDebited: 150_000,
      balance: 350_000,
      debitCount: 2,
    });
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('a D3 200 whose status is pending is requeried until final; failed is failed with no money moved', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'answerPending';
    service.debitFaults[1] = 'answerFailed';
    const i = input({ pendingRequeryMs: [5_000, 15_000, 45_000] });
    const h = await approved(service, i);
    const ref = debitKeyReference(i.mandateRef, 'p-1');
    const pending = h.executeUpdate(debitMandateUpdate, { args: [{ amount: 80_000, idempotencyKey: 'p-1' }] });
    const during = await waitFor(h, (s) => s.unresolvedDebits.length === 1, 'a pending debit');
    expect(during.unresolvedDebits[0]).toMatchObject({
      status: 'pending',
      serviceStatus: 'pending',
      reference: ref,
      error: 'the debit (D3) answered status pending',
    });
    expect(during).toMatchObject({ totalDebited: 0, available: 1_120_000 });
    service.settlePending(ref, 'Success', 80_000, `MD-${i.mandateRef}`);
    expect(await pending).toMatchObject({ status: 'success', confirmedBy: 'requery', reference: ref });
    const failed = await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 90_000, idempotencyKey: 'p-2' }] });
    expect(failed).toMatchObject({
      status: 'failed',
      confirmedBy: 'response',
      serviceStatus: 'failed',
      error: 'the debit (D3) answered status failed',
    });
    expect(await h.query(mandateStateQuery)).toMatchObject({
      totalDebited: 80_000,
      balance: 1_120_000,
      unresolvedDebits: [],
    });
    expect(service.calls).toHaveLength(2); // neither was sent again
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('a D3 200 without a status is pending, and its error says the status was "(none)"', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'answerWithoutStatus';
    const i = input({ pendingRequeryMs: [5_000] });
    const h = await approved(service, i);
    const ref = debitKeyReference(i.mandateRef, 'n-1');
    const pending = h.executeUpdate(debitMandateUpdate, { args: [{ amount: 80_000, idempotencyKey: 'n-1' }] });
    const during = await waitFor(h, (s) => s.unresolvedDebits.length === 1, 'a pending debit');
    expect(during.unresolvedDebits[0]).toMatchObject({
      status: 'pending',
      serviceStatus: '',
      reference: ref,
      error: 'the debit (D3) answered status (none)',
    });
    service.settlePending(ref, 'Success', 80_000, `MD-${i.mandateRef}`);
    expect(await whileSkippingTime(env, pending)).toMatchObject({ status: 'success', confirmedBy: 'requery' });
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('pending beyond the bounded requeries is parked outcome_unknown (PaymentStatus too); an operator resolves it, recorded in state', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'answerPending';
    const i = input({ pendingRequeryMs: [1_000, 2_000], unresolvedRequeryForMs: 10 * 60_000 });
    const h = await approved(service, i);
    const d = await whileSkippingTime(
      env,
      h.executeUpdate(debitMandateUpdate, { args: [{ amount: 70_000, idempotencyKey: 'x-1' }] }),
    );
    expect(d).toMatchObject({ status: 'outcome_unknown', key: 'x-1' });
    expect(d.error).toContain('still not final after 2 requeries');
    expect(await paymentStatus(h)).toBe('outcome_unknown');
    expect(
      await causeOf(
        h.executeUpdate(resolveDebitUpdate, {
          args: [{ debitKey: 'x-1', outcome: 'maybe' as 'debited', reason: 'r', operator: 'o' }],
        }),
      ),
    ).toContain('outcome must be');
    const resolved = await h.executeUpdate(resolveDebitUpdate, {
      args: [{ debitKey: 'x-1', outcome: 'debited', reason: 'bank statement shows the debit', operator: 'ops-ada' }],
    });
    expect(resolved).toMatchObject({
      status: 'success',
      confirmedBy: 'operator',
      resolution: { outcome: 'debited', operator: 'ops-ada', reason: 'bank statement shows the debit' },
    });
    expect(await h.query(mandateStateQuery)).toMatchObject({
      totalDebited: 70_000,
      balance: 1_130_000,
      unresolvedDebits: [],
    });
    expect(await paymentStatus(h)).toBe('approved');
    expect(
      await causeOf(
        h.executeUpdate(resolveDebitUpdate, {
          args: [{ debitKey: 'x-1', outcome: 'not_debited', reason: 'r', operator: 'o' }],
        }),
      ),
    ).toContain('already success');
    await h.executeUpdate(cancelMandateUpdate);
  });

  it('FIXED: an unresolved scheduled debit does not stop the schedule; the flow does not end before it is settled', async () => {
    const service = fakeService();
    service.debitFaults[0] = 'answerPending';
    const fixed = {
      frequency: 'WEEKLY' as const,
      interval: 1,
      initialDebitAmount: 100_000,
      initialDebitDate: day(now + DAY),
    };
    const i = input({
      debitType: 'fixed',
      fixedDebits: 'send',
      amount: 300_000,
      startDate: day(now),
      fixed,
      pendingRequeryMs: [1_000],
      unresolvedRequeryForMs: 365 * DAY,
      // Daily background requeries, not the default minute-to-hour backoff: the 16 skipped days
      // below would otherwise run some 400 requery activities (a minute under CI load).
      unresolvedRequeryFirstMs: DAY,
      unresolvedRequeryMaxMs: DAY,
    });
    const h = await approved(service, i);
    // The first date's debit stays pending; the next two dates are debited (100000 held back for the first).
    await env.sleep(16 * DAY);
    const s = await waitFor(
      h,
      (st) => st.recentDebits.filter((d) => d.status === 'success').length === 2,
      'two later debits',
    );
    expect(s.recentDebits.map((d) => [d.reference, d.status])).toEqual([
      [`${i.mandateRef}-D1`, 'outcome_unknown'],
      [`${i.mandateRef}-D2`, 'success'],
      [`${i.mandateRef}-D3`, 'success'],
    ]);
    expect((await h.describe()).status.name).toBe('RUNNING'); // nothing left to debit, but D1 is unresolved
    service.settlePending(`${i.mandateRef}-D1`, 'Success', 100_000, `MD-${i.mandateRef}`);
    const final = await h.result(); // the background requery finds it
    expect(final).toMatchObject({ status: 'completed', totalDebited: 300_000, balance: 0, unresolvedDebits: [] });
    expect(final.recentDebits[0]).toMatchObject({ status: 'success', confirmedBy: 'requery' });
  });

  it('a Temporal cancel while a debit is in flight: the debit settles and is recorded, the mandate is cancelled at the service, the flow ends cancelled', async () => {
    const service = fakeService();
    const i = input();
    const h = await approved(service, i);
    let open!: () => void;
    service.knobs.gate = new Promise<void>((r) => (open = r));
    const debit = h
      .executeUpdate(debitMandateUpdate, { args: [{ amount: 40_000, idempotencyKey: 'c-1' }] })
      .catch((e: unknown) => e);
    while (service.calls.length === 0) await new Promise((r) => setTimeout(r, 10)); // D3 in flight
    await h.cancel();
    await new Promise((r) => setTimeout(r, 200));
    open();
    const final = await h.result();
    expect(final).toMatchObject({
      status: 'cancelled',
      totalDebited: 40_000,
      balance: 1_160_000,
      unresolvedDebits: [],
    });
    expect(final.endReason).toContain('the workflow was cancelled');
    expect(final.recentDebits).toEqual([expect.objectContaining({ key: 'c-1', status: 'success' })]);
    expect(service.mandates.get(`MD-${i.mandateRef}`)!.status).toBe('cancelled');
    expect(service.counts.cancel).toBe(1);
    await debit;
  });

  it('D1 and D3 run with a short heartbeat timeout (10 s)', async () => {
    const service = fakeService();
    const i = input();
    const h = await approved(service, i);
    await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 40_000, idempotencyKey: 'hb' }] });
    expect(service.heartbeatTimeouts).toEqual([10_000]);
    const history = await h.fetchHistory();
    const scheduled = history
      .events!.filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => e.activityTaskScheduledEventAttributes!);
    const create = scheduled.find((a) => a.activityType?.name === 'createMandate')!;
    expect(Number(create.heartbeatTimeout?.seconds)).toBe(10);
    await h.executeUpdate(cancelMandateUpdate);
  });
});
