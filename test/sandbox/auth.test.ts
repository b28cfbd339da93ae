// Authentication per endpoint group, as the spec lists it: missing header, wrong key, empty key.
import { startSandbox, type Sandbox, INVALID_KEY_MESSAGE } from '../../src/sandbox';
import { call, KEY } from './helpers';
import { SANDBOX_ADMIN_HEADERS } from '../support/sandbox-admin';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
});
afterAll(() => sb.close());

const EMPTY_401 = { success: false, message: '', data: {} };
const KEY_403 = { status: 403, success: false, message: INVALID_KEY_MESSAGE, data: null };

describe.each([
  ['direct card (B1)', 'POST', '/transaction/initiate/process-payment', KEY_403],
  ['authorize (B2)', 'POST', '/transaction/payment/authorize', KEY_403],
  ['validate bank (B4)', 'POST', '/transaction/validate-payment', KEY_403],
  ['token charge (A4)', 'POST', '/transaction/charge_card', KEY_403],
  ['token cancel (A5)', 'PATCH', '/transaction/cancel/recurring', KEY_403],
  ['query (A6)', 'GET', '/transaction?start_date=2026-01-01&end_date=2026-01-31', KEY_403],
  ['verify', 'GET', '/transaction/verify/x', KEY_403],
  ['mandate create (D1)', 'POST', '/transaction/mandate/create', KEY_403],
  ['mandate list (D5)', 'GET', '/transaction/mandate/get-mandates', KEY_403],
  ['terminal configuration (F1)', 'POST', '/softpos/terminal/configuration', KEY_403],
  ['terminal transaction (F3)', 'POST', '/transaction', KEY_403],
  ['terminal requery (F4)', 'GET', '/transaction/by-ref/x', KEY_403],
  ['SMS (G1)', 'POST', '/sms/send/instant', KEY_403],
  ['vending (H1)', 'GET', '/vending/utilities/electricity/service-providers', KEY_403],
  [
    'virtual account (C1)',
    'POST',
    '/virtual-account',
    { status: 403, success: false, message: 'Merchant authentication failed', data: null },
  ],
  [
    'simulate (C9/A2)',
    'POST',
    '/virtual-account/simulate/payment',
    { status: 403, success: false, message: 'Merchant authentication failed', data: null },
  ],
  [
    'webhook log (C10)',
    'GET',
    '/virtual-account/webhook/logs',
    { status: 403, success: false, message: 'Merchant authentication failed', data: null },
  ],
  [
    'checkout (A1)',
    'POST',
    '/transaction/initiate',
    { status: 401, success: false, message: 'Initiate transaction Unauthorized', data: null },
  ],
] as const)('%s', (_name, method, path, wrongKeyBody) => {
  const body = method === 'GET' ? undefined : {};
  it('no Authorization header → 401 with an empty message and data {}', async () => {
    expect(await call(sb.url, method, path, body, { key: null })).toMatchObject({ status: 401, body: EMPTY_401 });
  });
  it(`a wrong key → ${wrongKeyBody.status} ${wrongKeyBody.message || '(empty)'}`, async () => {
    const r = await call(sb.url, method, path, body, { key: 'sandbox_sk_not_registered_0000' });
    expect(r.status).toBe(wrongKeyBody.status);
    expect(r.body).toEqual(wrongKeyBody);
  });
  it('an empty Bearer or another scheme counts as a wrong key', async () => {
    expect((await call(sb.url, method, path, body, { key: null, headers: { Authorization: 'Bearer ' } })).status).toBe(
      wrongKeyBody.status,
    );
    expect(
      (await call(sb.url, method, path, body, { key: null, headers: { Authorization: `Basic ${KEY}` } })).status,
    ).toBe(wrongKeyBody.status);
  });
});

describe('POS remote (E1/E2)', () => {
  it.each([
    ['missing', null],
    ['wrong', 'sandbox_sk_wrong'],
  ])('%s key → 401 "Invalid or missing token" with status as a string', async (_n, key) => {
    for (const [method, path] of [
      ['POST', '/softpos/pos/remote-request'],
      ['GET', '/softpos/pos/remote-request/RR1'],
    ] as const) {
      const r = await call(
        sb.url,
        method,
        path,
        method === 'POST' ? { terminal_id: '2SBX0001', amount: 100 } : undefined,
        { key },
      );
      expect(r).toMatchObject({
        status: 401,
        body: { status: '401', success: false, message: 'Invalid or missing token', data: null },
      });
    }
  });
});

it('the HTML pages need no key and the admin API its own token; unknown routes are 404, known paths with another method 405', async () => {
  expect((await call(sb.url, 'GET', '/__admin/clock', undefined, { key: null })).status).toBe(401);
  expect(
    (await call(sb.url, 'GET', '/__admin/clock', undefined, { key: null, headers: SANDBOX_ADMIN_HEADERS })).status,
  ).toBe(200);
  expect((await call(sb.url, 'GET', '/checkout/unknown', undefined, { key: null })).status).toBe(404);
  expect(await call(sb.url, 'GET', '/no/such/route')).toMatchObject({
    status: 404,
    body: { message: 'Route not found' },
  });
  expect(await call(sb.url, 'DELETE', '/transaction/initiate')).toMatchObject({
    status: 405,
    body: { message: 'Method not allowed' },
  });
});

it('accepts any configured key, and refuses to start with a key outside the sandbox prefix', async () => {
  const two = await startSandbox({ port: 0, secretKeys: ['sandbox_sk_first_key', 'sandbox_sk_second_key'] });
  try {
    expect(
      (await call(two.url, 'GET', '/vending/transactions', undefined, { key: 'sandbox_sk_second_key' })).status,
    ).toBe(200);
    expect((await call(two.url, 'GET', '/vending/transactions', undefined, { key: KEY })).status).toBe(403);
  } finally {
    await two.close();
  }
  await expect(startSandbox({ port: 0, secretKeys: ['sk_live_abc'] })).rejects.toThrow('sandbox_sk_');
});

it('answers invalid JSON with 400 and echoes a caller x-request-id', async () => {
  const res = await fetch(`${sb.url}/vending/transactions`, {
    method: 'GET',
    headers: { Authorization: `Bearer ${KEY}`, 'x-request-id': 'req-123' },
  });
  expect(res.headers.get('x-request-id')).toBe('req-123');
  const bad = await fetch(`${sb.url}/sms/template`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: '{nope',
  });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { message: string }).message).toBe('Invalid JSON body');
});
