// POS remote requests (E1-E2) and the POS terminal API (F1-F4) against a real HTTP server with the spec's bodies.
import {
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  RequestValidationError,
  ResponseValidationError,
  TimeoutError,
  classifyPosResponseCode,
} from '../../src/api';
import { ok, refused, rejectionOf, useFakeService } from './helpers/fake-service';
import { posTerminalSale } from './helpers/requests';

const fake = useFakeService();

const issues = (err: unknown) => (err as RequestValidationError).issues;

describe('posRemote.create (E1)', () => {
  it('sends terminal_id, amount and lowercase account_type; reads request_ref', async () => {
    fake.svc.on('POST', '/softpos/pos/remote-request', ok({ request_ref: 'RR-0001' }));
    const res = await fake.client.posRemote.create({
      terminal_id: '2KUD0001',
      amount: 150000,
      account_type: 'savings',
    });
    expect(fake.svc.last().body).toEqual({ terminal_id: '2KUD0001', amount: 150000, account_type: 'savings' });
    expect(res.data.request_ref).toBe('RR-0001');
  });

  it('validates amount > 0 (integer) and account_type before sending', async () => {
    let err = await rejectionOf(fake.client.posRemote.create({ terminal_id: 'T', amount: 0 }));
    expect(issues(err)).toEqual([{ path: 'amount', message: 'must be greater than 0' }]);
    err = await rejectionOf(fake.client.posRemote.create({ terminal_id: 'T', amount: 1500.75 }));
    expect(issues(err)[0].message).toMatch(/never rounded/);
    err = await rejectionOf(fake.client.posRemote.create({ terminal_id: 'T', amount: 100, account_type: 'universal' }));
    expect(issues(err)).toEqual([{ path: 'account_type', message: 'must be default, savings, current or credit' }]);
    expect(fake.svc.requests).toHaveLength(0);
  });

  it('400 with status as a string; 401 Invalid or missing token', async () => {
    fake.svc.on('POST', '/softpos/pos/remote-request', {
      status: 400,
      body: { status: '400', success: false, message: 'Validation error: amount must be greater than 0', data: null },
    });
    let err = await rejectionOf(fake.client.posRemote.create({ terminal_id: 'T', amount: 100 }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ bodyStatus: 400, status: 400, outcomeUnknown: false, moneyMoving: true });
    fake.svc.on('POST', '/softpos/pos/remote-request', {
      status: 401,
      body: { status: '401', success: false, message: 'Invalid or missing token', data: null },
    });
    err = await rejectionOf(fake.client.posRemote.create({ terminal_id: 'T', amount: 100 }));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.message).toBe('Invalid or missing token');
  });
});

describe('posRemote.requery (E2)', () => {
  it('pending carries only status', async () => {
    fake.svc.on('GET', '/softpos/pos/remote-request/RR-0001', ok({ status: 'pending' }));
    const res = await fake.client.posRemote.requery({ request_ref: 'RR-0001' });
    expect(res.data).toEqual({ status: 'pending' });
  });

  it('success carries the flattened record', async () => {
    const rec = {
      status: 'success',
      id: 12,
      merchant_request_ref: 'RR-0001',
      merchant_id: 'SBN1',
      terminal_id: '2KUD0001',
      amount: 150000,
      currency: 'NGN',
      payment_method: 'card',
      transaction_type: 'Purchase',
      payment_info: { card_pan: '506100******0001', card_exp: '2712', card_type: 'Verve', cardholder_name: 'ADA OBI' },
      transaction_reference: 'TXN-1',
      virtual_account_number: null,
      rrn: '000000000001',
      stan: '000001',
      aid: 'A0000003710001',
      response_code: '00',
      response_message: 'Approved',
      processor: null,
      meta: '{}',
      pc_code: '00',
      created_at: '2025-01-10T10:00:00Z',
    };
    fake.svc.on('GET', '/softpos/pos/remote-request/RR-0001', ok(rec));
    const res = await fake.client.posRemote.requery({ request_ref: 'RR-0001' });
    expect(res.data).toMatchObject({ status: 'success', amount: 150000, response_code: '00' });
  });

  it("404 'Request not found or expired'", async () => {
    fake.svc.on('GET', '/softpos/pos/remote-request/RR-OLD', refused(404, 'Request not found or expired'));
    const err = await rejectionOf(fake.client.posRemote.requery({ request_ref: 'RR-OLD' }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ message: 'Request not found or expired', operation: 'posRemote.requery' });
  });
});

