// The mandate lifecycle end to end on the dev server: worker, API client over real HTTP, and
// the sandbox (its clock expires OTP sessions; its ledger proves each debit happened once; its
// faults drop D1/D3 answers).
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { StarterInputError } from '../../src/starters/input-error';
import { createLogger } from '../../src/logging/logger';
import type { RunningServices } from '../../src/stack/services';
import {
  cancelMandate,
  debitMandate,
  getMandateState,
  listAllMandates,
  listMandates,
  requestMandateCancel,
  resendMandateOtp,
  startMandate,
  submitMandateOtp,
} from '../../src/starters/mandate';
import type { MandateRequest, MandateState } from '../../src/shared/mandate';
import { MANDATE_OTP } from '../../src/sandbox';
import { LogCapture, startServices, testConfig } from '../support/stack';
import { recordHistory } from '../support/replay';
import { SandboxAdmin, sandboxAdminCall } from '../support/sandbox-admin';
import { historyTexts, rawHistoryText } from '../support/history';
import { eventually } from '../support/polling';
import { SecretUnavailableError } from '../../src/claim-check/store';
import { SECRET_UNAVAILABLE } from '../../src/shared/claim-check';
import {
  debitKeyReference,
  mandateStateQuery,
  mandateWorkflowId,
  submitMandateOtpUpdate,
  type MandateInput,
} from '../../src/shared/mandate';
import type { mandateWorkflow } from '../../src/workflows/mandate';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { newMandateRequest } from '../support/flow-inputs';

const capture = new LogCapture();
const config = testConfig();
let services: RunningServices;

beforeAll(async () => {
  services = await startServices(config, { logger: createLogger({ destination: capture }) });
});
afterAll(() => services?.stop());

const input = newMandateRequest;
const client = () => services.client;
const ctx = () => services.starters;
const sandbox = () => new SandboxAdmin(services.sandboxUrl!);
const ledger = (reference: string) => sandbox().ledger({ reference });
const waitFor = (ref: string, status: MandateState['status']) =>
  eventually(
    () => getMandateState(ctx(), ref),
    (s) => s.status === status,
    { attempts: 100, intervalMs: 100, description: `mandate ${ref} in ${status}`, ignoreErrors: true },
  );
const causeOf = (e: unknown) => String((e as { cause?: unknown }).cause);
const fault = (rule: { path: string; kind: 'drop-before-processing' | 'drop-after-processing' | 'error5xx' }) =>
  sandbox().fault({ method: 'POST', count: 1, ...rule });
const serviceRecord = async (mandateId: string) =>
  (await listMandates(services.starters, { mandate_id: mandateId })).records[0];

it("a service that answers a wrong OTP with the spec's 424 ('Invalid or expired session.'): the flow resends the OTP (D6), asks for it again, and the right one approves", async () => {
  await sandboxAdminCall(services.sandboxUrl!, 'POST', '/mandates/wrong-otp-status', { status: 424 });
  try {
    const i = input();
    const handle = await startMandate(ctx(), i);
    await waitFor(i.mandateRef, 'awaiting_otp');
    const wrong = await submitMandateOtp(ctx(), i.mandateRef, '000000').catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(causeOf(wrong)).toContain('a new OTP was sent to the customer');
    expect((await getMandateState(ctx(), i.mandateRef)).status).toBe('awaiting_otp');
    expect((await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP)).status).toBe('approved');
    await cancelMandate(ctx(), i.mandateRef);
    await handle.result();
  } finally {
    await sandboxAdminCall(services.sandboxUrl!, 'POST', '/mandates/wrong-otp-status', { status: 400 });
  }
});

