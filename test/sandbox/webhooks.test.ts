// Payment webhooks and credit notifications (E-1, E-2): signatures checked against openssl on the exact bytes received, acknowledgement
// rules, the error log, retries on the sandbox clock, and the webhook faults (duplicate,
// out-of-order, failed delivery).
import { startSandbox, type Sandbox, SANDBOX_OTP, TEST_CARDS } from '../../src/sandbox';
import { client, KEY, opensslHmac, Receiver, uid, type Hit, type Json } from './helpers';
import { eventually } from '../support/polling';
import { vaCustomer } from '../support/flow-inputs';
import { vaSignedValues } from '../support/webhook-receiver';

const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());
beforeEach(() => receiver.reset());

const SECOND_KEY = 'sandbox_sk_second_merchant_key_02';

async function withSandbox(
  opts: Parameters<typeof startSandbox>[0],
  fn: (sb: Sandbox, api: ReturnType<typeof client>) => Promise<void>,
) {
  const sb = await startSandbox({ port: 0, webhookUrl: receiver.url, ...opts });
  try {
    await fn(sb, client(sb));
  } finally {
    await sb.close();
  }
}

/** A card payment that succeeds (OTP-only card), made with `key`. */
async function pay(api: ReturnType<typeof client>, key = KEY): Promise<string> {
  const ref = uid('wh-');
  const r = await api.post(
    '/transaction/initiate/process-payment',
    {
      transaction_reference: ref,
      amount: 120_000,
      currency: 'NGN',
      payment_method: 'card',
      customer: { name: 'Ada', email: 'ada@example.com' },
      card: { number: TEST_CARDS.otpOnly, cvv: '123', expiry_month: '12', expiry_year: '29' },
    },
    { key },
  );
  expect(r.status).toBe(200);
  expect(
    (
      await api.post(
        '/transaction/payment/authorize',
        { transaction_reference: ref, authorization: { otp: SANDBOX_OTP } },
        { key },
      )
    ).status,
  ).toBe(200);
  return ref;
}

async function credit(
  api: ReturnType<typeof client>,
  amount = '5000.00',
): Promise<{ account: string; customer: string }> {
  const customer = uid('CUST');
  const a = await api.post('/virtual-account', vaCustomer(customer));
  expect(a.status).toBe(200);
  const account = a.body!.data.virtual_account_number as string;
  expect(
    (await api.post('/virtual-account/simulate/payment', { virtual_account_number: account, amount })).body,
  ).toEqual({ success: true, message: 'Success', data: {} });
  return { account, customer };
}

describe('payment webhook (E-1)', () => {
  it('x-service-encrypted-body is the UPPERCASE HMAC-SHA512 of the exact bytes, keyed with the key that paid (openssl agrees)', async () => {
    await withSandbox({ secretKeys: [KEY, SECOND_KEY] }, async (_sb, api) => {
      for (const key of [KEY, SECOND_KEY]) {
        const ref = await pay(api, key);
        const [hit] = await receiver.waitFor(ref);
        const sig = String(hit.headers['x-service-encrypted-body']);
        expect(sig).toMatch(/^[0-9A-F]{128}$/);
        expect(sig.toLowerCase()).toBe(opensslHmac(hit.raw, key));
        expect(sig.toLowerCase()).not.toBe(opensslHmac(hit.raw, key === KEY ? SECOND_KEY : KEY));
        expect(hit.headers['content-type']).toBe('application/json');
        expect(hit.json).toMatchObject({
          Event: 'charge_successful',
          TransactionRef: ref,
          Body: {
            transaction_ref: ref,
            transaction_status: 'Success',
            merchant_id: 'SBXMERCHANT',
            created_at: expect.any(String),
          },
        });
      }
    });
  });

  it('a non-2xx answer is retried on the schedule, on the sandbox clock; any 2xx acknowledges', async () => {
    await withSandbox({ webhookRetryScheduleMs: [60_000, 600_000] }, async (sb, api) => {
      receiver.respond = () => ({ status: 500 });
      const ref = await pay(api);
      await receiver.waitFor(ref, 1);
      await api.admin.settle();
      await api.admin.advance(59_000);
      expect(receiver.for(ref)).toHaveLength(1); // not yet due
      await api.admin.advance(1_000);
      expect(receiver.for(ref)).toHaveLength(2);
      receiver.respond = () => ({ status: 202, body: { received: true } });
      await api.admin.advance(600_000);
      expect(receiver.for(ref)).toHaveLength(3);
      await api.admin.advance(24 * 3600_000);
      expect(receiver.for(ref)).toHaveLength(3); // acknowledged: no more
      const attempts = (await api.admin.get(`/webhooks?ref=${ref}`)).body!.data.payments as Json[];
      expect(attempts.map((a) => [a.attempt, a.status, a.acknowledged])).toEqual([
        [1, 500, false],
        [2, 500, false],
        [3, 202, true],
      ]);
      expect(sb.deliveries({ ref })).toHaveLength(3);
      // Every delivery carried the same bytes and signature.
      expect(new Set(receiver.for(ref).map((h) => h.raw.toString()))).toHaveProperty('size', 1);
    });
  });

  it('gives up after the last retry; without a webhook URL nothing is sent', async () => {
    await withSandbox({ webhookRetryScheduleMs: [1_000] }, async (_sb, api) => {
      receiver.respond = () => ({ status: 503 });
      const ref = await pay(api);
      await receiver.waitFor(ref);
      await api.admin.settle();
      await api.admin.advance(1_000);
      await api.admin.advance(3600_000);
      expect(receiver.for(ref)).toHaveLength(2);
    });
    const quiet = await startSandbox({ port: 0 });
    try {
      const ref = await pay(client(quiet));
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.for(ref)).toHaveLength(0);
      expect(quiet.deliveries()).toHaveLength(0);
    } finally {
      await quiet.close();
    }
  });
});

