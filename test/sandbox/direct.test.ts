// Direct card/bank/USSD payments (B1-B5), verify, and the E-1 webhook, through the API client
// against the sandbox; the webhook signature is checked with openssl, independently of our code.
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { PaymentsClient, BadRequestError, PermissionDeniedError } from '../../src/api';
import { startSandbox, type Sandbox, DEFAULT_SANDBOX_KEY, SANDBOX_PIN, SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';

interface Received { raw: Buffer; signature: string }
let received: Received[] = [];
let receiver: Server;
let receiverStatus = 200;
let sb: Sandbox;
let api: PaymentsClient;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ raw: Buffer.concat(chunks), signature: String(req.headers['x-service-encrypted-body']) });
      res.writeHead(receiverStatus);
      res.end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const port = (receiver.address() as { port: number }).port;
  sb = await startSandbox({ port: 0, webhookUrl: `http://127.0.0.1:${port}/webhooks`, webhookRetryScheduleMs: [50, 50] });
  api = new PaymentsClient({ baseUrl: sb.url, secretKey: DEFAULT_SANDBOX_KEY, timeoutMs: 2_000 });
});
afterAll(async () => {
  await api.close();
  await sb.close();
  await new Promise((r) => receiver.close(r));
});
beforeEach(() => {
  received = [];
  receiverStatus = 200;
});

const waitFor = async <T>(fn: () => T | undefined, ms = 3000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
};
const charge = (ref: string, number: string, amount = 500_000) =>
  api.direct.chargeCard({ transaction_reference: ref, amount, currency: 'NGN', redirect_url: 'https://merchant.example/return', customer: { name: 'Ada', email: 'ada@example.com' }, card: { number, cvv: '123', expiry_month: '12', expiry_year: '29' } } as never);
const openssl = (raw: Buffer, key: string) =>
  execFileSync('openssl', ['dgst', '-sha512', '-hmac', key], { input: raw }).toString().trim().split('= ').pop()!;

it('card PIN then OTP → Success, one ledger charge, and an E-1 webhook whose signature openssl agrees with', async () => {
  const ref = `card-${randomUUID()}`;
  expect((await charge(ref, TEST_CARDS.pinThenOtp)).data).toMatchObject({ transaction_status: 'ValidatePin' });
  await expect(api.direct.authorizeCard({ transaction_reference: ref, authorization: { pin: '0000' } } as never)).rejects.toBeInstanceOf(BadRequestError);
  expect((await api.direct.authorizeCard({ transaction_reference: ref, authorization: { pin: SANDBOX_PIN } } as never)).data).toMatchObject({ transaction_status: 'ValidateOTP' });
  const done = await api.direct.authorizeCard({ transaction_reference: ref, authorization: { otp: SANDBOX_OTP } } as never);
  expect(done).toMatchObject({ message: 'Validate OTP Successful.', data: { transaction_status: 'Success' } });
  expect((await api.transactions.verify({ transaction_ref: ref })).data.transaction_status).toBe('Success');
  expect(sb.ledger().filter((e) => e.reference === ref)).toHaveLength(1);
  const hook = await waitFor(() => received.find((r) => r.raw.includes(ref)));
  expect(hook.signature).toMatch(/^[0-9A-F]{128}$/); // uppercase hex, as the service sends
  expect(hook.signature.toLowerCase()).toBe(openssl(hook.raw, DEFAULT_SANDBOX_KEY));
  expect(JSON.parse(hook.raw.toString())).toMatchObject({ Event: 'charge_successful', TransactionRef: ref, Body: { amount: 500_000, transaction_status: 'Success', transaction_type: 'Card' } });
});

it('OTP-only card below 7,500 NGN; PIN first at or above', async () => {
  expect((await charge(`otp-${randomUUID()}`, TEST_CARDS.otpOnly, 749_999)).data.transaction_status).toBe('ValidateOTP');
  expect((await charge(`otp-${randomUUID()}`, TEST_CARDS.otpOnly, 750_000)).data.transaction_status).toBe('ValidatePin');
});

