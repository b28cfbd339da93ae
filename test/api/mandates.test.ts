// Mandates (D1-D6) against a real HTTP server with the spec's bodies.
import {
  AuthenticationError,
  BadRequestError,
  DependencyFailedError,
  NotFoundError,
  PermissionDeniedError,
  RequestValidationError,
  ResponseValidationError,
  TimeoutError,
} from '../../src/api';
import { ok, refused, rejectionOf, useFakeService } from './helpers/fake-service';

const fake = useFakeService();

const createBody = {
  debit_type: 'VARIABLE',
  amount: 5_000_000,
  account_number: '0123456789',
  bank_code: '058',
  description: 'Monthly subscription',
  start_date: '2025-02-01',
  end_date: '2025-12-31',
  customer_email: 'ada@example.com',
  transaction_reference: 'MND-0001',
  customerInformation: {
    identity: { number: '22222222222' },
    firstName: 'Ada',
    lastName: 'Obi',
    address: '1 Marina, Lagos',
    phone: '08012345678',
  },
};
const mandate = {
  mandate_id: 'mnd_01',
  mandate_type: 'emandate',
  debit_type: 'variable',
  status: 'initiated',
  approved: false,
  ready_to_debit: false,
  reference: 'MND-0001',
  account_number: '0123456789',
  account_name: 'ADA OBI',
  bank: '058',
  bankName: 'GTBank',
  description: 'Monthly subscription',
  start_date: '2025-02-01',
  end_date: '2025-12-31',
  amount: 5000000,
  balance: 5000000,
  total_debited: 0,
  customer_email: 'ada@example.com',
  customer_name: 'Ada Obi',
  created_at: '2025-01-10T10:00:00Z',
  merchant_id: 'SBN1',
  id: 'cur_1',
};
const debitBody = {
  amount: 20_000,
  mandate_id: 'mnd_01',
  transaction_reference: 'DD-0001',
  narration: 'January',
  customer_email: 'ada@example.com',
  pass_charge: false,
};

describe('mandates.create (D1)', () => {
  it('sends emandate, lowercase debit_type, account number as a string; reads session_token', async () => {
    fake.svc.on(
      'POST',
      '/transaction/mandate/create',
      ok({ ...mandate, message: 'OTP sent', date: '2025-01-10', next_action: 'send_otp', session_token: 'sess_abc' }),
    );
    const res = await fake.client.mandates.create(createBody);
    expect(fake.svc.last().body).toEqual({
      ...createBody,
      mandate_type: 'emandate',
      debit_type: 'variable',
      customerInformation: { ...createBody.customerInformation, identity: { type: 'bvn', number: '22222222222' } },
    });
    expect(res.data).toMatchObject({
      mandate_id: 'mnd_01',
      status: 'initiated',
      next_action: 'send_otp',
      session_token: 'sess_abc',
      approved: false,
    });
  });

  it("400 'Customer already exists with the same email address.'", async () => {
    fake.svc.on(
      'POST',
      '/transaction/mandate/create',
      refused(400, 'Customer already exists with the same email address.'),
    );
    const err = await rejectionOf(fake.client.mandates.create(createBody));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.message).toBe('Customer already exists with the same email address.');
  });

  it('FIXED needs fixedMandateSettings; dates must be YYYY-MM-DD', async () => {
    const err = await rejectionOf(
      fake.client.mandates.create({ ...createBody, debit_type: 'fixed', start_date: '01/02/2025' }),
    );
    expect((err as unknown as RequestValidationError).issues).toEqual(
      expect.arrayContaining([{ path: 'start_date', message: 'must be a date YYYY-MM-DD' }]),
    );
    const err2 = await rejectionOf(fake.client.mandates.create({ ...createBody, debit_type: 'FIXED' }));
    expect((err2 as unknown as RequestValidationError).issues).toEqual([
      { path: 'fixedMandateSettings', message: 'is required when debit_type is fixed' },
    ]);
    fake.svc.on(
      'POST',
      '/transaction/mandate/create',
      ok({ ...mandate, debit_type: 'fixed', frequency: 'MONTHLY', initial_debit_amount: 20000 }),
    );
    await fake.client.mandates.create({
      ...createBody,
      debit_type: 'FIXED',
      fixedMandateSettings: {
        frequency: 'monthly',
        interval: 1,
        initial_debit_amount: 20000,
        initial_debit_date: '2025-02-01',
      },
    });
    expect(fake.svc.last().body).toMatchObject({
      debit_type: 'fixed',
      fixedMandateSettings: {
        frequency: 'MONTHLY',
        interval: 1,
        initial_debit_amount: 20000,
        initial_debit_date: '2025-02-01',
      },
    });
  });
});

