// The direct API (B1-B5) against a real HTTP server with the spec's bodies.
import { AuthenticationError, BadRequestError, PermissionDeniedError, RequestValidationError } from '../../src/api';
import { ok, refused, rejectionOf, useFakeService } from './helpers/fake-service';

const fake = useFakeService();

const customer = { name: 'Ada Obi', email: 'ada@example.com' };
const card = { number: '5555555555554444', cvv: '123', expiry_month: '09', expiry_year: '29' };
const keyInvalid = refused(403, 'Merchant secret key is empty or invalid. Must start with sandbox_sk_');

describe('direct.chargeCard (B1)', () => {
  it('sends payment_method card and parses ValidatePin', async () => {
    fake.svc.on(
      'POST',
      '/transaction/initiate/process-payment',
      ok(
        {
          amount: 10000,
          transaction_ref: 'ORD-1',
          currency: 'NGN',
          transaction_type: 'Card',
          gateway_ref: 'GW-1_1',
          merchant_amount: 9850,
          message: 'Charge attempted',
          transaction_status: 'ValidatePin',
        },
        'success',
      ),
    );
    const res = await fake.client.direct.chargeCard({
      transaction_reference: 'ORD-1',
      amount: 10000,
      customer,
      card,
      pass_charge: false,
      redirect_url: 'https://shop.example/done',
    });
    expect(fake.svc.last().body).toEqual({
      transaction_reference: 'ORD-1',
      amount: 10000,
      currency: 'NGN',
      pass_charge: false,
      customer,
      card,
      redirect_url: 'https://shop.example/done',
      payment_method: 'card',
    });
    expect(res.data.transaction_status).toBe('ValidatePin');
  });

  it('ThreeDSecure returns auth_url', async () => {
    fake.svc.on(
      'POST',
      '/transaction/initiate/process-payment',
      ok({
        amount: 10000,
        transaction_ref: 'ORD-2',
        transaction_status: 'ThreeDSecure',
        auth_url: 'https://acs.example/3ds',
      }),
    );
    const res = await fake.client.direct.chargeCard({
      transaction_reference: 'ORD-2',
      amount: 10000,
      customer,
      card: { ...card, number: '5200000000001096' },
    });
    expect(res.data.auth_url).toBe('https://acs.example/3ds');
  });

  it('403 key empty or invalid', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', keyInvalid);
    const err = await rejectionOf(
      fake.client.direct.chargeCard({ transaction_reference: 'ORD-3', amount: 10000, customer, card }),
    );
    expect(err).toBeInstanceOf(PermissionDeniedError);
    expect(err).toMatchObject({
      status: 403,
      message: keyInvalid.body.message,
      operation: 'direct.chargeCard',
      retrySafe: false,
      outcomeUnknown: false,
    });
  });

  it('401 empty message', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', {
      status: 401,
      body: { success: false, message: '', data: {} },
    });
    const err = await rejectionOf(
      fake.client.direct.chargeCard({ transaction_reference: 'ORD-4', amount: 10000, customer, card }),
    );
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ serviceMessage: '' });
  });

  it('validates card fields: 2-digit expiry, currency, required reference', async () => {
    const err = await rejectionOf(
      fake.client.direct.chargeCard({
        amount: 10000,
        currency: 'EUR' as 'NGN',
        customer,
        card: { ...card, expiry_month: '9', expiry_year: '2029' },
      } as never),
    );
    expect((err as unknown as RequestValidationError).issues).toEqual(
      expect.arrayContaining([
        { path: 'transaction_reference', message: 'is required' },
        { path: 'currency', message: 'must be NGN or USD' },
        { path: 'card.expiry_month', message: expect.stringContaining('2-digit month') },
        { path: 'card.expiry_year', message: expect.stringContaining('2-digit year') },
      ]),
    );
    expect(fake.svc.requests).toHaveLength(0);
  });
});

