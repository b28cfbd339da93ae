// Virtual accounts (C1-C11) through the API client against the sandbox, and the E-2
// notification signed per version, checked with openssl; unacknowledged credits land in the
// error log and are retried.
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { PaymentsClient, DependencyFailedError, NotFoundError, PermissionDeniedError, BadRequestError } from '../../src/api';
import { startSandbox, type Sandbox, DEFAULT_SANDBOX_KEY } from '../../src/sandbox';

interface Hit { raw: string; signature: string }
let hits: Hit[] = [];
let ack: (body: Record<string, unknown>) => unknown = (b) => ({ response_code: 200, transaction_reference: b.transaction_reference, response_description: 'Success' });
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      hits.push({ raw, signature: String(req.headers['x-service-signature']) });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(ack(JSON.parse(raw) as Record<string, unknown>)));
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/webhooks`;
});
afterAll(() => new Promise((r) => receiver.close(r)));
beforeEach(() => {
  hits = [];
  ack = (b) => ({ response_code: 200, transaction_reference: b.transaction_reference, response_description: 'Success' });
});

async function withSandbox(version: 1 | 2 | 3, fn: (api: PaymentsClient, sb: Sandbox) => Promise<void>) {
  const sb = await startSandbox({ port: 0, webhookUrl: receiverUrl, webhookVersion: version, webhookRetryScheduleMs: [50, 50] });
  const api = new PaymentsClient({ baseUrl: sb.url, secretKey: DEFAULT_SANDBOX_KEY, timeoutMs: 2_000 });
  try {
    await fn(api, sb);
  } finally {
    await api.close();
    await sb.close();
  }
}
const customer = (id = `CUST${randomUUID().slice(0, 8)}`) =>
  ({ customer_identifier: id, first_name: 'Ada', last_name: 'Obi', mobile_num: '08012345678', bvn: '22212345678', dob: '01/31/1990', gender: '2', address: '1 Way' }) as never;
const openssl = (data: string) => execFileSync('openssl', ['dgst', '-sha512', '-hmac', DEFAULT_SANDBOX_KEY], { input: data }).toString().trim().split('= ').pop()!;
const waitHits = async (n: number) => {
  for (let i = 0; i < 150 && hits.length < n; i++) await new Promise((r) => setTimeout(r, 20));
  expect(hits.length).toBeGreaterThanOrEqual(n);
};

it('creates B2C and B2B accounts with the spec validation, and queries them (C1-C8)', async () => {
  await withSandbox(2, async (api) => {
    const a = await api.virtualAccounts.createCustomer(customer('CUSTA1'));
    expect(a.data).toMatchObject({ customer_identifier: 'CUSTA1', virtual_account_number: expect.stringMatching(/^\d{10}$/) });
    await expect(api.virtualAccounts.createCustomer(customer('CUSTA1'))).rejects.toBeInstanceOf(BadRequestError);
    const b = await api.virtualAccounts.createBusiness({ bvn: '22212345678', business_name: 'Acme', customer_identifier: 'BIZ1', mobile_num: '08012345678', beneficiary_account: '0123456789' } as never);
    expect(b.data.beneficiary_account).toBe('0123456789');
    const missing = await api.virtualAccounts.createBusiness({ bvn: '22212345678', business_name: 'Acme', customer_identifier: 'BIZ2', mobile_num: '08012345678', beneficiary_account: '5555555555' } as never).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(DependencyFailedError);
    expect(missing).toMatchObject({ message: expect.stringContaining('Validation Failure No record found for Account number-5555555555') });
    expect((await api.virtualAccounts.customerByAccountNumber({ virtual_account_number: a.data.virtual_account_number } as never)).data).toMatchObject({ customer_identifier: 'CUSTA1', mobile_num: '08012345678' });
    await expect(api.virtualAccounts.customerByAccountNumber({ virtual_account_number: '0000000000' } as never)).rejects.toBeInstanceOf(NotFoundError);
    expect((await api.virtualAccounts.accountByCustomerIdentifier({ customer_identifier: 'BIZ1' } as never)).data.customer_identifier).toBe('BIZ1');
    expect((await api.virtualAccounts.merchantAccounts({} as never)).data).toHaveLength(2);
  });
});

it('refuses a wrong key with 403 "Merchant authentication failed"', async () => {
  await withSandbox(2, async (_api, sb) => {
    const wrong = new PaymentsClient({ baseUrl: sb.url, secretKey: 'sandbox_sk_not_mine_000', timeoutMs: 2_000 });
    await expect(wrong.virtualAccounts.merchantTransactions()).rejects.toMatchObject({ constructor: PermissionDeniedError, message: expect.stringContaining('Merchant authentication failed') });
    await wrong.close();
  });
});

it.each([
  [1, (h: Hit) => openssl(h.raw), /^[0-9A-F]{128}$/],
  [2, (h: Hit) => { const b = JSON.parse(h.raw); return openssl([b.transaction_reference, b.virtual_account_number, b.currency, b.principal_amount, b.settled_amount, b.customer_identifier].join('|')); }, /^[0-9a-f]{128}$/],
  [3, (h: Hit) => { const b = JSON.parse(h.raw); return openssl([b.transaction_reference, b.virtual_account_number, b.currency, b.principal_amount, b.settled_amount, b.customer_identifier].join('|')); }, /^[0-9a-f]{128}$/],
] as const)('simulated credit sends E-2 signed by version %s, matching openssl', async (version, expected, shape) => {
  await withSandbox(version, async (api, sb) => {
    const a = await api.virtualAccounts.createCustomer(customer());
    await api.virtualAccounts.simulatePayment({ virtual_account_number: a.data.virtual_account_number, amount: '5000.00' } as never);
    await waitHits(1);
    expect(hits[0].signature).toMatch(shape);
    expect(hits[0].signature.toLowerCase()).toBe(expected(hits[0]));
    const body = JSON.parse(hits[0].raw);
    expect(body).toMatchObject({ principal_amount: '5000.00', settled_amount: '4975.00', fee_charged: '25.00', channel: 'virtual-account' });
    expect(body.version).toBe(version === 1 ? undefined : `v${version}`);
    const txns = await api.virtualAccounts.customerTransactions({ customer_identifier: body.customer_identifier } as never);
    expect(txns.data).toEqual([expect.objectContaining({ principal_amount: '5000.00' })]);
    // Version 3 notifies a new reference format; requeries use the previous one (found by session_id here).
    const previousRef = (txns.data as { transaction_reference: string }[])[0].transaction_reference;
    if (version !== 3) expect(previousRef).toBe(body.transaction_reference);
    else expect(previousRef).not.toBe(body.transaction_reference);
    const filtered = await api.virtualAccounts.merchantTransactionsFiltered({ transactionReference: previousRef } as never);
    expect(filtered.data.count).toBe(1);
    expect(sb.ledger()).toEqual([expect.objectContaining({ kind: 'va_credit', amount: '5000.00' })]);
    expect((await api.virtualAccounts.webhookErrorLog({} as never)).data.count).toBe(0);
  });
});

it('an unacknowledged credit goes to the error log (C10), is retried, and is deleted with C11', async () => {
  ack = () => ({ ok: true }); // not the spec's acknowledgement
  await withSandbox(2, async (api) => {
    const a = await api.virtualAccounts.createCustomer(customer());
    await api.virtualAccounts.simulatePayment({ virtual_account_number: a.data.virtual_account_number, amount: '100.00' } as never);
    await waitHits(3); // first attempt + two retries
    const ref = JSON.parse(hits[0].raw).transaction_reference as string;
    const log = await api.virtualAccounts.webhookErrorLog({} as never);
    expect(log.data).toMatchObject({ count: 1, rows: [{ transaction_ref: ref, payload: { transaction_reference: ref, principal_amount: '100.00' } }] });
    expect((await api.virtualAccounts.deleteWebhookErrorLog({ transaction_ref: ref } as never)).data).toBe(1);
    expect((await api.virtualAccounts.webhookErrorLog({} as never)).data.count).toBe(0);
  });
});
