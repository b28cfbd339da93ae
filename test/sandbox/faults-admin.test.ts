// Request fault injection (latency, 5xx burst, reset, drop before/after processing) and the rest
// of the admin API (ledger, request log, clock, reset).
import { SANDBOX_OTP, TEST_CARDS, POS_REMOTE_LIFETIME_MS } from '../../src/sandbox';
import { useSandbox, KEY, uid, type Json } from './helpers';

const env = useSandbox();
afterEach(() => env.api.admin.del('/faults'));

const customer = { name: 'Ada', email: 'ada@example.com' };
const startCard = (ref: string) =>
  env.api.post('/transaction/initiate/process-payment', {
    transaction_reference: ref,
    amount: 100_000,
    payment_method: 'card',
    customer,
    card: { number: TEST_CARDS.otpOnly, cvv: '123', expiry_month: '12', expiry_year: '29' },
  });
const rawAuthorize = (ref: string) =>
  fetch(`${env.sb.url}/transaction/payment/authorize`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ transaction_reference: ref, authorization: { otp: SANDBOX_OTP } }),
  });
/** A card charge started, then its authorize (B2) sent once into a `kind` fault on `path`: the caller gets no reply. */
async function authorizeUnanswered(prefix: string, path: string, kind: string): Promise<string> {
  const ref = uid(prefix);
  await startCard(ref);
  await env.api.admin.post('/faults', { method: 'POST', path, kind, count: 1 });
  await expect(rawAuthorize(ref)).rejects.toThrow();
  return ref;
}
const verify = async (ref: string) =>
  (await env.api.get(`/transaction/verify/${ref}`)).body!.data.transaction_status as string;

describe('request faults', () => {
  it('latency delays the reply (then the request is processed normally)', async () => {
    await env.api.admin.post('/faults', { path: '/vending/transactions', kind: 'latency', latencyMs: 300, count: 1 });
    const t = Date.now();
    expect((await env.api.get('/vending/transactions')).status).toBe(200);
    expect(Date.now() - t).toBeGreaterThanOrEqual(280);
    expect((await env.api.admin.get('/faults')).body!.data).toEqual([]); // count used up: the rule is gone
  });

  it('a 5xx burst: count answers with the status, then normal service; nothing was processed', async () => {
    await env.api.admin.post('/faults', {
      method: 'POST',
      path: '/transaction/initiate/process-payment',
      kind: 'error5xx',
      status: 502,
      count: 2,
    });
    const ref = uid('5x-');
    for (let i = 0; i < 2; i++)
      expect(await startCard(ref)).toMatchObject({
        status: 502,
        body: { status: 502, success: false, message: 'Service temporarily unavailable' },
      });
    expect((await env.api.get(`/transaction/verify/${ref}`)).status).toBe(400); // never created
    expect((await startCard(ref)).status).toBe(200);
  });

  it('reset: the socket is destroyed before processing; the transaction is untouched', async () => {
    const ref = await authorizeUnanswered('rs-', '/transaction/payment/authorize', 'reset');
    expect(await verify(ref)).toBe('Pending');
    expect(env.sb.ledger({ reference: ref })).toHaveLength(0);
    expect((await rawAuthorize(ref)).status).toBe(200);
  });

  it('drop-after-processing: the payment happens (ledger, verify) but the caller gets no reply', async () => {
    const ref = await authorizeUnanswered('da-', '^/transaction/payment/authorize$', 'drop-after-processing');
    expect(await verify(ref)).toBe('Success');
    expect(env.sb.ledger({ reference: ref })).toEqual([expect.objectContaining({ kind: 'card_charge' })]);
    // A naive retry is refused and charges nothing more.
    expect(((await (await rawAuthorize(ref)).json()) as Json).message).toBe('Transaction has already been completed');
    expect(env.sb.ledger({ reference: ref })).toHaveLength(1);
  });

  it('drop-before-processing is logged as reset; method and regex filters pick the requests', async () => {
    await env.api.admin.post('/faults', {
      method: 'GET',
      path: '^/vending/transactions$',
      kind: 'drop-before-processing',
    });
    expect(
      (
        await env.api.post('/vending/utilities/electricity/lookup', {
          meter_no: '45067198783',
          meter_type: 'prepaid',
          provider: 'IE',
        })
      ).status,
    ).toBe(200); // not matched
    await expect(
      fetch(`${env.sb.url}/vending/transactions`, { headers: { Authorization: `Bearer ${KEY}` } }),
    ).rejects.toThrow();
    await expect(
      fetch(`${env.sb.url}/vending/transactions`, { headers: { Authorization: `Bearer ${KEY}` } }),
    ).rejects.toThrow(); // no count: every match
    expect((await env.api.admin.get('/faults')).body!.data).toEqual([
      expect.objectContaining({ kind: 'drop-before-processing', method: 'GET', path: '^/vending/transactions$' }),
    ]);
    const log = (await env.api.admin.get('/requests')).body!.data as Json[];
    expect(log.slice(-2)).toEqual([
      expect.objectContaining({ method: 'GET', path: '/vending/transactions', status: 'reset' }),
      expect.objectContaining({ status: 'reset' }),
    ]);
  });

  it('refuses a bad rule', async () => {
    expect((await env.api.admin.post('/faults', { path: '/x', kind: 'explode' })).status).toBe(400);
    expect((await env.api.admin.post('/faults', { kind: 'latency' })).body!.message).toBe('path is required');
    expect((await env.api.admin.post('/faults', { path: '^(', kind: 'reset' })).status).toBe(400);
    expect((await env.api.admin.post('/faults', { path: '/x', kind: 'error5xx', status: 404 })).status).toBe(400);
  });
});

