// Black-box HTTP tests of the sandbox, written from the spec (groups E, F, H, auth, admin).
import { startSandbox, type Sandbox, DEFAULT_SANDBOX_KEY } from '../../src/sandbox';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, posRemoteCompleteAfterMs: 4000, posProcessorTimeoutMs: 300 });
});
afterAll(() => sb.close());
beforeEach(async () => {
  await fetch(`${sb.url}/__admin/faults`, { method: 'DELETE' });
});

async function call(method: string, path: string, body?: unknown, key: string | null = DEFAULT_SANDBOX_KEY) {
  const res = await fetch(`${sb.url}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(key === null ? {} : { Authorization: `Bearer ${key}` }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}
const admin = (method: string, path: string, body?: unknown) => call(method, `/__admin${path}`, body, null);

const card = (merchantRef: string, pan = '5399830000000000', extra: Record<string, unknown> = {}) => ({
  amount: '150000', currency: 'NGN', card_pan: pan, card_expiry_month: '12', card_expiry_year: '29', card_type: 'MasterCard', cardholder_name: 'SANDBOX/PAYER',
  card_sequence_number: '001', track2: `${pan}D2912`, chipdata: `9F26${merchantRef}`, aid: 'A0000000041010', pin_block: '0412AC89ABCDEF12',
  transaction_type: 'Purchase', account_type: 'savings', merchant_ref: merchantRef, terminal_id: '2SBX0001', ...extra,
});

describe('auth', () => {
  it('POS remote: 401 "Invalid or missing token" with a string status', async () => {
    const r = await call('POST', '/softpos/pos/remote-request', { terminal_id: 't', amount: 100 }, null);
    expect(r).toEqual({ status: 401, body: { status: '401', success: false, message: 'Invalid or missing token', data: null } });
    expect((await call('POST', '/softpos/pos/remote-request', { terminal_id: 't', amount: 100 }, 'sandbox_sk_wrong')).status).toBe(401);
  });
  it('other groups: 401 with an empty message and data {}', async () => {
    expect(await call('GET', '/vending/transactions', undefined, null)).toEqual({ status: 401, body: { success: false, message: '', data: {} } });
  });
});

describe('POS remote request (E1/E2)', () => {
  it('validates: amount greater than 0, required fields, lowercase account types', async () => {
    expect((await call('POST', '/softpos/pos/remote-request', { terminal_id: '2SBX0001', amount: 0 })).body).toMatchObject({ status: '400', success: false });
    expect((await call('POST', '/softpos/pos/remote-request', { amount: 100 })).body?.message).toBe('terminal_id is required');
    expect((await call('POST', '/softpos/pos/remote-request', { terminal_id: '2SBX0001', amount: 100, account_type: 'SAVINGS' })).status).toBe(400);
  });

  it('is pending, then success with the full record, then gone after 5 minutes', async () => {
    const created = await call('POST', '/softpos/pos/remote-request', { terminal_id: '2SBX0001', amount: 250000, account_type: 'savings' });
    const ref = created.body!.data.request_ref as string;
    expect((await call('GET', `/softpos/pos/remote-request/${ref}`)).body!.data).toEqual({ status: 'pending' });
    await admin('POST', '/clock/advance', { ms: 5000 });
    const done = await call('GET', `/softpos/pos/remote-request/${ref}`);
    expect(done.body!.data).toMatchObject({ status: 'success', amount: 250000, response_code: '00', merchant_request_ref: ref });
    expect(sb.ledger().filter((e) => e.reference === ref)).toEqual([expect.objectContaining({ kind: 'pos_remote', amount: 250000 })]);
    await admin('POST', '/clock/advance', { ms: 5 * 60 * 1000 });
    expect(await call('GET', `/softpos/pos/remote-request/${ref}`)).toMatchObject({ status: 404, body: { message: 'Request not found or expired' } });
  });

  it('a declined amount fails; a never-completing one expires', async () => {
    const d = (await call('POST', '/softpos/pos/remote-request', { terminal_id: '2SBX0001', amount: 5100 })).body!.data.request_ref;
    const n = (await call('POST', '/softpos/pos/remote-request', { terminal_id: '2SBX0001', amount: 9900 })).body!.data.request_ref;
    await admin('POST', '/clock/advance', { ms: 10_000 });
    expect((await call('GET', `/softpos/pos/remote-request/${d}`)).body!.data).toMatchObject({ status: 'failed', response_code: '51' });
    expect((await call('GET', `/softpos/pos/remote-request/${n}`)).body!.data).toEqual({ status: 'pending' });
    await admin('POST', '/clock/advance', { ms: 5 * 60 * 1000 });
    expect((await call('GET', `/softpos/pos/remote-request/${n}`)).status).toBe(404);
  });
});

describe('POS terminal (F1-F4)', () => {
  it('configuration and key exchange by serial_no', async () => {
    expect((await call('POST', '/softpos/terminal/configuration', { serial_no: 'SN-0001' })).body!.data.terminal).toMatchObject({ terminal_id: '2SBX0001', status: 'active' });
    expect(await call('POST', '/softpos/terminal/configuration', { serial_no: 'SN-9999' })).toMatchObject({ status: 404, body: { message: 'Terminal not found' } });
    expect(await call('POST', '/softpos/terminal/configuration', { serial_no: '!' })).toMatchObject({ status: 400, body: { message: 'Incorrect device information' } });
    const k1 = (await call('POST', '/softpos/terminal/key-exchange?refresh=false', { serial_no: 'SN-0001' })).body!.data;
    expect(k1.pin_key).toMatch(/^[0-9A-F]{32}$/);
    expect((await call('POST', '/softpos/terminal/key-exchange?refresh=false', { serial_no: 'SN-0001' })).body!.data.pin_key).toBe(k1.pin_key);
    expect((await call('POST', '/softpos/terminal/key-exchange?refresh=true', { serial_no: 'SN-0001' })).body!.data.pin_key).not.toBe(k1.pin_key);
  });

  it.each([
    ['0000', '00', 'success', 1],
    ['0051', '51', 'failed', 0],
    ['0055', '55', 'failed', 0],
  ])('PAN ending %s answers %s', async (last4, code, status, sales) => {
    const ref = `T${last4}${Date.now()}`.slice(0, 25);
    const r = await call('POST', '/transaction', card(ref, `539983000000${last4}`));
    expect(r.body!.data).toMatchObject({ response_code: code, status, merchant_ref: ref });
    expect((await call('GET', `/transaction/by-ref/${ref}`)).body!.data.response_code).toBe(code);
    expect(sb.ledger().filter((e) => e.reference === ref)).toHaveLength(sales);
  });

  it('91: the reply says 91, the requery finds the approved sale', async () => {
    const ref = `T91-${Date.now()}`;
    expect((await call('POST', '/transaction', card(ref, '5399830000000091'))).body!.data.response_code).toBe('91');
    expect((await call('GET', `/transaction/by-ref/${ref}`)).body!.data).toMatchObject({ response_code: '00', status: 'success' });
    expect(sb.ledger().filter((e) => e.reference === ref)).toHaveLength(1);
  });

  it('96: nothing recorded, requery 404, the retry with the same merchant_ref succeeds once', async () => {
    const ref = `T96-${Date.now()}`;
    expect((await call('POST', '/transaction', card(ref, '5399830000000096'))).body!.data.response_code).toBe('96');
    expect((await call('GET', `/transaction/by-ref/${ref}`)).status).toBe(404);
    expect((await call('POST', '/transaction', card(ref, '5399830000000096'))).body!.data.response_code).toBe('00');
    expect(sb.ledger().filter((e) => e.reference === ref)).toHaveLength(1);
  });

  it('refuses a duplicate merchant_ref, reused chipdata, bad fields; hangs on a malformed card_sequence_number', async () => {
    const ref = `TD-${Date.now()}`;
    await call('POST', '/transaction', card(ref));
    expect(await call('POST', '/transaction', card(ref))).toMatchObject({ status: 400, body: { message: 'Duplicate merchant_ref' } });
    expect(await call('POST', '/transaction', card(`${ref}b`, undefined, { chipdata: `9F26${ref}` }))).toMatchObject({ status: 400, body: { message: 'chipdata has already been used' } });
    expect((await call('POST', '/transaction', card('x'.repeat(26)))).status).toBe(400);
    expect((await call('POST', '/transaction', card(`${ref}c`, undefined, { account_type: '0010' }))).status).toBe(400);
    expect((await call('POST', '/transaction', card(`${ref}d`, undefined, { pin_block: 'XYZ' }))).status).toBe(400);
    const hung = await fetch(`${sb.url}/transaction`, { method: 'POST', headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` }, body: JSON.stringify(card(`${ref}e`, undefined, { card_sequence_number: '1' })) }).then(
      () => 'answered',
      () => 'no reply',
    );
    expect(hung).toBe('no reply');
    expect((await call('GET', `/transaction/by-ref/${ref}e`)).status).toBe(404);
  });
});

