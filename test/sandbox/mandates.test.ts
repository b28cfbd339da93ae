// Mandates (D1-D6) through the API client against the sandbox: both built from the spec.
import { randomUUID } from 'node:crypto';
import { PaymentsClient, BadRequestError, DependencyFailedError, NotFoundError, PermissionDeniedError } from '../../src/api';
import { startSandbox, type Sandbox, DEFAULT_SANDBOX_KEY, MANDATE_OTP } from '../../src/sandbox';

let sb: Sandbox;
let api: PaymentsClient;
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  api = new PaymentsClient({ baseUrl: sb.url, secretKey: DEFAULT_SANDBOX_KEY, timeoutMs: 2_000 });
});
afterAll(async () => {
  await api.close();
  await sb.close();
});

const mandate = (email = `c-${randomUUID()}@example.com`, extra: Record<string, unknown> = {}) => ({
  mandate_type: 'emandate', debit_type: 'variable', amount: 1_000_000, account_number: '0123456789', bank_code: '058', description: 'Subscription',
  start_date: '2026-11-22', end_date: '2027-11-22', customer_email: email,
  customerInformation: { identity: { type: 'bvn', number: '22212345678' }, firstName: 'Ada', lastName: 'Obi', address: '1 Way', phone: '08012345678' },
  ...extra,
}) as never;
const advance = (ms: number) => fetch(`${sb.url}/__admin/clock/advance`, { method: 'POST', body: JSON.stringify({ ms }) });

it('creates, approves with the OTP, debits down the balance, and lists', async () => {
  const created = await api.mandates.create(mandate());
  expect(created.data).toMatchObject({ status: 'initiated', next_action: 'send_otp' });
  const { mandate_id, session_token } = created.data as { mandate_id: string; session_token: string };
  const approved = await api.mandates.validateOtp({ session_token, otp: MANDATE_OTP } as never);
  expect(approved.data).toMatchObject({ mandate_id, status: 'approved', ready_to_debit: true, mandate_reference_number: expect.any(String) });
  const debit = await api.mandates.debit({ amount: 250_000, mandate_id, transaction_reference: `${mandate_id}-D1`, narration: 'Nov', customer_email: 'x@example.com' } as never);
  expect(debit.data).toMatchObject({ amount: 250_000, transaction_reference: `${mandate_id}-D1` });
  await expect(api.mandates.debit({ amount: 250_000, mandate_id, transaction_reference: `${mandate_id}-D1`, narration: 'Nov', customer_email: 'x@example.com' } as never)).rejects.toBeInstanceOf(BadRequestError);
  await expect(api.mandates.debit({ amount: 900_000, mandate_id, transaction_reference: `${mandate_id}-D2`, narration: 'Nov', customer_email: 'x@example.com' } as never)).rejects.toThrow(/balance is lesser than debit amount/);
  const listed = await api.mandates.list({ mandate_id } as never);
  expect((listed.data as { records: { balance: number; total_debited: number }[] }).records[0]).toMatchObject({ balance: 750_000, total_debited: 250_000 });
  expect(sb.ledger().filter((e) => e.reference === `${mandate_id}-D1`)).toHaveLength(1);
});

it('refuses a debit below N200 at the sandbox too (the client refuses it before sending)', async () => {
  const created = await api.mandates.create(mandate());
  const { mandate_id, session_token } = created.data as { mandate_id: string; session_token: string };
  await api.mandates.validateOtp({ session_token, otp: MANDATE_OTP } as never);
  await expect(api.mandates.debit({ amount: 19_999, mandate_id, transaction_reference: 'low', narration: 'n', customer_email: 'x@example.com' } as never)).rejects.toMatchObject({ name: 'RequestValidationError' });
  const res = await fetch(`${sb.url}/transaction/mandate/debit`, { method: 'POST', headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` }, body: JSON.stringify({ amount: 19_999, mandate_id, transaction_reference: 'low' }) });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { message: string }).message).toBe('Minimum amount for direct debit is N200.');
});

it('expires the OTP session on the clock (424) and resend opens a new window', async () => {
  const created = await api.mandates.create(mandate());
  const { session_token } = created.data as { session_token: string };
  await advance(11 * 60 * 1000);
  await expect(api.mandates.validateOtp({ session_token, otp: MANDATE_OTP } as never)).rejects.toBeInstanceOf(DependencyFailedError);
  await api.mandates.resendOtp({ session_token } as never);
  await expect(api.mandates.validateOtp({ session_token, otp: '000000' } as never)).rejects.toBeInstanceOf(BadRequestError);
  expect((await api.mandates.validateOtp({ session_token, otp: MANDATE_OTP } as never)).data).toMatchObject({ status: 'approved' });
});

it('refuses a duplicate customer email, reports cancelling twice, and a lookup of an unknown reference', async () => {
  const email = `dup-${randomUUID()}@example.com`;
  const first = await api.mandates.create(mandate(email));
  await expect(api.mandates.create(mandate(email))).rejects.toThrow('Customer already exists with the same email address.');
  const id = (first.data as { mandate_id: string }).mandate_id;
  expect((await api.mandates.cancel({ mandateIds: [id] } as never)).data).toEqual({ canceledMandates: [id], failedMandates: [] });
  expect((await api.mandates.cancel({ mandateIds: [id] } as never)).data).toEqual({ canceledMandates: [], failedMandates: [{ mandateId: id, failureReason: 'Mandate already cancelled' }] });
  await expect(api.mandates.list({ merchant_ref: 'no-such-ref' } as never)).rejects.toBeInstanceOf(NotFoundError);
});

it('answers a wrong key on mandate endpoints with 403 naming the prefix', async () => {
  const wrong = new PaymentsClient({ baseUrl: sb.url, secretKey: 'sandbox_sk_not_registered', timeoutMs: 2_000 });
  await expect(wrong.mandates.create(mandate())).rejects.toMatchObject({ constructor: PermissionDeniedError, message: expect.stringContaining('sandbox_sk_') });
  await wrong.close();
});
