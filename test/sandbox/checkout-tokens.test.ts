// Hosted checkout (A1, its page and channels, A2), tokens (A3-A5) and the transaction query (A6),
// through the API client against the sandbox.
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { PaymentsClient, BadRequestError, AuthenticationError } from '../../src/api';
import { startSandbox, type Sandbox, DEFAULT_SANDBOX_KEY, SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const hooks: Record<string, any>[] = [];
let receiver: Server;
let sb: Sandbox;
let api: PaymentsClient;
beforeAll(async () => {
  receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      hooks.push(JSON.parse(raw) as Record<string, any>);
      res.end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  sb = await startSandbox({ port: 0, webhookUrl: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/webhooks` });
  api = new PaymentsClient({ baseUrl: sb.url, secretKey: DEFAULT_SANDBOX_KEY, timeoutMs: 2_000 });
});
afterAll(async () => {
  await api.close();
  await sb.close();
  await new Promise((r) => receiver.close(r));
});

const post = async (url: string, body: unknown = {}) => {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const hookFor = async (ref: string) => {
  for (let i = 0; i < 100; i++) {
    const h = hooks.find((x) => x.TransactionRef === ref);
    if (h) return h;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no webhook for ${ref}`);
};
const initiate = (ref: string, extra: Record<string, unknown> = {}) =>
  api.checkout.initiate({ amount: 250_000, email: 'ada@example.com', currency: 'NGN', initiate_type: 'inline', transaction_ref: ref, callback_url: 'https://merchant.example/return', ...extra } as never);

it('checkout by card: checkout_url opens a page; the card channel takes PIN and OTP; a recurring payment yields a token', async () => {
  const ref = `co-${randomUUID()}`;
  const res = await initiate(ref, { is_recurring: true, metadata: { order: 'A-1' } });
  expect(res.data).toMatchObject({ transaction_ref: ref, transaction_amount: 250_000, is_recurring: true, authorized_channels: ['card', 'bank', 'ussd', 'transfer'] });
  const page = await fetch(res.data.checkout_url);
  expect(await page.text()).toContain('Pay by card');
  expect((await api.transactions.verify({ transaction_ref: ref })).data.transaction_status).toBe('Pending');
  expect((await post(`${res.data.checkout_url}/card`, { number: TEST_CARDS.pinThenOtp, cvv: '123', expiry_month: '12', expiry_year: '29' })).body.data.transaction_status).toBe('ValidatePin');
  expect((await post(`${res.data.checkout_url}/authorize`, { pin: SANDBOX_PIN })).body.data.transaction_status).toBe('ValidateOTP');
  expect((await post(`${res.data.checkout_url}/authorize`, { otp: SANDBOX_OTP })).body.data.transaction_status).toBe('Success');
  const hook = await hookFor(ref);
  expect(hook.Body).toMatchObject({ is_recurring: true, meta: { order: 'A-1' }, payment_information: { token_id: expect.stringMatching(/^AUTH_/) } });

  // A4: later charges with the token; the same reference twice charges once.
  const tokenId = hook.Body.payment_information.token_id as string;
  const cycleRef = `${ref}-C1`;
  expect((await api.tokens.charge({ amount: 250_000, token_id: tokenId, transaction_ref: cycleRef })).data).toMatchObject({ transaction_ref: cycleRef, transaction_status: 'Success' });
  await expect(api.tokens.charge({ amount: 250_000, token_id: tokenId, transaction_ref: cycleRef })).rejects.toBeInstanceOf(BadRequestError);
  expect(sb.ledger().filter((e) => e.reference === cycleRef)).toEqual([expect.objectContaining({ kind: 'token_charge', amount: 250_000 })]);
  expect((await hookFor(cycleRef)).Body.payment_information.token_id).toBe(tokenId);

  // A5: cancel; a second cancel and a charge on the cancelled token are refused.
  expect((await api.tokens.cancel({ auth_code: [tokenId] })).data.auth_code).toEqual([tokenId]);
  await expect(api.tokens.cancel({ auth_code: [tokenId] })).rejects.toThrow('Recurring Payment was not cancelled');
  await expect(api.tokens.charge({ amount: 250_000, token_id: tokenId, transaction_ref: `${ref}-C2` })).rejects.toBeInstanceOf(BadRequestError);
});

it('checkout by transfer: the dynamic account is paid through simulate (A2)', async () => {
  const ref = `tr-${randomUUID()}`;
  const res = await initiate(ref);
  const account = (await post(`${res.data.checkout_url}/transfer`)).body.data as { virtual_account_number: string; amount: number };
  expect(account.virtual_account_number).toMatch(/^\d{10}$/);
  expect((await api.checkout.simulateTransfer({ virtual_account_number: account.virtual_account_number, amount: account.amount } as never)).data).toBe('Payment successful');
  expect((await api.transactions.verify({ transaction_ref: ref })).data.transaction_status).toBe('Success');
  expect((await hookFor(ref)).Body.transaction_type).toBe('Transfer');
  expect(sb.ledger().filter((e) => e.reference === ref)).toEqual([expect.objectContaining({ kind: 'checkout' })]);
});

it('checkout by bank and by USSD through the modal channels', async () => {
  const bankRef = `cb-${randomUUID()}`;
  const bank = await initiate(bankRef);
  expect((await post(`${bank.data.checkout_url}/bank`, { account_or_phoneno: '0123456789', otp_token: '000000' })).status).toBe(400);
  expect((await post(`${bank.data.checkout_url}/bank`, { account_or_phoneno: '0123456789', otp_token: SANDBOX_OTP })).body.data.transaction_status).toBe('Success');
  expect((await hookFor(bankRef)).Body.transaction_type).toBe('Bank');
  const ussdRef = `cu-${randomUUID()}`;
  const ussd = await initiate(ussdRef);
  expect((await post(`${ussd.data.checkout_url}/ussd`, { bank_code: '058' })).body.data.ussd_reference).toMatch(/^\*058\*/);
  expect((await post(`${sb.url}/__admin/ussd/${ussdRef}/pay`)).status).toBe(200);
  expect((await api.transactions.verify({ transaction_ref: ussdRef })).data.transaction_status).toBe('Success');
});

it('checkout: missing fields name the field; a wrong key is "Initiate transaction Unauthorized"; expiry abandons', async () => {
  const res = await fetch(`${sb.url}/transaction/initiate`, { method: 'POST', headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` }, body: JSON.stringify({ amount: '100', currency: 'NGN', initiate_type: 'inline' }) });
  expect(await res.json()).toEqual({ success: false, message: 'email is required', data: null });
  const wrong = new PaymentsClient({ baseUrl: sb.url, secretKey: 'sandbox_sk_nope_nope', timeoutMs: 2_000 });
  await expect(wrong.checkout.initiate({ amount: 100, email: 'a@b.co', currency: 'NGN', initiate_type: 'inline' } as never)).rejects.toMatchObject({ constructor: AuthenticationError, message: expect.stringContaining('Initiate transaction Unauthorized') });
  await wrong.close();
  const ref = `ab-${randomUUID()}`;
  await initiate(ref);
  await fetch(`${sb.url}/__admin/clock/advance`, { method: 'POST', body: JSON.stringify({ ms: 31 * 60 * 1000 }) });
  expect((await api.transactions.verify({ transaction_ref: ref })).data.transaction_status).toBe('Abandoned');
});

it('A6: needs both dates at most a month apart and finds a transaction by reference', async () => {
  const ref = `q-${randomUUID()}`;
  await initiate(ref);
  const found = await api.transactions.query({ start_date: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10), end_date: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10), reference: ref, currency: 'NGN', page: 1, perpage: 10 } as never);
  expect(found.data).toEqual([expect.objectContaining({ transaction_ref: ref, transaction_amount: 250_000 })]);
  const wide = await fetch(`${sb.url}/transaction?start_date=2026-01-01&end_date=2026-06-01`, { headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` } });
  expect(wide.status).toBe(400);
  expect(((await wide.json()) as { message: string }).message).toBe('Bad Request');
});
