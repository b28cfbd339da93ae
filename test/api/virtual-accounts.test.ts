// Virtual accounts (C1-C11) against a real HTTP server with the spec's bodies.
import {
  AuthenticationError,
  BadRequestError,
  DependencyFailedError,
  NotFoundError,
  PermissionDeniedError,
  RequestValidationError,
  ResponseValidationError,
} from '../../src/api';
import { ok, refused, rejectionOf, useFakeService } from './helpers/fake-service';

const fake = useFakeService();

const account = {
  first_name: 'Ada',
  last_name: 'Obi',
  bank_code: '058',
  virtual_account_number: '4000012345',
  beneficiary_account: null,
  customer_identifier: 'CUST-1',
  created_at: '2025-01-10T10:00:00.000Z',
  updated_at: '2025-01-10T10:00:00.000Z',
};
const customerBody = {
  customer_identifier: 'CUST-1',
  first_name: 'Ada',
  last_name: 'Obi',
  mobile_num: '08012345678',
  email: 'ada@example.com',
  bvn: '22222222222',
  dob: '01/31/1990',
  gender: '2' as const,
  address: '1 Marina, Lagos',
};
const vaTxn = {
  transaction_reference: 'REF-1',
  virtual_account_number: '4000012345',
  principal_amount: '5000.00',
  settled_amount: '4950.00',
  fee_charged: '50.00',
  transaction_date: '2025-01-10T10:00:00.000Z',
  transaction_indicator: 'C',
  remarks: 'Transfer from Ada',
  currency: 'NGN',
  frozen_transaction: null,
  customer: { customer_identifier: 'CUST-1' },
};

describe('createCustomer (C1)', () => {
  it('POSTs /virtual-account and parses the account', async () => {
    fake.svc.on('POST', '/virtual-account', ok(account));
    const res = await fake.client.virtualAccounts.createCustomer({
      ...customerBody,
      beneficiary_account: '0123456789',
    });
    expect(fake.svc.last().body).toEqual({ ...customerBody, beneficiary_account: '0123456789' });
    expect(res.data.virtual_account_number).toBe('4000012345');
  });

  it('400 / 401 / 403 bodies', async () => {
    fake.svc.on('POST', '/virtual-account', refused(400, 'Validation Failure, Customer identifier is required'));
    await expect(fake.client.virtualAccounts.createCustomer(customerBody)).rejects.toMatchObject({
      constructor: BadRequestError,
      message: 'Validation Failure, Customer identifier is required',
    });
    fake.svc.on('POST', '/virtual-account', { status: 401, body: { success: false, message: '', data: {} } });
    await expect(fake.client.virtualAccounts.createCustomer(customerBody)).rejects.toBeInstanceOf(AuthenticationError);
    fake.svc.on('POST', '/virtual-account', refused(403, 'Merchant authentication failed'));
    await expect(fake.client.virtualAccounts.createCustomer(customerBody)).rejects.toMatchObject({
      constructor: PermissionDeniedError,
      message: 'Merchant authentication failed',
    });
  });

  it('validates mobile_num, dob, gender, bvn, beneficiary_account', async () => {
    const err = await rejectionOf(
      fake.client.virtualAccounts.createCustomer({
        ...customerBody,
        mobile_num: '080123456789',
        dob: '1990-01-31',
        gender: 'F' as '1',
        bvn: '123',
        beneficiary_account: '12345',
      }),
    );
    expect((err as unknown as RequestValidationError).issues).toEqual(
      expect.arrayContaining([
        { path: 'mobile_num', message: 'must be at most 11 digits (digits only)' },
        { path: 'dob', message: 'must be a date mm/dd/yyyy' },
        { path: 'gender', message: "must be '1' (male) or '2' (female)" },
        { path: 'bvn', message: 'must be 11 digits' },
        { path: 'beneficiary_account', message: 'must be exactly 10 digits' },
      ]),
    );
    const bad = await rejectionOf(fake.client.virtualAccounts.createCustomer({ ...customerBody, dob: '02/30/1990' }));
    expect((bad as unknown as RequestValidationError).issues).toEqual([
      { path: 'dob', message: 'must be a date mm/dd/yyyy' },
    ]);
    expect(fake.svc.requests).toHaveLength(0);
  });
});