it('variable mandate: wrong OTP, approval, refused debits, two debits, cancel twice, listing', async () => {
  const i = input();
  const handle = await startMandate(ctx(), i);
  await waitFor(i.mandateRef, 'awaiting_otp');

  const wrong = await submitMandateOtp(ctx(), i.mandateRef, '000000').catch((e: unknown) => e);
  expect(wrong).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(causeOf(wrong)).toContain('Invalid OTP');
  expect((await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP)).status).toBe('approved');

  expect(causeOf(await debitMandate(ctx(), i.mandateRef, 19_999).catch((e: unknown) => e))).toContain(
    'at least 20000 kobo',
  );
  expect(causeOf(await debitMandate(ctx(), i.mandateRef, 1_000_001).catch((e: unknown) => e))).toContain(
    'exceeds the remaining balance',
  );

  const d1 = await debitMandate(ctx(), i.mandateRef, 300_000, { idempotencyKey: 'order-1' });
  const d2 = await debitMandate(ctx(), i.mandateRef, 200_000); // the starter makes a key and returns it
  expect(d1).toMatchObject({ key: 'order-1', reference: debitKeyReference(i.mandateRef, 'order-1') });
  expect(d2.reference).toBe(debitKeyReference(i.mandateRef, d2.key!));
  // The backend retries both: the same debits answer, nothing is debited again.
  expect(await debitMandate(ctx(), i.mandateRef, 300_000, { idempotencyKey: 'order-1' })).toEqual(d1);
  expect(await debitMandate(ctx(), i.mandateRef, 200_000, { idempotencyKey: d2.key })).toEqual(d2);
  expect(await getMandateState(ctx(), i.mandateRef)).toMatchObject({
    balance: 500_000,
    totalDebited: 500_000,
    failures: [],
  });
  expect(await ledger(d1.reference)).toHaveLength(1);
  expect(await ledger(d2.reference)).toHaveLength(1);

  const listed = await listMandates(services.starters, {
    mandate_id: (await getMandateState(ctx(), i.mandateRef)).mandateId!,
  });
  expect(listed.records[0]).toMatchObject({ balance: 500_000, total_debited: 500_000, status: 'approved' });

  expect((await cancelMandate(ctx(), i.mandateRef)).status).toBe('cancelled');
  expect((await cancelMandate(ctx(), i.mandateRef)).status).toBe('cancelled'); // twice: same answer
  expect(await handle.result()).toMatchObject({ status: 'cancelled', balance: 500_000 });
  expect(
    (await listMandates(services.starters, { mandate_id: listed.records[0].mandate_id as string })).records[0].status,
  ).toBe('cancelled');
  await recordHistory(handle, 'mandate-variable-lifecycle');

  // Secrets are not in history at all, not even encrypted: only their claim-check handles.
  // (Codes as JSON strings: the phone number 08012345678 holds the digits 123456.)
  await expectNoSecretsIn(handle, [i.customer.bvn, JSON.stringify(MANDATE_OTP), '"000000"']);
});

it('an expired OTP session (sandbox clock): a new OTP is sent and then approves', async () => {
  const i = input();
  await startMandate(ctx(), i);
  await waitFor(i.mandateRef, 'awaiting_otp');
  await sandbox().advanceClock(11 * 60 * 1000);
  const expired = await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP).catch((e: unknown) => e);
  expect(causeOf(expired)).toContain('a new OTP was sent');
  expect((await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP)).status).toBe('approved');
  await cancelMandate(ctx(), i.mandateRef);
});

it('a session that keeps expiring ends the mandate expired; it is released at the service, so the e-mail serves a new mandate', async () => {
  const i = input({ maxSessionResends: 1 });
  const handle = await startMandate(ctx(), i);
  await waitFor(i.mandateRef, 'awaiting_otp');
  expect((await resendMandateOtp(ctx(), i.mandateRef)).status).toBe('awaiting_otp'); // D6 on request
  await sandbox().advanceClock(11 * 60 * 1000);
  expect(causeOf(await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP).catch((e: unknown) => e))).toContain(
    'a new OTP was sent',
  );
  await sandbox().advanceClock(11 * 60 * 1000);
  expect(causeOf(await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP).catch((e: unknown) => e))).toContain(
    'the mandate has expired',
  );
  const final = await handle.result();
  expect(final).toMatchObject({ status: 'expired', endReason: 'the OTP session expired too often' });
  expect(await serviceRecord(final.mandateId!)).toMatchObject({ status: 'cancelled' });
  const again = input({ customerEmail: i.customerEmail });
  await startMandate(ctx(), again);
  await waitFor(again.mandateRef, 'awaiting_otp');
  await requestMandateCancel(ctx(), again.mandateRef);
  await waitFor(again.mandateRef, 'cancelled');
});