it('3DS: auth_url is a real page; completing it succeeds and sends E-1', async () => {
  const ref = `3ds-${randomUUID()}`;
  const res = await charge(ref, TEST_CARDS.threeDs);
  expect(res.data.transaction_status).toBe('ThreeDSecure');
  const page = await fetch(res.data.auth_url as string);
  expect(await page.text()).toContain('<form method="post"');
  expect((await api.transactions.verify({ transaction_ref: ref })).data.transaction_status).toBe('Pending');
  const done = await fetch(`${res.data.auth_url}/complete`, { method: 'POST', redirect: 'manual' });
  expect(done.status).toBe(302);
  expect(done.headers.get('location')).toBe(`https://merchant.example/return?reference=${ref}`);
  expect((await api.transactions.verify({ transaction_ref: ref })).data.transaction_status).toBe('Success');
  await waitFor(() => received.find((r) => r.raw.includes(ref)));
});

it('refuses a duplicate reference and fails after three wrong OTPs', async () => {
  const ref = `dup-${randomUUID()}`;
  await charge(ref, TEST_CARDS.otpOnly);
  await expect(charge(ref, TEST_CARDS.otpOnly)).rejects.toThrow('Duplicate transaction reference');
  for (let i = 0; i < 3; i++) await expect(api.direct.authorizeCard({ transaction_reference: ref, authorization: { otp: '000000' } } as never)).rejects.toBeInstanceOf(BadRequestError);
  expect((await api.transactions.verify({ transaction_ref: ref })).data.transaction_status).toBe('Failed');
  expect(sb.ledger().filter((e) => e.reference === ref)).toHaveLength(0);
});

it('expires a pending OTP step on the sandbox clock', async () => {
  const ref = `exp-${randomUUID()}`;
  await charge(ref, TEST_CARDS.otpOnly);
  await fetch(`${sb.url}/__admin/clock/advance`, { method: 'POST', body: JSON.stringify({ ms: 11 * 60 * 1000 }) });
  await expect(api.direct.authorizeCard({ transaction_reference: ref, authorization: { otp: SANDBOX_OTP } } as never)).rejects.toBeInstanceOf(BadRequestError);
  expect((await api.transactions.verify({ transaction_ref: ref })).data.transaction_status).toBe('Failed');
});

it('bank: ValidateTOKEN for accounts starting with 1, ValidateOTP otherwise; validate-payment completes', async () => {
  const bank = (ref: string, account: string) => api.direct.chargeBank({ transaction_reference: ref, amount: 100_000, currency: 'NGN', bank: { bank_code: '058', account_or_phoneno: account }, customer: { name: 'Ada', email: 'ada@example.com' } } as never);
  const tokenRef = `bank-${randomUUID()}`;
  expect((await bank(tokenRef, '1234567890')).data.auth_model).toBe('ValidateTOKEN');
  expect((await bank(`bank-${randomUUID()}`, '0123456789')).data.auth_model).toBe('ValidateOTP');
  const v = await api.direct.validateBank({ transaction_reference: tokenRef, authorization: { otp_token: SANDBOX_OTP } } as never);
  expect(v).toMatchObject({ message: 'Charge attempted', data: { auth_model: 'ValidateTOKEN' } });
  expect((await api.transactions.verify({ transaction_ref: tokenRef })).data.transaction_status).toBe('Success');
});