const config = {
  terminal: {
    terminal_id: '2KUD0001',
    serial_no: 'SN-001',
    terminal_type: 'softpos',
    status: 'active',
    currency: 'NGN',
    mcc_code: '5411',
    address: { street: '1 Marina', city: null, region: 'Lagos', country_code: 'NG' },
    latitude: '6.45',
    longitude: '3.39',
  },
  merchant: { merchant_id: 'SBN1', name: 'Shop' },
  logo: {
    key: 'k',
    url: 'https://cdn.example/logo.png',
    file_name: 'logo.png',
    ext: 'png',
    verified_at: '2025-01-01T00:00:00Z',
  },
};
const keys = {
  terminal_id: '2KUD0001',
  pin_key: '0123456789ABCDEF0123456789ABCDEF',
  master_key: 'FEDCBA9876543210FEDCBA9876543210',
  session_key: null,
  working_key: '00112233445566778899AABBCCDDEEFF',
  response_code: '00',
  response_message: 'Approved',
};

describe('posTerminal.getConfiguration (F1)', () => {
  it('POSTs {serial_no}', async () => {
    fake.svc.on('POST', '/softpos/terminal/configuration', ok(config));
    const res = await fake.client.posTerminal.getConfiguration({ serial_no: 'SN-001' });
    expect(fake.svc.last().body).toEqual({ serial_no: 'SN-001' });
    expect(res.data.terminal.terminal_id).toBe('2KUD0001');
  });

  it("400 'Incorrect device information' and 404 'Terminal not found'", async () => {
    fake.svc.on('POST', '/softpos/terminal/configuration', refused(400, 'Incorrect device information'));
    await expect(fake.client.posTerminal.getConfiguration({ serial_no: 'x' })).rejects.toMatchObject({
      constructor: BadRequestError,
      message: 'Incorrect device information',
    });
    fake.svc.on('POST', '/softpos/terminal/configuration', refused(404, 'Terminal not found'));
    await expect(fake.client.posTerminal.getConfiguration({ serial_no: 'x' })).rejects.toMatchObject({
      constructor: NotFoundError,
      message: 'Terminal not found',
    });
  });
});

describe('posTerminal.keyExchange (F2)', () => {
  it('sends refresh=false by default, refresh=true on request', async () => {
    fake.svc.on('POST', '/softpos/terminal/key-exchange', ok(keys));
    const res = await fake.client.posTerminal.keyExchange({ serial_no: 'SN-001' });
    expect(fake.svc.last()).toMatchObject({ query: { refresh: 'false' }, body: { serial_no: 'SN-001' } });
    expect(res.data.pin_key).toBe(keys.pin_key);
    await fake.client.posTerminal.keyExchange({ serial_no: 'SN-001', refresh: true });
    expect(fake.svc.last().query).toEqual({ refresh: 'true' });
  });

  it('an error never carries key material (the body kept on the error is redacted)', async () => {
    fake.svc.on('POST', '/softpos/terminal/key-exchange', ok({ ...keys, master_key: 'short' }));
    const err = await rejectionOf(fake.client.posTerminal.keyExchange({ serial_no: 'SN-001' }));
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect((err as unknown as ResponseValidationError).issues).toEqual([
      { path: 'data.master_key', message: 'must be 32 hex characters' },
    ]);
    expect(JSON.stringify(err.body)).not.toContain(keys.pin_key);
    expect(err.body).toMatchObject({
      data: {
        pin_key: '[REDACTED]',
        master_key: '[REDACTED]',
        working_key: '[REDACTED]',
        session_key: null,
        terminal_id: '2KUD0001',
      },
    });
    expect(err.message).not.toContain(keys.pin_key);
  });

  it('404 as for the configuration', async () => {
    fake.svc.on('POST', '/softpos/terminal/key-exchange', refused(404, 'Terminal not found'));
    await expect(fake.client.posTerminal.keyExchange({ serial_no: 'SN-404' })).rejects.toBeInstanceOf(NotFoundError);
  });
});