describe('mandates.validateOtp (D2)', () => {
  it('approves; OTP is sent as digits keeping a leading zero', async () => {
    fake.svc.on(
      'POST',
      '/transaction/mandate/validate-otp',
      ok({ mandate_id: 'mnd_01', mandate_reference_number: 'RMN-1', status: 'approved', ready_to_debit: true }),
    );
    const res = await fake.client.mandates.validateOtp({ session_token: 'sess_abc', otp: '012345' });
    expect(fake.svc.last().body).toEqual({ session_token: 'sess_abc', otp: '012345' });
    expect(res.data).toEqual({
      mandate_id: 'mnd_01',
      mandate_reference_number: 'RMN-1',
      status: 'approved',
      ready_to_debit: true,
    });
  });

  it("424 'Invalid or expired session.'", async () => {
    fake.svc.on('POST', '/transaction/mandate/validate-otp', refused(424, 'Invalid or expired session.'));
    const err = await rejectionOf(fake.client.mandates.validateOtp({ session_token: 'old', otp: 123456 }));
    expect(err).toBeInstanceOf(DependencyFailedError);
    expect(err).toMatchObject({
      status: 424,
      message: 'Invalid or expired session.',
      retrySafe: false,
      outcomeUnknown: false,
    });
  });
});

describe('mandates.debit (D3)', () => {
  it("normalises the sample's `aamount` to amount", async () => {
    fake.svc.on(
      'POST',
      '/transaction/mandate/debit',
      ok({
        status: 'success',
        aamount: 20000,
        mandate_id: 'mnd_01',
        transaction_reference: 'DD-0001',
        date: '2025-02-01',
        account: { bank_code: '058', account_name: 'ADA OBI', account_number: '0123456789', bank_name: 'GTBank' },
      }),
    );
    const res = await fake.client.mandates.debit(debitBody);
    expect(fake.svc.last().body).toEqual(debitBody);
    expect(res.data.amount).toBe(20000);
    expect(res.data).not.toHaveProperty('aamount');
    expect(res.data.account?.account_number).toBe('0123456789');
  });

  it('refuses less than N200 and a float amount before sending', async () => {
    let err = await rejectionOf(fake.client.mandates.debit({ ...debitBody, amount: 19_999 }));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'amount', message: 'must be at least 20000 kobo (N200), the minimum direct debit' },
    ]);
    err = await rejectionOf(fake.client.mandates.debit({ ...debitBody, amount: 20_000.5 }));
    expect((err as unknown as RequestValidationError).issues[0].message).toMatch(/fractional amount is refused/);
    err = await rejectionOf(fake.client.mandates.debit({ ...debitBody, transaction_reference: undefined } as never));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'transaction_reference', message: 'is required' },
    ]);
    expect(fake.svc.requests).toHaveLength(0);
  });

  it('400 messages: not ready, minimum, balance', async () => {
    for (const message of [
      'Mandate is not ready for debit',
      'Minimum amount for direct debit is N200.',
      'Mandate balance is lesser than debit amount',
    ]) {
      fake.svc.on('POST', '/transaction/mandate/debit', refused(400, message));
      const err = await rejectionOf(fake.client.mandates.debit(debitBody));
      expect(err).toBeInstanceOf(BadRequestError);
      expect(err).toMatchObject({ message, moneyMoving: true, outcomeUnknown: false, retrySafe: false });
    }
  });

  it('a float amount in the response is refused (outcome unknown: verify before acting)', async () => {
    fake.svc.on(
      'POST',
      '/transaction/mandate/debit',
      ok({ status: 'success', amount: 200.5, mandate_id: 'mnd_01', transaction_reference: 'DD-0001' }),
    );
    const err = await rejectionOf(fake.client.mandates.debit(debitBody));
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(err).toMatchObject({ outcomeUnknown: true });
  });

  it('a timeout after sending is outcomeUnknown', async () => {
    fake.svc.on('POST', '/transaction/mandate/debit', 'hang');
    const err = await rejectionOf(fake.client.mandates.debit(debitBody, { timeoutMs: 200 }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ outcomeUnknown: true, retrySafe: false });
  });
});