it('USSD: a code with an expiry, paid by the payer before it; abandoned after', async () => {
  const ussd = (ref: string) => api.direct.initiateUssd({ transaction_reference: ref, amount: 100_000, currency: 'NGN', ussd: { bank_code: '058' }, customer: { name: 'Ada', email: 'ada@example.com' } } as never);
  const paid = `ussd-${randomUUID()}`;
  const res = await ussd(paid);
  expect(res.data).toMatchObject({ auth_model: 'USSDCodeGenerated', ussd_details: { ussd_reference: expect.stringMatching(/^\*058\*/), expiresAt: expect.any(String) } });
  expect((await fetch(`${sb.url}/__admin/ussd/${paid}/pay`, { method: 'POST' })).status).toBe(200);
  expect((await api.transactions.verify({ transaction_ref: paid })).data.transaction_status).toBe('Success');
  const late = `ussd-${randomUUID()}`;
  await ussd(late);
  await fetch(`${sb.url}/__admin/clock/advance`, { method: 'POST', body: JSON.stringify({ ms: 11 * 60 * 1000 }) });
  expect((await fetch(`${sb.url}/__admin/ussd/${late}/pay`, { method: 'POST' })).status).toBe(400);
  expect((await api.transactions.verify({ transaction_ref: late })).data.transaction_status).toBe('Abandoned');
});

it('webhook faults: a duplicate delivery, and a failed delivery retried on the schedule', async () => {
  await fetch(`${sb.url}/__admin/webhook-faults`, { method: 'POST', body: JSON.stringify({ kind: 'duplicate', count: 1 }) });
  const dupRef = `wh-${randomUUID()}`;
  await charge(dupRef, TEST_CARDS.otpOnly);
  await api.direct.authorizeCard({ transaction_reference: dupRef, authorization: { otp: SANDBOX_OTP } } as never);
  await waitFor(() => (received.filter((r) => r.raw.includes(dupRef)).length === 2 ? true : undefined));

  receiverStatus = 500;
  const retryRef = `wh-${randomUUID()}`;
  await charge(retryRef, TEST_CARDS.otpOnly);
  await api.direct.authorizeCard({ transaction_reference: retryRef, authorization: { otp: SANDBOX_OTP } } as never);
  await waitFor(() => (received.filter((r) => r.raw.includes(retryRef)).length === 3 ? true : undefined));
  const log = (await (await fetch(`${sb.url}/__admin/webhooks`)).json()) as { data: { payments: { ref: string; attempt: number }[] } };
  expect(log.data.payments.filter((d) => d.ref === retryRef).map((d) => d.attempt)).toEqual([1, 2, 3]);
});

it('webhook faults: held deliveries are released out of order', async () => {
  await fetch(`${sb.url}/__admin/webhook-faults`, { method: 'POST', body: JSON.stringify({ kind: 'hold', count: 2 }) });
  const refs = [`o1-${randomUUID()}`, `o2-${randomUUID()}`];
  for (const ref of refs) {
    await charge(ref, TEST_CARDS.otpOnly);
    await api.direct.authorizeCard({ transaction_reference: ref, authorization: { otp: SANDBOX_OTP } } as never);
  }
  await new Promise((r) => setTimeout(r, 100));
  expect(received.filter((r) => refs.some((ref) => r.raw.includes(ref)))).toHaveLength(0);
  const released = (await (await fetch(`${sb.url}/__admin/webhook-faults/release`, { method: 'POST' })).json()) as { data: { released: number } };
  expect(released.data.released).toBe(2);
  await waitFor(() => (received.filter((r) => refs.some((ref) => r.raw.includes(ref))).length === 2 ? true : undefined));
  const order = received.filter((r) => refs.some((ref) => r.raw.includes(ref))).map((r) => (r.raw.includes(refs[0]) ? 0 : 1));
  expect(order).toEqual([1, 0]);
});

it('answers a wrong key on the direct API with 403 naming the sandbox prefix', async () => {
  const wrong = new PaymentsClient({ baseUrl: sb.url, secretKey: 'sandbox_sk_not_registered', timeoutMs: 2_000 });
  await expect(wrong.transactions.verify({ transaction_ref: 'x' })).rejects.toMatchObject({ constructor: PermissionDeniedError, message: expect.stringContaining('sandbox_sk_') });
  await wrong.close();
});