describe('vending (H1-H4)', () => {
  it('lists providers, looks a meter up, vends once with a token, finds it by reference', async () => {
    const providers = (await call('GET', '/vending/utilities/electricity/service-providers')).body!.data as { code: string }[];
    expect(providers.map((p) => p.code)).toEqual(expect.arrayContaining(['EKEDC', 'JED']));
    const lookup = (await call('POST', '/vending/utilities/electricity/lookup', { meter_no: '45067198783', meter_type: 'prepaid', provider: 'EKEDC' })).body!.data;
    expect(lookup).toMatchObject({ minimum_vend: 1000, customer_name: 'ADA SANDBOX' });
    expect((await call('POST', '/vending/utilities/electricity', { reference: lookup.reference, amount: 500, phone_number: '08012345678', email: 'a@b.co' })).status).toBe(400);
    const vend = await call('POST', '/vending/utilities/electricity', { reference: lookup.reference, amount: 5000, phone_number: '08012345678', email: 'a@b.co' });
    expect(vend.body!.data).toMatchObject({ amount: '5000.00', status: 'success', value_reference: expect.stringMatching(/^\d{4}(-\d{4}){4}$/) });
    expect((await call('POST', '/vending/utilities/electricity', { reference: lookup.reference, amount: 5000, phone_number: '08012345678', email: 'a@b.co' })).status).toBe(400);
    expect((await call('GET', `/vending/transactions?reference=${lookup.reference}`)).body!.data.value_reference).toBe(vend.body!.data.value_reference);
    expect((await call('GET', '/vending/transactions?reference=nope')).status).toBe(404);
    expect(sb.ledger().filter((e) => e.reference === lookup.reference)).toEqual([expect.objectContaining({ kind: 'vend', amount: '5000.00' })]);
  });
});