const posReq = posTerminalSale({ transaction_type: 'purchase', account_type: 'savings' });
const posTxn = (over: Record<string, unknown> = {}) => ({
  amount: '150000',
  meta: { merchant_name: 'Shop', processor_amount: '150000' },
  merchant_id: 'SBN1',
  payment_info: { card_exp: '2712', card_pan: '506100******0001', card_type: 'Verve', cardholder_name: 'ADA OBI' },
  status: 'success',
  payment_method: 'card',
  transaction_type: 'Purchase',
  response_code: '00',
  transaction_reference: 'TXN-9',
  terminal_id: '2KUD0001',
  response_message: 'Approved',
  rrn: '000000000009',
  stan: '000009',
  currency: 'NGN',
  aid: 'A0000003710001',
  merchant_request_ref: null,
  updated_at: 't',
  created_at: 't',
  virtual_account_number: null,
  receipt_no: 'R-9',
  merchant_ref: 'POS-0001',
  ...over,
});

describe('posTerminal.initiate (F3)', () => {
  it('sends terminal_id in the body, amount as a string, canonical type names', async () => {
    fake.svc.on('POST', '/transaction', ok(posTxn()));
    const res = await fake.client.posTerminal.initiate(posReq);
    expect(fake.svc.last().body).toEqual({
      ...posReq,
      amount: '150000',
      currency: 'NGN',
      transaction_type: 'Purchase',
      account_type: 'SAVINGS',
    });
    expect(res.data).toMatchObject({
      status: 'success',
      response_code: '00',
      amount: 150000,
      merchant_ref: 'POS-0001',
    });
    expect(classifyPosResponseCode(res.data.response_code)).toEqual({
      outcome: 'approved',
      action: 'Approved: complete the sale',
      requeryFirst: false,
    });
  });

  it('a declined 51 is a result (status failed), not an error', async () => {
    fake.svc.on(
      'POST',
      '/transaction',
      ok(posTxn({ status: 'failed', response_code: '51', response_message: 'Insufficient Funds' })),
    );
    const res = await fake.client.posTerminal.initiate(posReq);
    expect(res.data.status).toBe('failed');
    expect(classifyPosResponseCode(res.data.response_code).action).toBe('Insufficient funds: ask for another card');
  });

  it('card_sequence_number must be exactly 3 digits (the field is named)', async () => {
    for (const csn of ['1', '01', '0001', 'A01']) {
      const err = await rejectionOf(fake.client.posTerminal.initiate({ ...posReq, card_sequence_number: csn }));
      expect(err).toBeInstanceOf(RequestValidationError);
      expect(issues(err)).toEqual([
        { path: 'card_sequence_number', message: expect.stringContaining('exactly 3 digits') },
      ]);
      expect(err.message).toContain('card_sequence_number');
    }
    expect(fake.svc.requests).toHaveLength(0);
  });

  it('pin_block 16 hex, merchant_ref <= 25, account type names only (processor codes refused)', async () => {
    let err = await rejectionOf(fake.client.posTerminal.initiate({ ...posReq, pin_block: '0123456789ABCDEZ' }));
    expect(issues(err)).toEqual([{ path: 'pin_block', message: 'must be 16 hex characters (ISO-0 PIN block)' }]);
    err = await rejectionOf(fake.client.posTerminal.initiate({ ...posReq, merchant_ref: 'M'.repeat(26) }));
    expect(issues(err)).toEqual([{ path: 'merchant_ref', message: 'must be at most 25 characters' }]);
    for (const code of ['0000', '0010', '0020', '0030']) {
      err = await rejectionOf(fake.client.posTerminal.initiate({ ...posReq, account_type: code }));
      expect(issues(err)).toEqual([
        { path: 'account_type', message: expect.stringContaining(`processor code ${code} is refused`) },
      ]);
    }
    err = await rejectionOf(fake.client.posTerminal.initiate({ ...posReq, account_type: 'CHEQUE' }));
    expect(issues(err)[0].path).toBe('account_type');
    err = await rejectionOf(fake.client.posTerminal.initiate({ ...posReq, amount: 1500.5 }));
    expect(issues(err)[0]).toEqual({ path: 'amount', message: expect.stringContaining('never rounded') });
    err = await rejectionOf(fake.client.posTerminal.initiate({ ...posReq, merchant_ref: undefined } as never));
    expect(issues(err)).toEqual([{ path: 'merchant_ref', message: 'is required' }]);
    expect(fake.svc.requests).toHaveLength(0);
  });

  it('a PIN-less card may omit pin_block', async () => {
    fake.svc.on('POST', '/transaction', ok(posTxn()));
    const { pin_block: _p, ...noPin } = posReq;
    await fake.client.posTerminal.initiate(noPin);
    expect(fake.svc.last().body).not.toHaveProperty('pin_block');
  });

  it("400 'account_type outside the four allowed values' from the service", async () => {
    fake.svc.on('POST', '/transaction', refused(400, 'Invalid account_type'));
    await expect(fake.client.posTerminal.initiate(posReq)).rejects.toMatchObject({
      constructor: BadRequestError,
      outcomeUnknown: false,
    });
  });

  it('no response: TimeoutError with outcomeUnknown (then requery by merchant_ref)', async () => {
    fake.svc.on('POST', '/transaction', 'hang');
    const err = await rejectionOf(fake.client.posTerminal.initiate(posReq, { timeoutMs: 250 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({
      operation: 'posTerminal.initiate',
      outcomeUnknown: true,
      retrySafe: false,
      requestSent: true,
    });
  });
});

describe('posTerminal.requery (F4)', () => {
  it('found: the transaction (read response_code, do not retry)', async () => {
    fake.svc.on(
      'GET',
      '/transaction/by-ref/POS-0001',
      ok(posTxn({ status: 'failed', response_code: '91', response_message: 'Issuer or switch inoperative' })),
    );
    const res = await fake.client.posTerminal.requery({ merchant_ref: 'POS-0001' });
    expect(fake.svc.last().method).toBe('GET');
    expect(classifyPosResponseCode(res.data.response_code)).toEqual({
      outcome: 'unknown',
      action: 'Issuer or switch unavailable',
      requeryFirst: true,
    });
  });

  it('404: never received (a retry of the transaction is safe)', async () => {
    fake.svc.on('GET', '/transaction/by-ref/POS-0002', refused(404, 'Transaction not found'));
    const err = await rejectionOf(fake.client.posTerminal.requery({ merchant_ref: 'POS-0002' }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ operation: 'posTerminal.requery', status: 404 });
  });
});

describe('classifying a POS response code', () => {
  it.each([
    ['00', 'approved', false],
    ['51', 'declined', false],
    ['55', 'declined', false],
    ['91', 'unknown', true],
    ['96', 'unknown', true],
    ['05', 'declined', false],
    ['', 'unknown', true],
  ])('%s → %s', (code, outcome, requeryFirst) => {
    expect(classifyPosResponseCode(code)).toMatchObject({ outcome, requeryFirst });
  });

  it('actions', () => {
    expect(classifyPosResponseCode('55').action).toBe('Incorrect PIN: retry with a fresh card read');
    expect(classifyPosResponseCode('96').action).toBe('System malfunction');
    expect(classifyPosResponseCode('05', 'Do not honour').action).toBe('Declined (05): Do not honour');
    expect(classifyPosResponseCode('05').action).toBe('Declined by the processor (code 05)');
  });
});