describe('virtual-account notification (E-2)', () => {
  it.each([
    [1, (h: Hit) => opensslHmac(h.raw, KEY), /^[0-9A-F]{128}$/],
    [2, (h: Hit) => opensslHmac(vaSignedValues(h.json), KEY), /^[0-9a-f]{128}$/],
    [3, (h: Hit) => opensslHmac(vaSignedValues(h.json), KEY), /^[0-9a-f]{128}$/],
  ] as const)(
    'version %s: x-service-signature matches openssl (v1 whole body uppercase, v2/v3 six values lowercase)',
    async (version, expected, shape) => {
      await withSandbox({ webhookVersion: version }, async (_sb, api) => {
        const { account, customer } = await credit(api);
        await eventually(() => receiver.hits.length >= 1, { timeoutMs: 3000, intervalMs: 10 });
        const hit = receiver.hits[0];
        const sig = String(hit.headers['x-service-signature']);
        expect(sig).toMatch(shape);
        expect(sig.toLowerCase()).toBe(expected(hit));
        expect(hit.json).toMatchObject({
          virtual_account_number: account,
          customer_identifier: customer,
          principal_amount: '5000.00',
          settled_amount: '4975.00',
          fee_charged: '25.00',
          transaction_indicator: 'C',
          currency: 'NGN',
          channel: 'virtual-account',
          sender_name: expect.any(String),
          transaction_date: expect.any(String),
          meta: { freeze_transaction_ref: null, reason_for_frozen_transaction: null },
          encrypted_body: expect.any(String),
        });
        if (version === 1) expect(hit.json).not.toHaveProperty('version');
        else
          expect(hit.json).toMatchObject({
            version: `v${version}`,
            first_name: 'Ada',
            session_id: expect.any(String),
            transaction_uuid: expect.any(String),
          });
        if (version === 3) expect(hit.json.transaction_reference).toMatch(/^V3[0-9A-F]{32}$/);
        else expect(hit.json.transaction_reference).toMatch(/^REF\d+$/);
      });
    },
  );

  it('only the spec acknowledgement counts: anything else goes to the error log (C10) and is retried until acknowledged', async () => {
    await withSandbox({ webhookRetryScheduleMs: [5_000, 30_000] }, async (_sb, api) => {
      receiver.respond = () => ({ status: 200, body: { received: true } }); // a 200, but not the spec's acknowledgement
      await credit(api, '100.00');
      await api.admin.settle();
      const ref = receiver.hits[0].json.transaction_reference as string;
      const log = await api.get('/virtual-account/webhook/logs');
      expect(log.body!.data).toMatchObject({
        count: 1,
        rows: [
          {
            id: expect.stringMatching(/^[0-9a-f-]{36}$/),
            transaction_ref: ref,
            payload: {
              transaction_reference: ref,
              principal_amount: '100.00',
              hash: receiver.hits[0].headers['x-service-signature'],
              channel: 'virtual-account',
            },
          },
        ],
      });
      // A wrong reference in the acknowledgement does not count either.
      receiver.respond = () => ({
        status: 200,
        body: { response_code: 200, transaction_reference: 'other', response_description: 'Success' },
      });
      await api.admin.advance(5_000);
      expect(receiver.hits).toHaveLength(2);
      receiver.respond = new Receiver().respond; // the spec's acknowledgement
      await api.admin.advance(30_000);
      expect(receiver.hits).toHaveLength(3);
      const attempts = (await api.admin.get('/webhooks')).body!.data.virtualAccounts as Json[];
      expect(attempts.map((a) => a.acknowledged)).toEqual([false, false, true]);
      // The entry stays until the merchant deletes it (C11; data 1); a second delete → data 0.
      expect((await api.get('/virtual-account/webhook/logs')).body!.data.count).toBe(1);
      expect((await api.call('DELETE', `/virtual-account/webhook/logs/${ref}`)).body).toMatchObject({
        status: 200,
        success: true,
        data: 1,
      });
      expect((await api.call('DELETE', `/virtual-account/webhook/logs/${ref}`)).body!.data).toBe(0);
      expect((await api.get('/virtual-account/webhook/logs')).body!.data).toEqual({ count: 0, rows: [] });
    });
  });

  it('a failed delivery (receiver down) is logged and retried; deleting the log entry stops the retries', async () => {
    await withSandbox(
      { webhookUrl: 'http://127.0.0.1:9/unreachable', webhookRetryScheduleMs: [1_000, 1_000, 1_000] },
      async (sb, api) => {
        await credit(api);
        await sb.clock.settled();
        const rows = (await api.get('/virtual-account/webhook/logs')).body!.data.rows as Json[];
        expect(rows).toHaveLength(1);
        await api.admin.advance(1_000);
        expect(sb.deliveries({ target: 'virtual-account' }).map((d) => d.status)).toEqual(['error', 'error']);
        await api.call('DELETE', `/virtual-account/webhook/logs/${rows[0].transaction_ref}`);
        await api.admin.advance(10_000);
        expect(sb.deliveries({ target: 'virtual-account' })).toHaveLength(2);
      },
    );
  });

  it('the error log lists at most the top 100', async () => {
    await withSandbox({ webhookUrl: 'http://127.0.0.1:9/unreachable', webhookRetryScheduleMs: [] }, async (sb, api) => {
      const { account } = await credit(api);
      for (let i = 0; i < 104; i++)
        await api.post('/virtual-account/simulate/payment', { virtual_account_number: account, amount: '1.00' });
      await sb.clock.settled();
      const log = (await api.get('/virtual-account/webhook/logs?perPage=500')).body!.data as Json;
      expect(log.count).toBe(100);
      expect(log.rows).toHaveLength(100);
    });
  });
});