it('D3 answers lost: applied-then-dropped is found by verify, dropped-before and a 503 are resent with the same reference; each applied once', async () => {
  const i = input();
  const handle = await startMandate(ctx(), i);
  await waitFor(i.mandateRef, 'awaiting_otp');
  await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP);

  await fault({ path: '/transaction/mandate/debit', kind: 'drop-after-processing' });
  const ref = (n: number) => debitKeyReference(i.mandateRef, `f-${n}`);
  expect(await debitMandate(ctx(), i.mandateRef, 100_000, { idempotencyKey: 'f-1' })).toMatchObject({
    reference: ref(1),
    status: 'success',
    confirmedBy: 'requery',
  });
  await fault({ path: '/transaction/mandate/debit', kind: 'drop-before-processing' });
  expect(await debitMandate(ctx(), i.mandateRef, 200_000, { idempotencyKey: 'f-2' })).toMatchObject({
    reference: ref(2),
    status: 'success',
    confirmedBy: 'resend',
  });
  await fault({ path: '/transaction/mandate/debit', kind: 'error5xx' });
  expect(await debitMandate(ctx(), i.mandateRef, 300_000, { idempotencyKey: 'f-3' })).toMatchObject({
    reference: ref(3),
    status: 'success',
    confirmedBy: 'resend',
  });

  for (const n of [1, 2, 3]) expect(await ledger(ref(n))).toHaveLength(1);
  const state = await getMandateState(ctx(), i.mandateRef);
  expect(state).toMatchObject({ totalDebited: 600_000, balance: 400_000, unresolvedDebits: [], failures: [] });
  expect(await serviceRecord(state.mandateId!)).toMatchObject({ total_debited: 600_000, balance: 400_000 });
  // Spending the balance ends the mandate.
  expect(await debitMandate(ctx(), i.mandateRef, 400_000)).toMatchObject({ status: 'success' });
  expect(await handle.result()).toMatchObject({
    status: 'completed',
    endReason: 'balance spent',
    balance: 0,
    totalDebited: 1_000_000,
  });
  await recordHistory(handle, 'mandate-variable-d3-faults');
});

it('D3 answers 200 with status pending (requeried by verify until the service settles it) and failed (no money moved)', async () => {
  const i = input({ pendingRequeryMs: [300, 600, 1_200, 2_400, 4_800] } as Partial<MandateRequest>);
  const handle = await startMandate(ctx(), i);
  await waitFor(i.mandateRef, 'awaiting_otp');
  await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP);
  const mandateId = (await getMandateState(ctx(), i.mandateRef)).mandateId!;
  await sandboxAdminCall(services.sandboxUrl!, 'POST', `/mandates/${mandateId}/debit-outcomes`, {
    outcomes: ['pending', 'failed'],
  });

  const pendingRef = debitKeyReference(i.mandateRef, 'slow-1');
  const pending = debitMandate(ctx(), i.mandateRef, 250_000, { idempotencyKey: 'slow-1' });
  const unresolved = await eventually(
    async () => (await getMandateState(ctx(), i.mandateRef)).unresolvedDebits,
    (debits) => debits.length > 0,
    { timeoutMs: 30_000, intervalMs: 50, description: 'the pending debit', returnLastOnTimeout: true },
  );
  expect(unresolved).toEqual([
    expect.objectContaining({ reference: pendingRef, status: 'pending', serviceStatus: 'pending' }),
  ]);
  expect(await ledger(pendingRef)).toHaveLength(0); // a 200 saying pending moved no money yet
  await sandboxAdminCall(services.sandboxUrl!, 'POST', `/mandate-debits/${pendingRef}/settle`, { status: 'success' });
  expect(await pending).toMatchObject({ status: 'success', confirmedBy: 'requery' });

  const failedDebit = await debitMandate(ctx(), i.mandateRef, 100_000, { idempotencyKey: 'fail-1' });
  expect(failedDebit).toMatchObject({ status: 'failed', serviceStatus: 'failed' });
  expect(await ledger(failedDebit.reference)).toHaveLength(0);
  expect(await getMandateState(ctx(), i.mandateRef)).toMatchObject({
    totalDebited: 250_000,
    balance: 750_000,
    unresolvedDebits: [],
  });
  expect(await serviceRecord(mandateId)).toMatchObject({ total_debited: 250_000, balance: 750_000 });
  await cancelMandate(ctx(), i.mandateRef);
  expect((await handle.result()).status).toBe('cancelled');
});