describe('createBusiness (C2)', () => {
  it('POSTs /virtual-account/business', async () => {
    fake.svc.on(
      'POST',
      '/virtual-account/business',
      ok({ ...account, first_name: undefined, last_name: undefined, business_name: 'Acme' }),
    );
    const res = await fake.client.virtualAccounts.createBusiness({
      bvn: '22222222222',
      business_name: 'Acme',
      customer_identifier: 'ACME01',
      mobile_num: '08012345678',
    });
    expect(fake.svc.last().body).toEqual({
      bvn: '22222222222',
      business_name: 'Acme',
      customer_identifier: 'ACME01',
      mobile_num: '08012345678',
    });
    expect(res.data.virtual_account_number).toBe('4000012345');
  });

  it("424 with status '424' as a string and null account fields", async () => {
    const body = {
      status: '424',
      success: false,
      message: 'Validation Failure No record found for Account number-0123456789',
      data: {
        first_name: null,
        last_name: null,
        bank_code: null,
        virtual_account_number: null,
        created_at: '0001-01-01T00:00:00',
        updated_at: '0001-01-01T00:00:00',
      },
    };
    fake.svc.on('POST', '/virtual-account/business', { status: 424, body });
    const err = await rejectionOf(
      fake.client.virtualAccounts.createBusiness({
        bvn: '22222222222',
        business_name: 'Acme',
        customer_identifier: 'ACME01',
        mobile_num: '0801',
        beneficiary_account: '0123456789',
      }),
    );
    expect(err).toBeInstanceOf(DependencyFailedError);
    expect(err).toMatchObject({
      status: 424,
      bodyStatus: 424,
      message: body.message,
      body,
      retrySafe: false,
      outcomeUnknown: false,
    });
  });

  it('refuses a non-alphanumeric customer_identifier', async () => {
    const err = await rejectionOf(
      fake.client.virtualAccounts.createBusiness({
        bvn: '22222222222',
        business_name: 'Acme',
        customer_identifier: 'ACME-01',
        mobile_num: '0801',
      }),
    );
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'customer_identifier', message: 'must be alphanumeric' },
    ]);
  });
});

describe('transactions (C3/C4)', () => {
  it('GETs by customer identifier; froze_transaction is normalised (C3)', async () => {
    const { frozen_transaction: _f, ...rest } = vaTxn;
    fake.svc.on('GET', '/virtual-account/customer/transactions/CUST-1', ok([{ ...rest, froze_transaction: null }]));
    const res = await fake.client.virtualAccounts.customerTransactions({ customer_identifier: 'CUST-1' });
    expect(res.data[0]).toMatchObject({ frozen_transaction: null, principal_amount: '5000.00' });
    expect(res.data[0]).not.toHaveProperty('froze_transaction');
  });

  it('GETs merchant transactions without parameters; a frozen transaction is an object (C4)', async () => {
    fake.svc.on(
      'GET',
      '/virtual-account/merchant/transactions',
      ok([{ ...vaTxn, frozen_transaction: { freeze_transaction_ref: 'FRZ-1', reason: 'suspicious' } }]),
    );
    const res = await fake.client.virtualAccounts.merchantTransactions();
    expect(fake.svc.last().query).toEqual({});
    expect(res.data[0].frozen_transaction).toEqual({ freeze_transaction_ref: 'FRZ-1', reason: 'suspicious' });
  });

  it('refuses a numeric (float) amount where a decimal string is required', async () => {
    fake.svc.on('GET', '/virtual-account/merchant/transactions', ok([{ ...vaTxn, principal_amount: 5000.5 }]));
    const err = await rejectionOf(fake.client.virtualAccounts.merchantTransactions());
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect((err as unknown as ResponseValidationError).issues[0].path).toBe('data.0.principal_amount');
  });
});

describe('merchantTransactionsFiltered (C5)', () => {
  it('sends the filters as query and parses {count, rows, query}', async () => {
    fake.svc.on(
      'GET',
      '/virtual-account/merchant/transactions/all',
      ok({
        count: 1,
        rows: [{ ...vaTxn, alerted_merchant: true, merchant_settlement_date: '2025-01-11T00:00:00Z' }],
        query: {},
      }),
    );
    const res = await fake.client.virtualAccounts.merchantTransactionsFiltered({
      page: 1,
      perPage: 50,
      virtualAccount: '4000012345',
      startDate: '01-01-2025',
      endDate: '01-31-2025',
      dir: 'DESC',
    });
    expect(fake.svc.last().query).toEqual({
      page: '1',
      perPage: '50',
      virtualAccount: '4000012345',
      startDate: '01-01-2025',
      endDate: '01-31-2025',
      dir: 'DESC',
    });
    expect(res.data.rows[0].alerted_merchant).toBe(true);
  });

  it('400 `virtualAccount` is not allowed to be empty; local date format checked', async () => {
    fake.svc.on(
      'GET',
      '/virtual-account/merchant/transactions/all',
      refused(400, '"virtualAccount" is not allowed to be empty'),
    );
    await expect(fake.client.virtualAccounts.merchantTransactionsFiltered({})).rejects.toBeInstanceOf(BadRequestError);
    const err = await rejectionOf(
      fake.client.virtualAccounts.merchantTransactionsFiltered({ startDate: '2025-01-01' }),
    );
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'startDate', message: 'must be a date MM-DD-YYYY' },
    ]);
  });
});