describe('webhook faults', () => {
  it('duplicate: the next notification arrives twice (same bytes); the ledger has one payment', async () => {
    await withSandbox({}, async (sb, api) => {
      expect((await api.admin.post('/webhook-faults', { kind: 'duplicate', count: 1 })).status).toBe(200);
      const ref = await pay(api);
      const hits = await receiver.waitFor(ref, 2);
      expect(hits[0].raw.equals(hits[1].raw)).toBe(true);
      expect(hits[0].headers['x-service-encrypted-body']).toBe(hits[1].headers['x-service-encrypted-body']);
      expect(sb.ledger({ reference: ref })).toHaveLength(1);
      // The receiver may answer before the sandbox records the attempt: wait for in-flight deliveries.
      await api.admin.settle();
      expect(sb.deliveries({ ref }).map((d) => Boolean(d.duplicate))).toEqual([false, true]);
      const next = await pay(api);
      await receiver.waitFor(next);
      await new Promise((r) => setTimeout(r, 50));
      expect(receiver.for(next)).toHaveLength(1); // count used up
    });
  });

  it('hold then release: held notifications are delivered newest first (out of order)', async () => {
    await withSandbox({}, async (_sb, api) => {
      await api.admin.post('/webhook-faults', { kind: 'hold', count: 3 });
      const refs = [await pay(api), await pay(api), await pay(api)];
      await new Promise((r) => setTimeout(r, 100));
      expect(receiver.hits).toHaveLength(0);
      expect((await api.admin.get('/webhooks')).body!.data.held).toBe(3);
      expect((await api.admin.post('/webhook-faults/release')).body!.data).toEqual({ released: 3 });
      await eventually(() => receiver.hits.length === 3, { timeoutMs: 3000, intervalMs: 10 });
      expect(receiver.hits.map((h) => h.json.TransactionRef)).toEqual([...refs].reverse());
    });
  });

  it('fail: the attempt is not made and counts as unacknowledged (the error log + retry on the clock)', async () => {
    await withSandbox({ webhookRetryScheduleMs: [5_000] }, async (sb, api) => {
      await api.admin.post('/webhook-faults', { kind: 'fail', count: 1, target: 'virtual-account' });
      await credit(api);
      await sb.clock.settled();
      expect(receiver.hits).toHaveLength(0);
      expect((await api.get('/virtual-account/webhook/logs')).body!.data.count).toBe(1);
      expect(sb.deliveries()).toEqual([
        expect.objectContaining({ status: 'fault', acknowledged: false, attempt: 1, nextRetryAt: expect.any(String) }),
      ]);
      await api.admin.advance(5_000);
      expect(receiver.hits).toHaveLength(1);
      expect(sb.deliveries().map((d) => d.acknowledged)).toEqual([false, true]);
    });
  });

  it('a fault aimed at one target leaves the other alone; bad fault rules are refused; faults can be listed and cleared', async () => {
    await withSandbox({}, async (_sb, api) => {
      await api.admin.post('/webhook-faults', { kind: 'fail', count: 1, target: 'virtual-account' });
      const ref = await pay(api);
      await receiver.waitFor(ref);
      expect((await api.admin.get('/webhook-faults')).body!.data).toEqual([
        expect.objectContaining({ kind: 'fail', count: 1, target: 'virtual-account' }),
      ]);
      expect((await api.admin.post('/webhook-faults', { kind: 'explode' })).status).toBe(400);
      expect((await api.admin.post('/webhook-faults', { kind: 'hold', target: 'sms' })).status).toBe(400);
      await api.admin.del('/webhook-faults');
      expect((await api.admin.get('/webhook-faults')).body!.data).toEqual([]);
    });
  });
});