it('D1 answer lost after the service created the mandate: found by reference, cancelled there, the flow fails; the e-mail is free again', async () => {
  const i = input();
  await fault({ path: '/transaction/mandate/create', kind: 'drop-after-processing' });
  const final = await (await startMandate(ctx(), i)).result();
  expect(final).toMatchObject({ status: 'failed', endReason: expect.stringContaining('creation response was lost') });
  expect((await listMandates(services.starters, { merchant_ref: i.mandateRef })).records[0]).toMatchObject({
    status: 'cancelled',
  });
  const again = input({ customerEmail: i.customerEmail });
  await startMandate(ctx(), again);
  await waitFor(again.mandateRef, 'awaiting_otp');
  await cancelMandate(ctx(), again.mandateRef);
});

it('D5 listing through the starters: filters, a page with next_cursor, the page after it, and every page', async () => {
  const lastName = `L${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  const refs: string[] = [];
  for (let n = 0; n < 3; n++) {
    const i = input({
      customer: { bvn: '22212345678', firstName: 'Ada', lastName, address: '1 Way', phone: '08012345678' },
    });
    refs.push(i.mandateRef);
    await startMandate(ctx(), i);
    await waitFor(i.mandateRef, 'awaiting_otp');
  }
  await submitMandateOtp(ctx(), refs[0], MANDATE_OTP);
  const customer_name = `Ada ${lastName}`;
  const first = await listMandates(services.starters, { customer_name, page_size: 2 });
  expect(first).toMatchObject({ has_more: true, page_size: 2, next_cursor: expect.anything() });
  expect(first.records).toHaveLength(2);
  const second = await listMandates(services.starters, { customer_name, page_size: 2 }, String(first.next_cursor));
  expect(second).toMatchObject({ has_more: false, prev_cursor: expect.anything() });
  expect([...first.records, ...second.records].map((r) => r.reference).sort()).toEqual([...refs].sort());
  const all: string[] = [];
  for await (const r of listAllMandates(services.starters, { customer_name, page_size: 1 }))
    all.push(String(r.reference));
  expect(all.sort()).toEqual([...refs].sort());
  expect(
    (await listMandates(services.starters, { customer_name, status: 'approved' })).records.map((r) => r.reference),
  ).toEqual([refs[0]]);
  expect(
    (await listMandates(services.starters, { customer_name, is_approved: false, debit_type: 'VARIABLE' })).records,
  ).toHaveLength(2);
  expect((await listMandates(services.starters, { merchant_ref: refs[1] })).records[0]).toMatchObject({
    status: 'initiated',
    customer_name,
  });
  const unknown = await listMandates(services.starters, { merchant_ref: 'NO-SUCH-REF' }).catch((e: unknown) => e);
  expect(String((unknown as Error).message)).toContain('No mandate found for reference NO-SUCH-REF');
  for (const ref of refs) await cancelMandate(ctx(), ref);
});

it('a duplicate customer email ends the second mandate as failed with the service message', async () => {
  const email = `dup-${randomUUID()}@example.com`;
  const first = input({ customerEmail: email });
  await startMandate(ctx(), first);
  await waitFor(first.mandateRef, 'awaiting_otp');
  const second = input({ customerEmail: email });
  const final = await (await startMandate(ctx(), second)).result();
  expect(final).toMatchObject({
    status: 'failed',
    endReason: expect.stringContaining('Customer already exists with the same email address.'),
  });
  await cancelMandate(ctx(), first.mandateRef);
});

it('a FIXED mandate that sends its own debits runs its first scheduled debit; the starter refuses bad input naming the field', async () => {
  const today = new Date().toISOString().slice(0, 10);
  const i = input({
    debitType: 'fixed',
    // This flow sends its own D3s (not the default); the sandbox's own debit of the date has another reference.
    fixedDebits: 'send',
    fixed: { frequency: 'MONTHLY', interval: 1, initialDebitAmount: 250_000, initialDebitDate: today },
  });
  await startMandate(ctx(), i);
  await waitFor(i.mandateRef, 'awaiting_otp');
  await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP);
  const afterFirst = await eventually(
    () => getMandateState(ctx(), i.mandateRef),
    // debitCount counts a debit once it is sent; its outcome comes after the service's answer.
    (state) => state.recentDebits.some((d) => d.status !== 'pending'),
    { timeoutMs: 45_000, description: 'the first scheduled debit settled', returnLastOnTimeout: true },
  );
  expect(afterFirst).toMatchObject({
    debitCount: 1,
    totalDebited: 250_000,
    balance: 750_000,
    nextDebitAt: expect.any(String),
  });
  expect(await ledger(`${i.mandateRef}-D1`)).toHaveLength(1);
  await cancelMandate(ctx(), i.mandateRef);

  const bad = await startMandate(ctx(), input({ debitType: 'fixed', accountNumber: '123' })).catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(StarterInputError);
  expect((bad as StarterInputError).issues).toEqual(
    expect.arrayContaining([
      { field: 'accountNumber', rule: 'must be 10 digits' },
      { field: 'fixed', rule: 'is required for a FIXED mandate' },
    ]),
  );
  const badFixed = await startMandate(
    ctx(),
    input({
      debitType: 'fixed',
      fixed: { frequency: 'WEEKLY', interval: 8, initialDebitAmount: 19_000, initialDebitDate: '2001-01-01' },
    }),
  ).catch((e: unknown) => e);
  expect((badFixed as StarterInputError).issues).toEqual(
    expect.arrayContaining([
      { field: 'fixed.interval', rule: 'must be at most 7 for WEEKLY (one debit a day)' },
      { field: 'fixed.initialDebitAmount', rule: 'must be at least 20000 kobo (N200)' },
      { field: 'fixed.initialDebitDate', rule: 'must lie between startDate and endDate' },
    ]),
  );
});

/** Neither the stored history (encrypted payloads) nor its payloads decrypted with the codec key hold any of `secrets`. */
async function expectNoSecretsIn(handle: WorkflowHandle, secrets: string[]): Promise<string> {
  const plain = await rawHistoryText(handle);
  const { raw, decoded, payloads } = await historyTexts(handle, config.encryption);
  expect(payloads).toBeGreaterThan(3);
  expect(decoded).toContain('"bvnHandle":"cc_'); // the decoding did work, and the input holds a handle
  for (const secret of secrets) {
    expect(plain).not.toContain(secret);
    expect(raw).not.toContain(secret);
    expect(decoded).not.toContain(secret);
  }
  return decoded;
}

/** The BVN handle the flow was started with (read from its decoded input). */
async function bvnHandleOf(handle: WorkflowHandle): Promise<string> {
  const { decoded } = await historyTexts(handle, config.encryption);
  return /"bvnHandle":"(cc_[A-Za-z0-9_-]{64})"/.exec(decoded)![1];
}

describe('claim check: the BVN and the OTP are sealed by the starters', () => {
  it('the sealed BVN reaches the service (D1 accepted it) and is deleted after D1; the sealed OTP approves; neither is in history', async () => {
    const i = input({
      customer: { bvn: '22298765432', firstName: 'Ada', lastName: 'Obi', address: '1 Way', phone: '08012345678' },
    });
    const handle = await startMandate(ctx(), i);
    await waitFor(i.mandateRef, 'awaiting_otp'); // the sandbox refuses D1 without an 11-digit BVN
    const bvnHandle = await bvnHandleOf(handle);
    await expect(services.claimCheck.open(bvnHandle, 'bvn')).rejects.toThrow(SecretUnavailableError);
    expect((await listMandates(services.starters, { merchant_ref: i.mandateRef })).records[0]).toMatchObject({
      status: 'initiated',
    });

    const badFormat = await submitMandateOtp(ctx(), i.mandateRef, '12ab').catch((e: unknown) => e);
    expect(badFormat).toBeInstanceOf(StarterInputError);
    expect((badFormat as StarterInputError).issues).toEqual([{ field: 'otp', rule: 'must be 4 to 8 digits' }]);
    expect((badFormat as Error).message).toBe('invalid mandate OTP input: otp must be 4 to 8 digits');
    expect((await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP)).status).toBe('approved');
    await cancelMandate(ctx(), i.mandateRef);
    await expectNoSecretsIn(handle, ['22298765432', JSON.stringify(MANDATE_OTP)]);
  });

  it('an OTP whose sealed record expired: the Update fails with SecretUnavailable "send it again", the flow keeps waiting, the next OTP approves', async () => {
    const i = input();
    await startMandate(ctx(), i);
    await waitFor(i.mandateRef, 'awaiting_otp');
    const expired = await services.claimCheck.seal('mandate-otp', MANDATE_OTP, 1);
    await new Promise((r) => setTimeout(r, 20));
    const err = await client()
      .workflow.getHandle(mandateWorkflowId(i.mandateRef))
      .executeUpdate(submitMandateOtpUpdate, { args: [expired] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (err as WorkflowUpdateFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe(SECRET_UNAVAILABLE);
    expect(cause.message).toContain('send it again');
    expect((await getMandateState(ctx(), i.mandateRef)).status).toBe('awaiting_otp');
    expect((await submitMandateOtp(ctx(), i.mandateRef, MANDATE_OTP)).status).toBe('approved');
    await cancelMandate(ctx(), i.mandateRef);
  });

  it('a BVN whose sealed record expired before D1: the flow ends failed with "start the mandate again with the BVN", and no mandate exists at the service', async () => {
    const {
      customer: { bvn, ...customer },
      ...rest
    } = input();
    const bvnHandle = await services.claimCheck.seal('bvn', bvn, 1);
    await new Promise((r) => setTimeout(r, 20));
    const i: MandateInput = { ...rest, customer: { ...customer, bvnHandle } };
    const h = await client().workflow.start<typeof mandateWorkflow>('mandateWorkflow', {
      workflowId: mandateWorkflowId(i.mandateRef),
      taskQueue: config.temporal.taskQueue,
      args: [i],
    });
    const final = await h.result();
    expect(final).toMatchObject({
      status: 'failed',
      endReason: expect.stringContaining('start the mandate again with the BVN'),
    });
    expect(await h.query(mandateStateQuery)).toMatchObject({ status: 'failed' });
    const none = await listMandates(services.starters, { merchant_ref: i.mandateRef }).catch((e: unknown) => e);
    expect(String((none as Error).message)).toContain('No mandate found');
    // Starting again with the BVN (same reference) works.
    const again = await startMandate(ctx(), { ...rest, customer: { ...customer, bvn } });
    await waitFor(i.mandateRef, 'awaiting_otp');
    await cancelMandate(ctx(), i.mandateRef);
    expect((await again.result()).status).toBe('cancelled');
  });
});