describe('direct.authorizeCard (B2)', () => {
  it('PIN then OTP', async () => {
    fake.svc.on(
      'POST',
      '/transaction/payment/authorize',
      ok({ transaction_ref: 'ORD-1', transaction_status: 'ValidateOTP', amount: 10000 }),
    );
    let res = await fake.client.direct.authorizeCard({
      transaction_reference: 'ORD-1',
      authorization: { pin: '1234' },
    });
    expect(fake.svc.last()).toMatchObject({
      path: '/transaction/payment/authorize',
      body: { transaction_reference: 'ORD-1', authorization: { pin: '1234' } },
    });
    expect(res.data.transaction_status).toBe('ValidateOTP');
    fake.svc.on(
      'POST',
      '/transaction/payment/authorize',
      ok(
        { transaction_ref: 'ORD-1', transaction_status: 'Success', amount: 10000, message: 'Validate OTP Successful.' },
        'Validate OTP Successful.',
      ),
    );
    res = await fake.client.direct.authorizeCard({ transaction_reference: 'ORD-1', authorization: { otp: '123456' } });
    expect(res.data.transaction_status).toBe('Success');
    expect(res.message).toBe('Validate OTP Successful.');
  });

  it('needs exactly one of pin or otp', async () => {
    const err = await rejectionOf(
      fake.client.direct.authorizeCard({
        transaction_reference: 'ORD-1',
        authorization: { pin: '1234', otp: '123456' },
      }),
    );
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'authorization', message: 'must carry exactly one of pin or otp' },
    ]);
  });

  it('403 / 401 as for the card charge', async () => {
    fake.svc.on('POST', '/transaction/payment/authorize', keyInvalid);
    await expect(
      fake.client.direct.authorizeCard({ transaction_reference: 'ORD-1', authorization: { otp: '123456' } }),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
  });
});

describe('direct.chargeBank (B3)', () => {
  it('sends payment_method bank and parses ValidateTOKEN', async () => {
    fake.svc.on(
      'POST',
      '/transaction/initiate/process-payment',
      ok({
        amount: 20000,
        transaction_ref: 'BNK-1',
        transaction_type: 'Bank',
        auth_model: 'ValidateTOKEN',
        message: 'Charge attempted',
      }),
    );
    const res = await fake.client.direct.chargeBank({
      transaction_reference: 'BNK-1',
      amount: 20000,
      customer,
      bank: { bank_code: '058', account_or_phoneno: '0123456789' },
    });
    expect(fake.svc.last().body).toEqual({
      transaction_reference: 'BNK-1',
      amount: 20000,
      currency: 'NGN',
      customer,
      bank: { bank_code: '058', account_or_phoneno: '0123456789' },
      payment_method: 'bank',
    });
    expect(res.data.auth_model).toBe('ValidateTOKEN');
  });

  it('400 account_or_phoneno is required', async () => {
    fake.svc.on('POST', '/transaction/initiate/process-payment', refused(400, 'account_or_phoneno is required'));
    const err = await rejectionOf(
      fake.client.direct.chargeBank({
        transaction_reference: 'BNK-2',
        amount: 20000,
        customer,
        bank: { bank_code: '058', account_or_phoneno: '08012345678' },
      }),
    );
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ message: 'account_or_phoneno is required', moneyMoving: true, outcomeUnknown: false });
  });
});

describe('direct.validateBank (B4)', () => {
  it("sends authorization.otp_token and reads 'Charge attempted'", async () => {
    fake.svc.on(
      'POST',
      '/transaction/validate-payment',
      ok({ transaction_ref: 'BNK-1', auth_model: 'ValidateOTP', message: 'Charge attempted' }),
    );
    const res = await fake.client.direct.validateBank({
      transaction_reference: 'BNK-1',
      authorization: { otp_token: '123456' },
    });
    expect(fake.svc.last().body).toEqual({ transaction_reference: 'BNK-1', authorization: { otp_token: '123456' } });
    expect(res.data.message).toBe('Charge attempted');
  });
});

describe('direct.initiateUssd (B5)', () => {
  it('sends payment_method ussd and parses ussd_details', async () => {
    fake.svc.on(
      'POST',
      '/transaction/initiate/process-payment',
      ok({
        amount: 5000,
        transaction_ref: 'USSD-1',
        transaction_type: 'Ussd',
        auth_model: 'USSDCodeGenerated',
        message: 'USSD Payment Reference Generated',
        ussd_details: { ussd_reference: '*737*000*1234#', expiresAt: '2025-01-10T10:30:00Z' },
      }),
    );
    const res = await fake.client.direct.initiateUssd({
      transaction_reference: 'USSD-1',
      amount: 5000,
      customer,
      ussd: { bank_code: '058' },
    });
    expect(fake.svc.last().body).toMatchObject({ payment_method: 'ussd', ussd: { bank_code: '058' } });
    expect(res.data.ussd_details?.ussd_reference).toBe('*737*000*1234#');
  });

  it('refuses a bank code outside the USSD list', async () => {
    const err = await rejectionOf(
      fake.client.direct.initiateUssd({
        transaction_reference: 'USSD-2',
        amount: 5000,
        customer,
        ussd: { bank_code: '999' as '058' },
      }),
    );
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'ussd.bank_code', message: 'must be one of the USSD bank codes the spec lists' },
    ]);
  });
});
