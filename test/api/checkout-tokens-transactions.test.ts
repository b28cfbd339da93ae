// Hosted checkout, tokens and transactions (A1-A6) and verify against a real HTTP server with the spec's bodies.
import { AuthenticationError, BadRequestError, RequestValidationError, type PaymentsClient } from '../../src/api';
import { ok, refused, rejectionOf, useFakeService } from './helpers/fake-service';

const fake = useFakeService();

const initiation = {
  auth_url: null,
  access_token: null,
  merchant_info: { merchant_response: null, merchant_name: null, merchant_logo: null, merchant_id: 'SBN1EBZEQ8' },
  currency: 'NGN',
  recurring: { frequency: null, duration: null, type: 0, plan_code: null, customer_name: null },
  is_recurring: false,
  plan_code: null,
  callback_url: 'https://shop.example/cb',
  transaction_ref: 'ORD-1001',
  transaction_memo: null,
  transaction_amount: 43000,
  authorized_channels: ['card', 'ussd', 'bank', 'transfer'],
  checkout_url: 'https://sandbox-pay.example/ORD-1001',
};

describe('checkout.initiate (A1)', () => {
  it('sends the body with amount as a string of digits and parses the result', async () => {
    fake.svc.on('POST', '/transaction/initiate', ok(initiation));
    const input: Parameters<PaymentsClient['checkout']['initiate']>[0] = {
      email: 'payer@example.com',
      amount: 43000,
      currency: 'NGN',
      transaction_ref: 'ORD-1001',
      callback_url: 'https://shop.example/cb',
      payment_channels: ['card', 'transfer'],
      metadata: { order: 7 },
      pass_charge: false,
      is_recurring: true,
    };
    const res = await fake.client.checkout.initiate(input);
    expect(fake.svc.last()).toMatchObject({ method: 'POST', path: '/transaction/initiate' });
    expect(fake.svc.last().body).toEqual({ ...input, amount: '43000', initiate_type: 'inline' });
    expect(res.data.checkout_url).toBe('https://sandbox-pay.example/ORD-1001');
    expect(res.data.transaction_amount).toBe(43000);
    expect(res.status).toBe(200);
  });

  it('401 Initiate transaction Unauthorized', async () => {
    fake.svc.on('POST', '/transaction/initiate', {
      status: 401,
      body: { status: 401, message: 'Initiate transaction Unauthorized', data: null },
    });
    const err = await rejectionOf(
      fake.client.checkout.initiate({ email: 'p@example.com', amount: '100', currency: 'NGN' }),
    );
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({
      status: 401,
      message: 'Initiate transaction Unauthorized',
      operation: 'checkout.initiate',
      retrySafe: false,
      outcomeUnknown: false,
    });
  });

  it('400 <field> is required (success=false, no status)', async () => {
    fake.svc.on('POST', '/transaction/initiate', {
      status: 400,
      body: { success: false, message: 'email is required', data: null },
    });
    const err = await rejectionOf(
      fake.client.checkout.initiate({ email: 'p@example.com', amount: 100, currency: 'USD' }),
    );
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, bodyStatus: undefined, message: 'email is required' });
  });

  it('refuses a float amount, a decimal string, and a bad currency before sending', async () => {
    for (const [amount, currency] of [
      [430.5, 'NGN'],
      ['430.50', 'NGN'],
      [43000, 'EUR'],
    ] as const) {
      const err = await rejectionOf(
        fake.client.checkout.initiate({ email: 'p@example.com', amount, currency: currency as 'NGN' }),
      );
      expect(err).toBeInstanceOf(RequestValidationError);
    }
    const err = await rejectionOf(
      fake.client.checkout.initiate({ email: 'p@example.com', amount: 430.5, currency: 'NGN' }),
    );
    expect((err as unknown as RequestValidationError).issues[0]).toEqual({
      path: 'amount',
      message: expect.stringContaining('never rounded'),
    });
    expect(fake.svc.requests).toHaveLength(0);
  });
});

describe('checkout.simulateTransfer (A2)', () => {
  it('POSTs to the simulate path with dva: true and accepts the string data', async () => {
    fake.svc.on('POST', '/virtual-account/simulate/payment', ok('Payment successful'));
    const res = await fake.client.checkout.simulateTransfer({ virtual_account_number: '4000012345', amount: 5000 });
    expect(fake.svc.last().body).toEqual({ virtual_account_number: '4000012345', amount: 5000, dva: true });
    expect(res.data).toBe('Payment successful');
  });

  it('400 <field> is required', async () => {
    fake.svc.on('POST', '/virtual-account/simulate/payment', refused(400, 'amount is required'));
    const err = await rejectionOf(
      fake.client.checkout.simulateTransfer({ virtual_account_number: 4000012345, amount: 1 }),
    );
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.message).toBe('amount is required');
  });
});

