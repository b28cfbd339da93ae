// E. POS remote request and F. POS terminal API over plain HTTP, on the sandbox clock.
import { createCipheriv, randomBytes } from 'node:crypto';
import {
  startSandbox,
  POS_REMOTE_LIFETIME_MS,
  POS_REMOTE_DECLINED_AMOUNT,
  POS_REMOTE_NEVER_COMPLETES_AMOUNT,
  POS_REMOTE_WRONG_PIN_AMOUNT,
} from '../../src/sandbox';
import { client, useSandbox, KEY, uid, type Json } from './helpers';

// Long enough that real time passing between requests (the sandbox clock is real time plus the
// advances) cannot carry a request past it on a loaded machine; the tests move the clock instead.
const COMPLETE_AFTER_MS = 60_000;
const MARGIN_MS = 10_000;
const env = useSandbox({ posRemoteCompleteAfterMs: COMPLETE_AFTER_MS, posProcessorTimeoutMs: 300 });

describe('POS remote request (E1/E2)', () => {
  const create = (body: Record<string, unknown>) => env.api.post('/softpos/pos/remote-request', body);
  const requery = (ref: string) => env.api.get(`/softpos/pos/remote-request/${ref}`);
  const newRequest = async (amount: number) =>
    (await create({ terminal_id: '2SBX0001', amount, account_type: 'savings' })).body!.data.request_ref as string;

  it('validates with string statuses: required fields, amount > 0, lowercase account types, a known terminal', async () => {
    expect((await create({ amount: 100 })).body).toEqual({
      status: '400',
      success: false,
      message: 'terminal_id is required',
      data: null,
    });
    expect((await create({ terminal_id: '2SBX0001', amount: 0 })).body).toMatchObject({
      status: '400',
      message: 'amount must be a number greater than 0',
    });
    expect((await create({ terminal_id: '2SBX0001', amount: '100' })).status).toBe(400);
    expect((await create({ terminal_id: '2SBX0001', amount: 100, account_type: 'SAVINGS' })).status).toBe(400);
    expect((await create({ terminal_id: 'NOPE', amount: 100 })).status).toBe(400);
  });

  it('pending (only status), then success with the full record and one ledger entry, then 404 after 5 minutes', async () => {
    const ref = await newRequest(250_000);
    expect(ref).toMatch(/^RR[0-9A-F]{18}$/);
    expect((await requery(ref)).body!.data).toEqual({ status: 'pending' });
    await env.api.admin.advance(COMPLETE_AFTER_MS - MARGIN_MS);
    expect((await requery(ref)).body!.data).toEqual({ status: 'pending' });
    await env.api.admin.advance(MARGIN_MS);
    const done = (await requery(ref)).body!.data as Json;
    expect(done).toMatchObject({
      status: 'success',
      id: expect.any(Number),
      merchant_request_ref: ref,
      merchant_id: 'SBXMERCHANT',
      terminal_id: '2SBX0001',
      amount: 250_000,
      currency: 'NGN',
      payment_method: 'card',
      payment_info: {
        card_pan: expect.stringMatching(/\*{6}/),
        card_exp: expect.stringMatching(/^\d{4}$/),
        card_type: expect.any(String),
        cardholder_name: expect.any(String),
      },
      transaction_reference: expect.any(String),
      rrn: expect.any(String),
      stan: expect.any(String),
      aid: expect.any(String),
      response_code: '00',
      pc_code: '0010',
      meta: expect.any(String),
      virtual_account_number: null,
      processor: null,
    });
    expect(env.sb.ledger({ reference: ref })).toEqual([
      expect.objectContaining({ kind: 'pos_remote', amount: 250_000 }),
    ]);
    await env.api.admin.advance(POS_REMOTE_LIFETIME_MS);
    expect(await requery(ref)).toMatchObject({
      status: 404,
      body: { status: '404', success: false, message: 'Request not found or expired' },
    });
    expect(env.sb.ledger({ reference: ref })).toHaveLength(1);
  });

  it(`amount ${POS_REMOTE_DECLINED_AMOUNT} declines (51), ${POS_REMOTE_WRONG_PIN_AMOUNT} declines (55), ${POS_REMOTE_NEVER_COMPLETES_AMOUNT} never completes and expires`, async () => {
    const declined = await newRequest(POS_REMOTE_DECLINED_AMOUNT);
    const wrongPin = await newRequest(POS_REMOTE_WRONG_PIN_AMOUNT);
    const never = await newRequest(POS_REMOTE_NEVER_COMPLETES_AMOUNT);
    await env.api.admin.advance(COMPLETE_AFTER_MS);
    expect((await requery(declined)).body!.data).toMatchObject({
      status: 'failed',
      response_code: '51',
      response_message: 'Insufficient funds',
    });
    expect((await requery(wrongPin)).body!.data).toMatchObject({ status: 'failed', response_code: '55' });
    expect((await requery(never)).body!.data).toEqual({ status: 'pending' });
    expect(env.sb.ledger({ reference: declined })).toHaveLength(0);
    await env.api.admin.advance(POS_REMOTE_LIFETIME_MS);
    expect((await requery(never)).status).toBe(404);
    expect((await requery('RRNEVERISSUED')).status).toBe(404);
  });

  it('the admin API can decide a request now (the payer taps the card)', async () => {
    const ref = await newRequest(POS_REMOTE_NEVER_COMPLETES_AMOUNT);
    expect((await env.api.admin.post(`/pos/remote/${ref}/decide`, { response_code: '00' })).body!.data).toMatchObject({
      status: 'success',
      response_code: '00',
    });
    expect((await requery(ref)).body!.data.status).toBe('success');
    expect((await env.api.admin.post(`/pos/remote/${ref}/decide`, { response_code: '51' })).status).toBe(400);
    const other = await newRequest(100_000);
    expect((await env.api.admin.post(`/pos/remote/${other}/decide`, { approve: false })).body!.data).toMatchObject({
      status: 'failed',
      response_code: '51',
    });
    await env.api.admin.advance(COMPLETE_AFTER_MS);
    expect((await requery(other)).body!.data.status).toBe('failed'); // the simulated terminal does not decide twice
  });
});

