// Mandate workflow logic on the time-skipping server, with activities that behave like the
// service (a small in-memory model): a year of monthly debits in seconds, continue-as-new,
// the OTP update paths, the debit validator, and cancellation.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import {
  cancelMandateUpdate, debitMandateUpdate, mandateStateQuery, submitMandateOtpUpdate, type MandateInput, type MandateState,
} from '../../src/shared/mandate';
import type { mandateWorkflow } from '../../src/workflows/mandate';
import type { createMandateActivities } from '../../src/activities/mandates';
import { workflowBundle } from '../helpers/temporal';
import { createTimeSkippingEnv } from '../helpers/time-skipping';

type Activities = ReturnType<typeof createMandateActivities>;

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createTimeSkippingEnv();
}, 120_000);
afterAll(() => env?.teardown());

/** A model of the service: OTP 123456, sessions that can be expired, balances, duplicate refs refused. */
function fakeService() {
  const debits: string[] = [];
  const mandates = new Map<string, { balance: number; total: number; cancelled: boolean }>();
  let sessionExpired = false;
  const activities: Activities = {
    async createMandate(input) {
      const id = `MD-${input.mandateRef}`;
      mandates.set(id, { balance: input.amount, total: 0, cancelled: false });
      return { mandateId: id, sessionToken: 'session' };
    },
    async validateMandateOtp(_token, otp) {
      if (sessionExpired) throw ApplicationFailure.create({ type: 'SessionExpired', message: 'Invalid or expired session.', nonRetryable: true });
      if (otp !== '123456') throw ApplicationFailure.create({ type: 'BadRequest', message: 'Invalid OTP', nonRetryable: true });
      return { mandateReferenceNumber: 'MRN1' };
    },
    async resendMandateOtp() {
      sessionExpired = false;
    },
    async debitMandate(req) {
      const m = mandates.get(req.mandateId)!;
      if (debits.includes(req.reference)) throw ApplicationFailure.create({ type: 'BadRequest', message: 'Duplicate transaction reference', nonRetryable: true });
      if (req.amount > m.balance) throw ApplicationFailure.create({ type: 'BadRequest', message: 'balance', nonRetryable: true });
      debits.push(req.reference);
      m.balance -= req.amount;
      m.total += req.amount;
    },
    async cancelMandate(id) {
      const m = mandates.get(id)!;
      if (m.cancelled) return { cancelled: true, alreadyCancelled: true };
      m.cancelled = true;
      return { cancelled: true, alreadyCancelled: false };
    },
    async getMandate(id) {
      const m = mandates.get(id);
      return m ? { status: m.cancelled ? 'cancelled' : 'approved', balance: m.balance, totalDebited: m.total } : undefined;
    },
  };
  return { activities, debits, expireSession: () => (sessionExpired = true) };
}

const input = (over: Partial<MandateInput> = {}): MandateInput => ({
  mandateRef: `M${randomUUID().slice(0, 8)}`, debitType: 'variable', amount: 1_200_000, accountNumber: '0123456789', bankCode: '058', description: 'Gym',
  // Far-off end: the time-skipping clock may already be a year ahead after the FIXED test.
  startDate: '2026-11-22', endDate: '2099-12-31', customerEmail: 'c@example.com',
  customer: { bvn: '22212345678', firstName: 'Ada', lastName: 'Obi', address: '1 Way', phone: '08012345678' }, ...over,
});