describe('mandates.cancel (D4)', () => {
  it('sends mandateIds and reads cancelled and failed lists', async () => {
    fake.svc.on(
      'POST',
      '/transaction/mandate/cancel',
      ok({
        canceledMandates: ['mnd_01'],
        failedMandates: [{ mandateId: 'mnd_02', failureReason: 'Mandate already cancelled' }],
      }),
    );
    const res = await fake.client.mandates.cancel({ mandateIds: ['mnd_01', 'mnd_02'] });
    expect(fake.svc.last().body).toEqual({ mandateIds: ['mnd_01', 'mnd_02'] });
    expect(res.data.failedMandates[0]).toEqual({ mandateId: 'mnd_02', failureReason: 'Mandate already cancelled' });
  });

  it('refuses an empty list', async () => {
    const err = await rejectionOf(fake.client.mandates.cancel({ mandateIds: [] }));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'mandateIds', message: 'must list at least one mandate id' },
    ]);
  });
});

describe('mandates.list (D5)', () => {
  it('sends filters as query and parses the page; is_approved aliases approved', async () => {
    const { approved: _a, ...withoutApproved } = mandate;
    fake.svc.on(
      'GET',
      '/transaction/mandate/get-mandates',
      ok({
        records: [{ ...withoutApproved, is_approved: true, status: 'approved' }],
        next_cursor: 'c2',
        prev_cursor: null,
        has_more: true,
        page_size: 1,
      }),
    );
    const res = await fake.client.mandates.list({
      status: 'approved',
      page_size: 1,
      merchant_ref: 'MND-0001',
      is_approved: true,
      start_date: '2025-01-01',
    });
    expect(fake.svc.last().query).toEqual({
      status: 'approved',
      page_size: '1',
      merchant_ref: 'MND-0001',
      is_approved: 'true',
      start_date: '2025-01-01',
    });
    expect(res.data.records[0]).toMatchObject({ approved: true, is_approved: true, amount: 5000000 });
    expect(res.data.has_more).toBe(true);
  });

  it("'No mandate found for reference …' (body status 400, HTTP 404) is a NotFoundError", async () => {
    const body = { status: 400, success: false, message: 'No mandate found for reference MND-X', data: null };
    fake.svc.on('GET', '/transaction/mandate/get-mandates', { status: 404, body });
    const err = await rejectionOf(fake.client.mandates.list({ merchant_ref: 'MND-X' }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({
      status: 404,
      bodyStatus: 400,
      message: 'No mandate found for reference MND-X',
      operation: 'mandates.list',
    });
  });

  it('the same body with HTTP 400 is a NotFoundError too', async () => {
    fake.svc.on('GET', '/transaction/mandate/get-mandates', refused(400, 'No mandate found for reference MND-Y'));
    await expect(fake.client.mandates.list({ merchant_ref: 'MND-Y' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('403, 401', async () => {
    fake.svc.on('GET', '/transaction/mandate/get-mandates', refused(403, 'Merchant secret key is invalid'));
    await expect(fake.client.mandates.list({})).rejects.toBeInstanceOf(PermissionDeniedError);
    fake.svc.on('GET', '/transaction/mandate/get-mandates', {
      status: 401,
      body: { success: false, message: '', data: {} },
    });
    await expect(fake.client.mandates.list({})).rejects.toBeInstanceOf(AuthenticationError);
  });
});

describe('mandates.resendOtp (D6)', () => {
  it('sends the session token; data {}', async () => {
    fake.svc.on('POST', '/transaction/mandate/resend-otp', ok({}));
    const res = await fake.client.mandates.resendOtp({ session_token: 'sess_abc' });
    expect(fake.svc.last().body).toEqual({ session_token: 'sess_abc' });
    expect(res.data).toEqual({});
  });
});