describe('fault injection', () => {
  it('drop-after-processing: the sale happens, the caller gets no answer', async () => {
    await admin('POST', '/faults', { method: 'POST', path: '/transaction', kind: 'drop-after-processing', count: 1 });
    const ref = `TF-${Date.now()}`;
    await expect(fetch(`${sb.url}/transaction`, { method: 'POST', headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` }, body: JSON.stringify(card(ref)) })).rejects.toThrow();
    expect((await call('GET', `/transaction/by-ref/${ref}`)).body!.data.response_code).toBe('00');
    expect(sb.ledger().filter((e) => e.reference === ref)).toHaveLength(1);
  });

  it('reset: the request never processed', async () => {
    await admin('POST', '/faults', { path: '/transaction', method: 'POST', kind: 'reset', count: 1 });
    const ref = `TR-${Date.now()}`;
    await expect(fetch(`${sb.url}/transaction`, { method: 'POST', headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` }, body: JSON.stringify(card(ref)) })).rejects.toThrow();
    expect((await call('GET', `/transaction/by-ref/${ref}`)).status).toBe(404);
  });

  it('a burst of 5xx, then normal service; latency delays the reply', async () => {
    await admin('POST', '/faults', { path: '/vending/utilities/electricity/service-providers', kind: 'error5xx', status: 502, count: 2 });
    expect((await call('GET', '/vending/utilities/electricity/service-providers')).status).toBe(502);
    expect((await call('GET', '/vending/utilities/electricity/service-providers')).status).toBe(502);
    expect((await call('GET', '/vending/utilities/electricity/service-providers')).status).toBe(200);
    await admin('POST', '/faults', { path: '/vending/transactions', kind: 'latency', latencyMs: 300, count: 1 });
    const t = Date.now();
    await call('GET', '/vending/transactions');
    expect(Date.now() - t).toBeGreaterThanOrEqual(280);
  });

  it('logs requests for tests that check ordering', async () => {
    const log = (await admin('GET', '/requests')).body!.data as { path: string; status: unknown }[];
    expect(log.some((e) => e.path === '/transaction' && e.status === 'dropped')).toBe(true);
  });
});