describe('lookups (C6/C7/C8)', () => {
  it('customer by account number; 404 Virtual account not found (C6)', async () => {
    fake.svc.on(
      'GET',
      '/virtual-account/customer/4000012345',
      ok({
        first_name: 'Ada',
        last_name: 'Obi',
        mobile_num: '08012345678',
        email: 'ada@example.com',
        customer_identifier: 'CUST-1',
        virtual_account_number: '4000012345',
      }),
    );
    const res = await fake.client.virtualAccounts.customerByAccountNumber({ virtual_account_number: '4000012345' });
    expect(res.data.customer_identifier).toBe('CUST-1');
    fake.svc.on('GET', '/virtual-account/customer/4000099999', refused(404, 'Virtual account not found'));
    const err = await rejectionOf(
      fake.client.virtualAccounts.customerByAccountNumber({ virtual_account_number: '4000099999' }),
    );
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({
      message: 'Virtual account not found',
      operation: 'virtualAccounts.customerByAccountNumber',
      retrySafe: false,
    });
    await expect(
      fake.client.virtualAccounts.customerByAccountNumber({ virtual_account_number: '123' }),
    ).rejects.toBeInstanceOf(RequestValidationError);
  });

  it('account by customer identifier (C7)', async () => {
    fake.svc.on('GET', '/virtual-account/CUST-1', ok(account));
    const res = await fake.client.virtualAccounts.accountByCustomerIdentifier({ customer_identifier: 'CUST-1' });
    expect(res.data.customer_identifier).toBe('CUST-1');
  });

  it('merchant accounts with page/perPage/startDate/EndDate (C8)', async () => {
    fake.svc.on(
      'GET',
      '/virtual-account/merchant/accounts',
      ok([
        {
          bank_code: '058',
          virtual_account_number: '4000012345',
          beneficiary_account: null,
          created_at: 'x',
          updated_at: 'y',
          customer: { first_name: 'Ada', last_name: 'Obi', customer_identifier: 'CUST-1' },
        },
      ]),
    );
    const res = await fake.client.virtualAccounts.merchantAccounts({
      page: '1',
      perPage: '10',
      startDate: '25-01-01',
      EndDate: '2025-01-31',
    });
    expect(fake.svc.last().query).toEqual({ page: '1', perPage: '10', startDate: '25-01-01', EndDate: '2025-01-31' });
    expect(res.data[0].customer?.customer_identifier).toBe('CUST-1');
  });
});

describe('simulatePayment (C9)', () => {
  it('sends virtual_account_number and a decimal-string amount, no dva flag', async () => {
    fake.svc.on('POST', '/virtual-account/simulate/payment', {
      status: 200,
      body: { success: true, message: 'Success', data: {} },
    });
    const res = await fake.client.virtualAccounts.simulatePayment({
      virtual_account_number: '4000012345',
      amount: '5000.00',
    });
    expect(fake.svc.last().body).toEqual({ virtual_account_number: '4000012345', amount: '5000.00' });
    expect(res).toMatchObject({ data: {}, success: true, bodyStatus: undefined });
  });

  it('refuses a fractional JS number as a decimal amount', async () => {
    const err = await rejectionOf(
      fake.client.virtualAccounts.simulatePayment({ virtual_account_number: '4000012345', amount: 50.5 }),
    );
    expect((err as unknown as RequestValidationError).issues[0].path).toBe('amount');
  });
});

describe('webhook error log (C10/C11)', () => {
  it('lists the log rows (C10)', async () => {
    fake.svc.on(
      'GET',
      '/virtual-account/webhook/logs',
      ok({
        count: 1,
        rows: [
          {
            id: '6f1c5d7e-1111-4a2b-9c3d-0123456789ab',
            transaction_ref: 'REF-1',
            payload: {
              hash: 'abc',
              meta: {},
              channel: 'virtual-account',
              remarks: 'x',
              currency: 'NGN',
              fee_charged: '50.00',
              sender_name: 'Ada',
              encrypted_body: 'e',
              settled_amount: '4950.00',
              principal_amount: '5000.00',
              transaction_date: 't',
              customer_identifier: 'CUST-1',
              transaction_indicator: 'C',
              transaction_reference: 'REF-1',
              virtual_account_number: '4000012345',
            },
          },
        ],
      }),
    );
    const res = await fake.client.virtualAccounts.webhookErrorLog({ page: 1, perPage: 100 });
    expect(fake.svc.last().query).toEqual({ page: '1', perPage: '100' });
    expect(res.data.rows[0].payload.principal_amount).toBe('5000.00');
  });

  it('deletes by transaction_ref and reads the integer 1; 401 (C11)', async () => {
    fake.svc.on('DELETE', '/virtual-account/webhook/logs/REF-1', ok(1));
    const res = await fake.client.virtualAccounts.deleteWebhookErrorLog({ transaction_ref: 'REF-1' });
    expect(fake.svc.last().method).toBe('DELETE');
    expect(res.data).toBe(1);
    fake.svc.on('DELETE', '/virtual-account/webhook/logs/REF-1', {
      status: 401,
      body: { success: false, message: '', data: {} },
    });
    await expect(
      fake.client.virtualAccounts.deleteWebhookErrorLog({ transaction_ref: 'REF-1' }),
    ).rejects.toBeInstanceOf(AuthenticationError);
  });
});