async function run<T>(service: ReturnType<typeof fakeService>, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `mandate-${randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: service.activities });
  return worker.runUntil(fn(taskQueue));
}

async function approved(taskQueue: string, i: MandateInput) {
  const handle = await env.client.workflow.start<typeof mandateWorkflow>('mandateWorkflow', { workflowId: `mandate-${i.mandateRef}`, taskQueue, args: [i] });
  for (let n = 0; n < 100 && (await handle.query(mandateStateQuery)).status !== 'awaiting_otp'; n++) await new Promise((r) => setTimeout(r, 50));
  await handle.executeUpdate(submitMandateOtpUpdate, { args: ['123456'] });
  return handle;
}

it('FIXED monthly: a year of debits on schedule, with continue-as-new, in seconds', async () => {
  const service = fakeService();
  const i = input({ debitType: 'fixed', fixed: { frequency: 'MONTHLY', interval: 1, initialDebitAmount: 100_000, initialDebitDate: '2026-12-01' }, endDate: '2027-11-30', debitsPerRun: 5 });
  const started = Date.now();
  const final = await run(service, async (tq) => (await approved(tq, i)).result());
  expect(final).toMatchObject({ status: 'completed', totalDebited: 1_200_000, balance: 0, debitCount: 12, failures: [] });
  expect(service.debits).toEqual(Array.from({ length: 12 }, (_, n) => `${i.mandateRef}-D${n + 1}`));
  expect(Date.now() - started).toBeLessThan(60_000);
  // continue-as-new happened: the last run is not the first.
  const desc = await env.client.workflow.getHandle(`mandate-${i.mandateRef}`).describe();
  expect(desc.runId).not.toBe(desc.raw.workflowExecutionInfo?.firstRunId);
});

it('VARIABLE: the validator refuses below N200, over the balance, and before approval; debits lower the balance', async () => {
  const service = fakeService();
  const i = input({ amount: 500_000 });
  await run(service, async (tq) => {
    const h = await env.client.workflow.start<typeof mandateWorkflow>('mandateWorkflow', { workflowId: `mandate-${i.mandateRef}`, taskQueue: tq, args: [i] });
    await expect(h.executeUpdate(debitMandateUpdate, { args: [{ amount: 30_000 }] })).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    for (let n = 0; n < 100 && (await h.query(mandateStateQuery)).status !== 'awaiting_otp'; n++) await new Promise((r) => setTimeout(r, 50));
    await expect(h.executeUpdate(submitMandateOtpUpdate, { args: ['000000'] })).rejects.toThrow(WorkflowUpdateFailedError);
    expect((await h.query(mandateStateQuery)).status).toBe('awaiting_otp');
    await h.executeUpdate(submitMandateOtpUpdate, { args: ['123456'] });
    const below = await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 19_999 }] }).catch((e: unknown) => e);
    expect(String((below as Error).cause)).toContain('at least 20000 kobo');
    const over = await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 600_000 }] }).catch((e: unknown) => e);
    expect(String((over as Error).cause)).toContain('exceeds the remaining balance');
    const d1 = await h.executeUpdate(debitMandateUpdate, { args: [{ amount: 200_000 }] });
    expect(d1).toMatchObject({ reference: `${i.mandateRef}-D1`, status: 'success' });
    const state = await h.query(mandateStateQuery);
    expect(state).toMatchObject({ balance: 300_000, totalDebited: 200_000 });
    // The refused updates left nothing in history.
    const raw = JSON.stringify(await h.fetchHistory());
    expect((raw.match(/WORKFLOW_EXECUTION_UPDATE_ACCEPTED/g) ?? []).length).toBe(3); // 2 OTPs + 1 debit
    expect(await h.executeUpdate(cancelMandateUpdate)).toMatchObject({ status: 'cancelled' });
    expect(await h.result()).toMatchObject({ status: 'cancelled', balance: 300_000 });
    expect(service.debits).toEqual([`${i.mandateRef}-D1`]);
  });
});

it('an expired session: the OTP update says a new OTP was sent; the next OTP approves; a third expiry ends it', async () => {
  const service = fakeService();
  const i = input({ maxSessionResends: 1 });
  await run(service, async (tq) => {
    const h = await env.client.workflow.start<typeof mandateWorkflow>('mandateWorkflow', { workflowId: `mandate-${i.mandateRef}`, taskQueue: tq, args: [i] });
    for (let n = 0; n < 100 && (await h.query(mandateStateQuery)).status !== 'awaiting_otp'; n++) await new Promise((r) => setTimeout(r, 50));
    service.expireSession();
    const e1 = await h.executeUpdate(submitMandateOtpUpdate, { args: ['123456'] }).catch((e: unknown) => e);
    expect(String((e1 as Error).cause)).toContain('a new OTP was sent');
    service.expireSession();
    const e2 = await h.executeUpdate(submitMandateOtpUpdate, { args: ['123456'] }).catch((e: unknown) => e);
    expect(String((e2 as Error).cause)).toContain('the mandate has expired');
    expect(await h.result()).toMatchObject({ status: 'expired' });
  });
});

it('ends as expired when no OTP arrives in time', async () => {
  const service = fakeService();
  const i = input({ otpTimeoutMs: 60_000 });
  const final: MandateState = await run(service, async (tq) =>
    env.client.workflow.execute<typeof mandateWorkflow>('mandateWorkflow', { workflowId: `mandate-${i.mandateRef}`, taskQueue: tq, args: [i] }),
  );
  expect(final).toMatchObject({ status: 'expired', endReason: 'no OTP before the timeout' });
});
