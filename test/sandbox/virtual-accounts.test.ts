// Virtual accounts over plain HTTP: creation rules (C1/C2; the B2B 424 too), queries
// (C3-C8), the simulated credit (C9) and its ledger entry. The notification itself: webhooks.test.ts.
import { PARTNER_BANK_ACCOUNTS, MISMATCHED_BVN } from '../../src/sandbox';
import { useSandbox, uid, type Json } from './helpers';
import { vaCustomer } from '../support/flow-inputs';

const env = useSandbox();

const person = (over: Record<string, unknown> = {}) => vaCustomer(uid('CUST'), { email: 'ada@example.com', ...over });
const business = (over: Record<string, unknown> = {}) => ({
  bvn: '22212345678',
  business_name: 'Acme Ltd',
  customer_identifier: uid('BIZ'),
  mobile_num: '08012345678',
  ...over,
});
const create = (body: Record<string, unknown>) => env.api.post('/virtual-account', body);

describe('customer account (C1)', () => {
  it('creates a 10-digit virtual account tied to the customer_identifier', async () => {
    const body = person({ beneficiary_account: '0123456789' });
    const r = await create(body);
    expect(r).toMatchObject({ status: 200, body: { success: true } });
    expect(r.body!.data).toEqual({
      first_name: 'Ada',
      last_name: 'Obi',
      bank_code: '058',
      virtual_account_number: expect.stringMatching(/^4\d{9}$/),
      beneficiary_account: '0123456789',
      customer_identifier: body.customer_identifier,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it.each([
    [{ customer_identifier: undefined }, 'Validation Failure, Customer identifier is required'],
    [{ first_name: undefined }, 'first_name is required'],
    [{ last_name: '' }, 'last_name is not allowed to be empty'],
    [{ mobile_num: '080123456789' }, 'mobile_num must be at most 11 digits'],
    [{ dob: '1990-01-31' }, 'dob must be in the format mm/dd/yyyy'],
    [{ gender: 'F' }, "gender must be '1' (male) or '2' (female)"],
    [{ bvn: '123' }, 'bvn must be 11 digits'],
    [{ bvn: MISMATCHED_BVN }, 'Validation Failure, BVN details do not match the customer details'],
    [{ beneficiary_account: '12345' }, 'beneficiary_account must be 10 digits'],
  ])('refuses %j: %s', async (over, message) => {
    expect(await create(person(over))).toMatchObject({ status: 400, body: { success: false, message } });
  });

  it('refuses a customer_identifier already used (no second account)', async () => {
    const body = person();
    await create(body);
    expect(await create(person({ customer_identifier: body.customer_identifier }))).toMatchObject({
      status: 400,
      body: { message: 'Validation Failure, Customer identifier already exists' },
    });
  });
});

describe('business account (C2)', () => {
  it(`beneficiary accounts at the partner bank (${PARTNER_BANK_ACCOUNTS.join(', ')}) are accepted; others get the 424`, async () => {
    const ok = await env.api.post(
      '/virtual-account/business',
      business({ beneficiary_account: PARTNER_BANK_ACCOUNTS[1] }),
    );
    expect(ok.body!.data).toMatchObject({ first_name: 'Acme Ltd', beneficiary_account: PARTNER_BANK_ACCOUNTS[1] });
    const missing = await env.api.post('/virtual-account/business', business({ beneficiary_account: '5555555555' }));
    expect(missing.status).toBe(424);
    expect(missing.body).toEqual({
      status: '424',
      success: false,
      message: 'Validation Failure No record found for Account number-5555555555',
      data: {
        first_name: null,
        last_name: null,
        bank_code: null,
        virtual_account_number: null,
        beneficiary_account: null,
        customer_identifier: null,
        created_at: '0001-01-01T00:00:00.000Z',
        updated_at: '0001-01-01T00:00:00.000Z',
      },
    });
    expect(
      (await env.api.post('/virtual-account/business', business({ beneficiary_account: undefined }))).body!.data
        .beneficiary_account,
    ).toBeNull();
  });

  it('needs its four fields and an alphanumeric customer_identifier', async () => {
    expect(
      (await env.api.post('/virtual-account/business', business({ business_name: undefined }))).body!.message,
    ).toBe('business_name is required');
    expect(
      (await env.api.post('/virtual-account/business', business({ customer_identifier: 'biz-1' }))).body!.message,
    ).toBe('customer_identifier must be alphanumeric');
  });
});

describe('queries and the simulated credit (C3-C9)', () => {
  it('credits an account (ledger va_credit) and finds the transaction every way', async () => {
    const body = person();
    const account = (await create(body)).body!.data.virtual_account_number as string;
    expect(
      await env.api.post('/virtual-account/simulate/payment', { virtual_account_number: account, amount: '2500.50' }),
    ).toMatchObject({ status: 200, body: { success: true, data: {} } });
    await env.api.post('/virtual-account/simulate/payment', { virtual_account_number: account }); // default amount
    const mine = (await env.api.get(`/virtual-account/customer/transactions/${body.customer_identifier}`)).body!
      .data as Json[];
    expect(mine).toHaveLength(2);
    expect(mine[1]).toEqual({
      transaction_reference: expect.stringMatching(/^REF\d+$/),
      virtual_account_number: account,
      principal_amount: '2500.50',
      settled_amount: '2488.00',
      fee_charged: '12.50',
      transaction_date: expect.any(String),
      transaction_indicator: 'C',
      remarks: expect.any(String),
      currency: 'NGN',
      frozen_transaction: null,
      customer: { customer_identifier: body.customer_identifier },
    });
    expect(mine[0]).toMatchObject({ principal_amount: '1000.00' });
    expect(env.sb.ledger({ reference: mine[1].transaction_reference as string })).toEqual([
      expect.objectContaining({ kind: 'va_credit', amount: '2500.50', currency: 'NGN' }),
    ]);
    expect(
      ((await env.api.get('/virtual-account/merchant/transactions')).body!.data as Json[]).map(
        (t) => t.transaction_reference,
      ),
    ).toEqual(expect.arrayContaining(mine.map((t) => t.transaction_reference)));

    const filtered = await env.api.get(
      `/virtual-account/merchant/transactions/all?virtualAccount=${account}&dir=ASC&page=1&perPage=1`,
    );
    expect(filtered.body!.data).toMatchObject({
      count: 2,
      rows: [
        {
          transaction_reference: mine[1].transaction_reference,
          alerted_merchant: true,
          merchant_settlement_date: expect.any(String),
        },
      ],
      query: {},
    });
    const byRef = await env.api.get(
      `/virtual-account/merchant/transactions/all?transactionReference=${mine[0].transaction_reference}`,
    );
    expect(byRef.body!.data.count).toBe(1);
    const today = new Date(Date.parse((await env.api.admin.get('/clock')).body!.data.now as string));
    const mdy = `${String(today.getUTCMonth() + 1).padStart(2, '0')}-${String(today.getUTCDate()).padStart(2, '0')}-${today.getUTCFullYear()}`;
    expect(
      (
        await env.api.get(
          `/virtual-account/merchant/transactions/all?customerIdentifier=${body.customer_identifier}&startDate=${mdy}&endDate=${mdy}`,
        )
      ).body!.data.count,
    ).toBe(2);
    expect(
      (
        await env.api.get(
          `/virtual-account/merchant/transactions/all?customerIdentifier=${body.customer_identifier}&startDate=01-01-2001&endDate=01-02-2001`,
        )
      ).body!.data.count,
    ).toBe(0);
  });

  it('refuses empty or malformed filters (C5)', async () => {
    expect(await env.api.get('/virtual-account/merchant/transactions/all?virtualAccount=')).toMatchObject({
      status: 400,
      body: { message: '"virtualAccount" is not allowed to be empty' },
    });
    expect((await env.api.get('/virtual-account/merchant/transactions/all?startDate=2026-01-01')).status).toBe(400);
    expect((await env.api.get('/virtual-account/merchant/transactions/all?dir=UP')).status).toBe(400);
  });

  it('customer by account number (C6), account by identifier (C7), merchant accounts (C8); unknown → 404', async () => {
    const body = person();
    const acct = (await create(body)).body!.data as Json;
    expect((await env.api.get(`/virtual-account/customer/${acct.virtual_account_number}`)).body!.data).toEqual({
      first_name: 'Ada',
      last_name: 'Obi',
      mobile_num: '08012345678',
      email: 'ada@example.com',
      customer_identifier: body.customer_identifier,
      virtual_account_number: acct.virtual_account_number,
    });
    expect(await env.api.get('/virtual-account/customer/0000000000')).toMatchObject({
      status: 404,
      body: { message: 'Virtual account not found' },
    });
    expect((await env.api.get(`/virtual-account/${body.customer_identifier}`)).body!.data).toEqual(acct);
    expect(await env.api.get('/virtual-account/NOSUCHCUSTOMER')).toMatchObject({
      status: 404,
      body: { message: 'Virtual account not found' },
    });
    const list = (await env.api.get('/virtual-account/merchant/accounts?page=1&perPage=500')).body!.data as Json[];
    expect(list.find((a) => a.virtual_account_number === acct.virtual_account_number)).toEqual({
      bank_code: '058',
      virtual_account_number: acct.virtual_account_number,
      beneficiary_account: null,
      created_at: acct.created_at,
      updated_at: acct.updated_at,
      customer: { first_name: 'Ada', last_name: 'Obi', customer_identifier: body.customer_identifier },
    });
    expect(
      (await env.api.get('/virtual-account/merchant/accounts?startDate=01-01-01&EndDate=01-01-02')).body!.data,
    ).toEqual([]);
  });

  it('refuses an unknown account and a bad amount (C9)', async () => {
    expect(
      await env.api.post('/virtual-account/simulate/payment', { virtual_account_number: '4000000000' }),
    ).toMatchObject({ status: 404, body: { message: 'Virtual account not found' } });
    expect((await env.api.post('/virtual-account/simulate/payment', {})).body!.message).toBe(
      'virtual_account_number is required',
    );
    const account = (await create(person())).body!.data.virtual_account_number as string;
    expect(
      (await env.api.post('/virtual-account/simulate/payment', { virtual_account_number: account, amount: '-5' }))
        .status,
    ).toBe(400);
  });
});