describe('admin API', () => {
  it('lists its endpoints; unknown admin paths are 404', async () => {
    expect((await env.api.admin.get('')).body!.data.endpoints).toEqual(
      expect.arrayContaining(['POST /__admin/clock/advance {ms}']),
    );
    expect((await env.api.admin.get('/nope')).status).toBe(404);
  });

  it('the request log records method, path, status and the reference, never card data', async () => {
    const ref = uid('rl-');
    await startCard(ref);
    const log = (await env.api.admin.get('/requests')).body!.data as Json[];
    const entry = log.find((e) => e.reference === ref)!;
    expect(entry).toEqual({
      at: expect.any(String),
      method: 'POST',
      path: '/transaction/initiate/process-payment',
      status: 200,
      reference: ref,
    });
    expect(JSON.stringify(log)).not.toContain(TEST_CARDS.otpOnly);
  });

  it('the ledger filters by reference and kind', async () => {
    const ref = uid('lg-');
    await startCard(ref);
    await rawAuthorize(ref);
    expect((await env.api.admin.get(`/ledger?reference=${ref}`)).body!.data).toEqual([
      {
        id: expect.any(String),
        kind: 'card_charge',
        reference: ref,
        amount: 100_000,
        currency: 'NGN',
        at: expect.any(String),
      },
    ]);
    expect((await env.api.admin.get(`/ledger?reference=${ref}&kind=vend`)).body!.data).toEqual([]);
    expect((await env.api.admin.get('/ledger?kind=nonsense')).status).toBe(400);
  });

  it('the clock: GET shows it; advance moves it forward only', async () => {
    const before = (await env.api.admin.get('/clock')).body!.data as Json;
    await env.api.admin.advance(3_600_000);
    const after = (await env.api.admin.get('/clock')).body!.data as Json;
    expect(Date.parse(after.now as string) - Date.parse(before.now as string)).toBeGreaterThanOrEqual(3_600_000);
    expect(after.offsetMs - before.offsetMs).toBe(3_600_000);
    expect((await env.api.admin.post('/clock/advance', { ms: -1 })).status).toBe(400);
    expect((await env.api.admin.post('/clock/advance', {})).status).toBe(400);
  });

  it('the clock expires a POS remote request in no real time (→ 404)', async () => {
    const ref = (await env.api.post('/softpos/pos/remote-request', { terminal_id: '2SBX0001', amount: 9900 })).body!
      .data.request_ref as string;
    expect((await env.api.get(`/softpos/pos/remote-request/${ref}`)).status).toBe(200);
    await env.api.admin.advance(POS_REMOTE_LIFETIME_MS);
    expect((await env.api.get(`/softpos/pos/remote-request/${ref}`)).status).toBe(404);
  });

  it('reset forgets transactions, ledger, faults and the log, and keeps the clock', async () => {
    const ref = uid('rz-');
    await startCard(ref);
    await rawAuthorize(ref);
    await env.api.admin.post('/faults', { path: '/nothing', kind: 'latency' });
    const clockBefore = (await env.api.admin.get('/clock')).body!.data.offsetMs as number;
    expect((await env.api.admin.post('/reset')).status).toBe(200);
    expect((await env.api.get(`/transaction/verify/${ref}`)).status).toBe(400);
    expect((await env.api.admin.get('/ledger')).body!.data).toEqual([]);
    expect((await env.api.admin.get('/faults')).body!.data).toEqual([]);
    expect((await env.api.admin.get('/clock')).body!.data.offsetMs).toBe(clockBefore);
    // In-process reset does the same.
    await startCard(uid('rz-'));
    env.sb.reset();
    expect(env.sb.requests()).toEqual([]);
    expect(env.sb.clock.offset).toBe(clockBefore);
  });
});