/** ISO 9564 format 0 PIN block under a 2-key 3DES key (what a device builds). */
function pinBlock(pin: string, pan: string, pinKeyHex: string): string {
  const pinField = Buffer.from(`0${pin.length}${pin}`.padEnd(16, 'F'), 'hex');
  const panField = Buffer.from(`0000${pan.slice(-13, -1)}`, 'hex');
  const k = Buffer.from(pinKeyHex, 'hex');
  const cipher = createCipheriv('des-ede3-ecb', Buffer.concat([k, k.subarray(0, 8)]), null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(Buffer.from(pinField.map((b, i) => b ^ panField[i]))), cipher.final()])
    .toString('hex')
    .toUpperCase();
}

describe('POS terminal (F1-F4)', () => {
  let pinKey = '';
  beforeAll(async () => {
    pinKey = (await env.api.post('/softpos/terminal/key-exchange?refresh=false', { serial_no: 'SN-0001' })).body!.data
      .pin_key as string;
  });
  const sale = (merchantRef: string, last4 = '0000', over: Record<string, unknown> = {}) => {
    const pan = `539983000000${last4}`;
    return {
      terminal_id: '2SBX0001',
      amount: '150000',
      currency: 'NGN',
      card_pan: pan,
      card_expiry_month: '12',
      card_expiry_year: '29',
      card_type: 'MasterCard',
      cardholder_name: 'ADA OBI',
      card_sequence_number: '001',
      track2: `${pan}D2912201F`,
      chipdata: randomBytes(32).toString('hex').toUpperCase(),
      aid: '4F07A0000000041010',
      pin_block: pinBlock('1234', pan, pinKey),
      transaction_type: 'Purchase',
      account_type: 'default',
      merchant_ref: merchantRef,
      ...over,
    };
  };
  const initiate = (body: Record<string, unknown>) => env.api.post('/transaction', body);
  const requery = (ref: string) => env.api.get(`/transaction/by-ref/${encodeURIComponent(ref)}`);

  it('configuration by serial_no; 404 unknown, 400 malformed (F1)', async () => {
    const cfg = await env.api.post('/softpos/terminal/configuration', { serial_no: 'SN-0001' });
    expect(cfg.body!.data).toMatchObject({
      terminal: {
        terminal_id: '2SBX0001',
        serial_no: 'SN-0001',
        status: 'active',
        currency: 'NGN',
        mcc_code: expect.any(String),
        address: { country_code: 'NG' },
        latitude: expect.any(String),
      },
      merchant: { merchant_id: 'SBXMERCHANT', name: 'Sandbox Merchant' },
      logo: { url: expect.any(String) },
    });
    expect(
      (await env.api.post('/softpos/terminal/configuration', { serial_no: 'SN-0003' })).body!.data.terminal.status,
    ).toBe('inactive');
    expect(await env.api.post('/softpos/terminal/configuration', { serial_no: 'SN-9999' })).toMatchObject({
      status: 404,
      body: { message: 'Terminal not found' },
    });
    for (const serial_no of ['!!', '', undefined, 42])
      expect(await env.api.post('/softpos/terminal/configuration', { serial_no })).toMatchObject({
        status: 400,
        body: { message: 'Incorrect device information' },
      });
  });

  it('keys: 32 hex each, stable until refresh=true; 400/404 as for the configuration; refresh is required (F2)', async () => {
    const k = (await env.api.post('/softpos/terminal/key-exchange?refresh=false', { serial_no: 'SN-0002' })).body!
      .data as Json;
    expect(k).toMatchObject({
      terminal_id: '2SBX0002',
      pin_key: expect.stringMatching(/^[0-9A-F]{32}$/),
      master_key: expect.stringMatching(/^[0-9A-F]{32}$/),
      working_key: expect.stringMatching(/^[0-9A-F]{32}$/),
      session_key: null,
      response_code: '00',
    });
    expect(
      (await env.api.post('/softpos/terminal/key-exchange?refresh=false', { serial_no: 'SN-0002' })).body!.data,
    ).toEqual(k);
    const fresh = (await env.api.post('/softpos/terminal/key-exchange?refresh=true', { serial_no: 'SN-0002' })).body!
      .data as Json;
    expect(fresh.pin_key).not.toBe(k.pin_key);
    expect(fresh.working_key).not.toBe(k.working_key);
    expect((await env.api.post('/softpos/terminal/key-exchange', { serial_no: 'SN-0002' })).body!.message).toBe(
      'refresh is required',
    );
    expect((await env.api.post('/softpos/terminal/key-exchange?refresh=false', { serial_no: 'SN-9999' })).status).toBe(
      404,
    );
    expect((await env.api.post('/softpos/terminal/key-exchange?refresh=false', { serial_no: '#' })).status).toBe(400);
    expect(
      (await env.api.post('/softpos/terminal/key-exchange?refresh=false', { serial_no: 'SN-0003' })).body!.message,
    ).toBe('Terminal is not active');
  });

  it.each([
    ['0000', '00', 'success', 1],
    ['1234', '00', 'success', 1],
    ['0051', '51', 'failed', 0],
    ['0055', '55', 'failed', 0],
  ])('PAN ending %s → %s %s; the requery shows the same; %s sale(s)', async (last4, code, status, sales) => {
    const ref = uid(`T${last4}-`);
    const r = await initiate(sale(ref, last4));
    expect(r.status).toBe(200);
    expect(r.body!.data).toMatchObject({
      response_code: code,
      status,
      merchant_ref: ref,
      amount: '150000',
      currency: 'NGN',
      terminal_id: '2SBX0001',
      payment_method: 'card',
      transaction_type: 'Purchase',
      payment_info: {
        card_pan: `539983******${last4}`,
        card_exp: '2912',
        card_type: 'MasterCard',
        cardholder_name: 'ADA OBI',
      },
      meta: { merchant_name: 'Sandbox Merchant', processor_amount: '150000' },
      rrn: expect.stringMatching(/^\d{12}$/),
      stan: expect.stringMatching(/^\d{6}$/),
      receipt_no: expect.any(String),
      transaction_reference: expect.any(String),
      merchant_request_ref: null,
      virtual_account_number: null,
    });
    expect(JSON.stringify(r.body)).not.toContain(`539983000000${last4}`);
    expect((await requery(ref)).body!.data).toMatchObject({ response_code: code, status });
    expect(env.sb.ledger({ reference: ref, kind: 'pos_sale' })).toHaveLength(sales);
  });

  it('91: the reply says 91, the sale DID reach the issuer: the requery shows 00, one sale, a resend is a duplicate', async () => {
    const ref = uid('T91-');
    const body = sale(ref, '0091');
    expect((await initiate(body)).body!.data).toMatchObject({ response_code: '91', status: 'failed' });
    expect((await requery(ref)).body!.data).toMatchObject({ response_code: '00', status: 'success' });
    expect(await initiate(body)).toMatchObject({ status: 400, body: { message: 'Duplicate merchant_ref' } });
    expect(env.sb.ledger({ reference: ref })).toHaveLength(1);
  });

  it('96: nothing recorded (the requery answers 404), the retry with the same merchant_ref and card read succeeds once', async () => {
    const ref = uid('T96-');
    const body = sale(ref, '0096');
    expect((await initiate(body)).body!.data).toMatchObject({ response_code: '96', status: 'failed' });
    expect(await requery(ref)).toMatchObject({ status: 404, body: { message: 'Transaction not found' } });
    expect(env.sb.ledger({ reference: ref })).toHaveLength(0);
    expect((await initiate(body)).body!.data).toMatchObject({ response_code: '00', status: 'success' });
    expect(env.sb.ledger({ reference: ref })).toHaveLength(1);
  });

  it('a duplicate merchant_ref and a re-used chipdata are refused with no new sale', async () => {
    const ref = uid('TD-');
    const first = sale(ref);
    await initiate(first);
    expect(await initiate(sale(ref))).toMatchObject({ status: 400, body: { message: 'Duplicate merchant_ref' } });
    const reuse = uid('TC-');
    expect(await initiate(sale(reuse, '0000', { chipdata: first.chipdata }))).toMatchObject({
      status: 400,
      body: { message: 'chipdata has already been used' },
    });
    expect((await requery(reuse)).status).toBe(404);
    expect(env.sb.ledger({ reference: ref })).toHaveLength(1);
  });

  it('the PIN block is read with the session pin_key: a wrong PIN → 55; a terminal that never exchanged keys → 55', async () => {
    const wrong = uid('TP-');
    const pan = '5399830000000000';
    expect(
      (await initiate(sale(wrong, '0000', { pin_block: pinBlock('9999', pan, pinKey) }))).body!.data,
    ).toMatchObject({ response_code: '55', status: 'failed' });
    const noKeys = await startSandbox({ port: 0 });
    try {
      const r = await client(noKeys).post('/transaction', sale(uid('TK-')));
      expect(r.body!.data).toMatchObject({ response_code: '55', status: 'failed' });
    } finally {
      await noKeys.close();
    }
  });

  it('validation: account types by name (any case) but not the processor codes; pin_block 16 hex; merchant_ref ≤ 25; terminal', async () => {
    expect((await initiate(sale(uid('TA-'), '0000', { account_type: 'Savings' }))).status).toBe(200);
    for (const account_type of ['0000', '0010', '0020', '0030', 'CHEQUE']) {
      expect(await initiate(sale(uid('TA-'), '0000', { account_type }))).toMatchObject({
        status: 400,
        body: { message: 'Invalid account_type: must be DEFAULT, SAVINGS, CURRENT or CREDIT' },
      });
    }
    expect((await initiate(sale(uid('TB-'), '0000', { pin_block: '12345' }))).body!.message).toBe(
      'pin_block must be 16 hex characters',
    );
    expect((await initiate(sale('x'.repeat(26)))).body!.message).toBe('merchant_ref must be at most 25 characters');
    expect((await initiate(sale(uid('TE-'), '0000', { terminal_id: undefined }))).body!.message).toBe(
      'terminal_id is required',
    );
    expect(await initiate(sale(uid('TE-'), '0000', { terminal_id: '2SBX9999' }))).toMatchObject({
      status: 404,
      body: { message: 'Terminal not found' },
    });
    expect((await initiate(sale(uid('TE-'), '0000', { terminal_id: '2SBX0003' }))).body!.message).toBe(
      'Terminal is not active',
    );
    expect((await initiate(sale(uid('TF-'), '0000', { amount: '0' }))).status).toBe(400);
    expect((await initiate(sale(uid('TG-'), '0000', { transaction_type: 'Withdrawal' }))).status).toBe(400);
    const noPin = uid('TN-');
    const { pin_block: _p, ...withoutPin } = sale(noPin);
    expect((await initiate(withoutPin)).body!.data.response_code).toBe('00'); // a card that asked for no PIN
  });

  it('a malformed card_sequence_number is not a 400: no reply at all, the socket is closed, nothing recorded', async () => {
    const ref = uid('TH-');
    const started = Date.now();
    const outcome = await fetch(`${env.sb.url}/transaction`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(sale(ref, '0000', { card_sequence_number: '01' })),
    }).then(
      (res) => `answered ${res.status}`,
      () => 'no reply',
    );
    expect(outcome).toBe('no reply');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect((await requery(ref)).status).toBe(404);
    expect(env.sb.ledger({ reference: ref })).toHaveLength(0);
    expect((await env.api.admin.get('/requests')).body!.data).toContainEqual(
      expect.objectContaining({ path: '/transaction', status: 'hung', reference: ref }),
    );
  });

  it('Refund and Completion move money (pos_refund, pos_sale) and name their original; Pre-Authorization records the transaction only', async () => {
    const paid = uid('TP-');
    const refund = uid('TR-');
    const pre = uid('TQ-');
    const completion = uid('TS-');
    await initiate(sale(paid, '0000'));
    expect(
      (
        await initiate(
          sale(refund, '0000', { transaction_type: 'Refund', amount: '50000', original_merchant_ref: paid }),
        )
      ).body!.data,
    ).toMatchObject({ response_code: '00', transaction_type: 'Refund' });
    await initiate(sale(pre, '0000', { transaction_type: 'pre-authorization' }));
    expect(env.sb.ledger({ reference: pre })).toHaveLength(0);
    expect((await requery(pre)).body!.data).toMatchObject({
      transaction_type: 'Pre-Authorization',
      response_code: '00',
    });
    expect(
      (
        await initiate(
          sale(completion, '0000', { transaction_type: 'Completion', amount: '120000', original_merchant_ref: pre }),
        )
      ).body!.data,
    ).toMatchObject({ response_code: '00', transaction_type: 'Completion' });
    expect(env.sb.ledger({ reference: refund })).toEqual([
      expect.objectContaining({ kind: 'pos_refund', amount: 50_000 }),
    ]);
    expect(env.sb.ledger({ reference: completion })).toEqual([
      expect.objectContaining({ kind: 'pos_sale', amount: 120_000 }),
    ]);
    // The record does not carry the link (the spec's transaction resource has no such field).
    expect((await requery(refund)).body!.data).not.toHaveProperty('original_merchant_ref');
  });

  it('a Refund is refused (400, nothing recorded) without an approved original of the same card, or over what is left of it', async () => {
    const paid = uid('TP-');
    const declined = uid('TD-');
    const pre = uid('TQ-');
    await initiate(sale(paid, '0000'));
    await initiate(sale(declined, '0051'));
    await initiate(sale(pre, '0000', { transaction_type: 'Pre-Authorization' }));
    const refund = (original: string | undefined, amount: string, last4 = '0000') =>
      initiate(
        sale(uid('TR-'), last4, {
          transaction_type: 'Refund',
          amount,
          ...(original === undefined ? {} : { original_merchant_ref: original }),
        }),
      );
    expect((await refund(undefined, '1000')).body!.message).toBe(
      'original_merchant_ref is required for Refund and Completion',
    );
    expect((await refund('NEVER-SOLD', '1000')).body!.message).toBe('Original transaction not found');
    expect((await refund(declined, '1000', '0051')).body!.message).toBe('Original transaction was not approved');
    expect((await refund(pre, '1000')).body!.message).toBe('Original transaction is not a Purchase or Completion');
    expect((await refund(paid, '1000', '1234')).body!.message).toBe('Card does not match the original transaction');
    expect((await refund(paid, '150001')).body!.message).toBe('Refund amount exceeds the refundable balance of 150000');
    expect((await refund(paid, '100000')).body!.data.response_code).toBe('00');
    expect(await refund(paid, '50001')).toMatchObject({
      status: 400,
      body: { message: 'Refund amount exceeds the refundable balance of 50000' },
    });
    expect((await refund(paid, '50000')).body!.data.response_code).toBe('00');
    expect((await refund(paid, '1')).body!.message).toBe('Refund amount exceeds the refundable balance of 0');
    expect(
      env.sb.ledger({ kind: 'pos_refund' }).filter((e) => e.amount === 100_000 || e.amount === 50_000).length,
    ).toBeGreaterThanOrEqual(2);
    expect((await initiate(sale(uid('TP-'), '0000', { original_merchant_ref: paid }))).body!.message).toBe(
      'original_merchant_ref is only for Refund and Completion',
    );
  });

  it('a Completion is refused (400) unless it names an approved, unexpired, uncompleted Pre-Authorization of the same card, within the held amount; once only', async () => {
    const pre = uid('TQ-');
    const paid = uid('TP-');
    await initiate(sale(pre, '0000', { transaction_type: 'Pre-Authorization' }));
    await initiate(sale(paid, '0000'));
    const complete = (original: string, amount: string, last4 = '0000') =>
      initiate(sale(uid('TS-'), last4, { transaction_type: 'Completion', amount, original_merchant_ref: original }));
    expect((await complete('NEVER-HELD', '1000')).body!.message).toBe('Original transaction not found');
    expect((await complete(paid, '1000')).body!.message).toBe('Original transaction is not a Pre-Authorization');
    expect((await complete(pre, '1000', '1234')).body!.message).toBe('Card does not match the original transaction');
    expect((await complete(pre, '150001')).body!.message).toBe(
      'Completion amount exceeds the pre-authorised amount of 150000',
    );
    const first = await complete(pre, '150000');
    expect(first.body!.data.response_code).toBe('00');
    expect((await complete(pre, '1000')).body!.message).toBe('Pre-Authorization already completed');
    // A hold lapses after seven days on the sandbox clock.
    const old = uid('TQ-');
    await initiate(sale(old, '0000', { transaction_type: 'Pre-Authorization' }));
    await env.api.admin.advance(7 * 24 * 3600 * 1000);
    expect((await complete(old, '1000')).body!.message).toBe('Pre-Authorization has expired');
    expect(env.sb.ledger({ reference: old })).toHaveLength(0);
  });
});