describe('tokens.charge (A4)', () => {
  it('charges with token and reference; tolerates the null/zero body the spec shows', async () => {
    const shown = {
      transaction_amount: 0,
      transaction_ref: null,
      email: null,
      transaction_status: null,
      transaction_currency_id: null,
      created_at: '0001-01-01T00:00:00',
      transaction_type: null,
      merchant_name: null,
      merchant_business_name: null,
      gateway_transaction_ref: null,
      recurring: null,
      merchant_email: null,
      plan_code: null,
    };
    fake.svc.on('POST', '/transaction/charge_card', ok(shown));
    const res = await fake.client.tokens.charge({
      amount: 10000,
      token_id: 'AUTH_TOKEN_1',
      transaction_ref: 'REC-0001',
    });
    expect(fake.svc.last().body).toEqual({ amount: 10000, token_id: 'AUTH_TOKEN_1', transaction_ref: 'REC-0001' });
    expect(res.data).toMatchObject({ transaction_amount: 0, transaction_ref: null });
  });

  it("400 'amount cannot be < 0'", async () => {
    fake.svc.on('POST', '/transaction/charge_card', refused(400, 'amount cannot be < 0'));
    const err = await rejectionOf(fake.client.tokens.charge({ amount: 1, token_id: 'T', transaction_ref: 'REC-0002' }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({
      message: 'amount cannot be < 0',
      operation: 'tokens.charge',
      moneyMoving: true,
      outcomeUnknown: false,
    });
  });

  it('requires transaction_ref (no silent generation for a money-moving call)', async () => {
    const err = await rejectionOf(fake.client.tokens.charge({ amount: 1, token_id: 'T' } as never));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'transaction_ref', message: 'is required' },
    ]);
  });
});

describe('tokens.cancel (A5)', () => {
  it('PATCHes {auth_code: [ids]} even for one id', async () => {
    fake.svc.on('PATCH', '/transaction/cancel/recurring', ok({ auth_code: ['AUTH_1'] }));
    const res = await fake.client.tokens.cancel({ auth_code: 'AUTH_1' });
    expect(fake.svc.last()).toMatchObject({ method: 'PATCH', body: { auth_code: ['AUTH_1'] } });
    expect(res.data.auth_code).toEqual(['AUTH_1']);
  });

  it("400 'Recurring Payment was not cancelled'", async () => {
    fake.svc.on('PATCH', '/transaction/cancel/recurring', refused(400, 'Recurring Payment was not cancelled'));
    const err = await rejectionOf(fake.client.tokens.cancel({ auth_code: ['A', 'B'] }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(fake.svc.last().body).toEqual({ auth_code: ['A', 'B'] });
  });
});

const record = {
  id: 1,
  transaction_amount: 10000,
  transaction_ref: 'ORD-1',
  email: 'p@example.com',
  merchant_id: 'SBN1',
  merchant_amount: 9850,
  merchant_name: 'Shop',
  merchant_business_name: 'Shop Ltd',
  merchant_email: 'm@shop.example',
  customer_email: 'p@example.com',
  customer_name: 'Ada',
  meta_data: '{"ip_address":"1.2.3.4"}',
  meta: { ip_address: ['1.2.3.4'] },
  transaction_status: 'success',
  transaction_charges: 150,
  transaction_currency_id: 'NGN',
  transaction_gateway_id: 'GW',
  transaction_type: 'Card',
  flat_charge: 0,
  is_suspicious: false,
  is_refund: false,
  created_at: '2025-01-10T10:00:00.000Z',
};

describe('transactions.query (A6)', () => {
  it('GETs with the query parameters and parses records', async () => {
    fake.svc.on('GET', '/transaction', ok([record]));
    const res = await fake.client.transactions.query({
      currency: 'NGN',
      start_date: '2025-01-01',
      end_date: '2025-02-01',
      page: 1,
      perpage: 20,
      reference: 'ORD-1',
    });
    expect(fake.svc.last()).toMatchObject({
      method: 'GET',
      path: '/transaction',
      query: {
        currency: 'NGN',
        start_date: '2025-01-01',
        end_date: '2025-02-01',
        page: '1',
        perpage: '20',
        reference: 'ORD-1',
      },
    });
    expect(fake.svc.last().rawBody).toBe('');
    expect(res.data[0]).toMatchObject({
      transaction_ref: 'ORD-1',
      transaction_amount: 10000,
      meta_data: '{"ip_address":"1.2.3.4"}',
    });
  });

  it('refuses missing dates and a window wider than one month', async () => {
    let err = await rejectionOf(fake.client.transactions.query({} as never));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'start_date', message: 'is required' },
      { path: 'end_date', message: 'is required' },
    ]);
    err = await rejectionOf(fake.client.transactions.query({ start_date: '2025-01-01', end_date: '2025-02-02' }));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'end_date', message: expect.stringContaining('at most one month') },
    ]);
    err = await rejectionOf(fake.client.transactions.query({ start_date: '2025-03-01', end_date: '2025-02-02' }));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'end_date', message: 'must not be before start_date' },
    ]);
    expect(fake.svc.requests).toHaveLength(0);
  });

  it("400 'Bad Request'", async () => {
    fake.svc.on('GET', '/transaction', refused(400, 'Bad Request'));
    const err = await rejectionOf(fake.client.transactions.query({ start_date: '2025-01-31', end_date: '2025-02-28' }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ message: 'Bad Request', retrySafe: false });
  });
});

describe('verify one transaction', () => {
  it('GETs /transaction/verify/{ref} (encoded) and normalises the status', async () => {
    fake.svc.on(
      'GET',
      '/transaction/verify/ORD%2F1',
      ok({ transaction_ref: 'ORD/1', transaction_status: 'abandoned', transaction_amount: 5000 }),
    );
    const res = await fake.client.transactions.verify({ transaction_ref: 'ORD/1' });
    expect(fake.svc.last().path).toBe('/transaction/verify/ORD%2F1');
    expect(res.data.transaction_status).toBe('Abandoned');
  });

  it('400 for an unknown reference', async () => {
    fake.svc.on('GET', '/transaction/verify/NOPE', refused(400, 'Transaction not found'));
    const err = await rejectionOf(fake.client.transactions.verify({ transaction_ref: 'NOPE' }));
    expect(err).toBeInstanceOf(BadRequestError);
  });
});
