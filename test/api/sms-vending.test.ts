// SMS (G1-G8) and electricity vending (H1-H4) against a real HTTP server.
// Errors for these endpoints are 'not shown' in the spec; docs/choices.md fixes the common
// envelope with 400 '<field> is required', 401 empty message, 403 invalid key.
import {
  AuthenticationError,
  BadRequestError,
  PermissionDeniedError,
  RequestValidationError,
  ResponseValidationError,
  TimeoutError,
} from '../../src/api';
import { ok, refused, rejectionOf, useFakeService } from './helpers/fake-service';

const fake = useFakeService();

const UUID = '3f2b8c1a-5d6e-4f70-8a9b-0c1d2e3f4a5b';
const template = {
  uuid: UUID,
  merchant_id: 'SBN1',
  name: 'Reminder',
  description: 'Payment reminder',
  pages: 1,
  message: 'Hello {name}',
  createdAt: 't',
  updatedAt: 't',
};
const campaign = {
  uuid: UUID,
  name: 'January',
  cost: '12.50',
  scheduled_for: '2025-02-01 09:00',
  status: 'pending',
  merchant_id: 'SBN1',
  createdAt: 't',
  updatedAt: 't',
  bucket_id: UUID,
  sender_id: 'SHOP',
  template_id: UUID,
};

describe('G. SMS', () => {
  it('instant send: nested data.data send result (G1)', async () => {
    fake.svc.on(
      'POST',
      '/sms/send/instant',
      ok({
        success: true,
        message: 'Messages sent',
        data: {
          batch_id: 'B1',
          sent: [{ phone_number: '2348012345678', status: 'SENT', cost: 4, transaction_id: 'T1' }],
          errors: [],
          total_cost: 4,
          currency: 'NGN',
        },
      }),
    );
    const res = await fake.client.sms.send({
      sender_id: 'SHOP',
      messages: [{ phone_number: '2348012345678', message: 'Your order shipped' }],
    });
    expect(fake.svc.last().body).toEqual({
      sender_id: 'SHOP',
      messages: [{ phone_number: '2348012345678', message: 'Your order shipped' }],
    });
    expect(res.data.data.sent[0].status).toBe('SENT');
    expect(res.data.data.total_cost).toBe(4);
  });

  it('validation and the 400/401/403 bodies (G1)', async () => {
    const err = await rejectionOf(fake.client.sms.send({ sender_id: 'SHOP', messages: [] }));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'messages', message: 'must contain at least one message' },
    ]);
    fake.svc.on('POST', '/sms/send/instant', refused(400, 'sender_id is required'));
    await expect(
      fake.client.sms.send({ sender_id: 'X', messages: [{ phone_number: '08012345678', message: 'hi' }] }),
    ).rejects.toMatchObject({ constructor: BadRequestError, message: 'sender_id is required' });
    fake.svc.on('POST', '/sms/send/instant', refused(401, ''));
    await expect(
      fake.client.sms.send({ sender_id: 'X', messages: [{ phone_number: '08012345678', message: 'hi' }] }),
    ).rejects.toBeInstanceOf(AuthenticationError);
    fake.svc.on('POST', '/sms/send/instant', refused(403, 'Invalid secret key'));
    await expect(
      fake.client.sms.send({ sender_id: 'X', messages: [{ phone_number: '08012345678', message: 'hi' }] }),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it("create campaign (G2): the spec's key sscheduled_dor is sent as written", async () => {
    fake.svc.on('POST', '/sms/campaign', ok(campaign));
    const body = {
      name: 'January',
      bucket_id: UUID,
      sender_id: 'SHOP',
      is_scheduled: true,
      sscheduled_dor: '2025-02-01 09:00',
      template_id: UUID,
    };
    const res = await fake.client.sms.createCampaign(body);
    expect(fake.svc.last().body).toEqual(body);
    expect(res.data.status).toBe('pending');
    const err = await rejectionOf(fake.client.sms.createCampaign({ ...body, bucket_id: 'not-a-uuid' }));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'bucket_id', message: 'must be a uuid' },
    ]);
  });

  it("list campaigns (G3): envelope status 'SUCCESS' (a non-numeric string)", async () => {
    fake.svc.on('GET', '/sms/campaign', {
      status: 200,
      body: {
        status: 'SUCCESS',
        message: 'Campaigns',
        data: {
          items: [
            {
              id: UUID,
              name: 'January',
              client_id: 'SBN1',
              template_id: UUID,
              bucket_id: UUID,
              total: 10,
              created_at: 't',
              created_by: 'u',
            },
          ],
          total: 1,
        },
      },
    });
    const res = await fake.client.sms.listCampaigns({
      page: 1,
      perPage: 20,
      status: 'pending',
      dir: 'DSC',
      date_from: '2025-01-01',
      date_to: '2025-01-31',
    });
    expect(fake.svc.last().query).toEqual({
      page: '1',
      perPage: '20',
      status: 'pending',
      dir: 'DSC',
      date_from: '2025-01-01',
      date_to: '2025-01-31',
    });
    expect(res).toMatchObject({ bodyStatus: 'SUCCESS', success: true, data: { total: 1 } });
  });

  it('delete campaign: POST /sms/campaign/{id}, body not shown (G4)', async () => {
    fake.svc.on('POST', `/sms/campaign/${UUID}`, { status: 200, body: { message: 'success' } });
    const res = await fake.client.sms.deleteCampaign({ id: UUID });
    expect(fake.svc.last()).toMatchObject({ method: 'POST', path: `/sms/campaign/${UUID}` });
    expect(res).toMatchObject({ data: null, message: 'success', success: true });
  });

  it('templates: create, list, update, delete (G5-G8)', async () => {
    fake.svc.on('POST', '/sms/template', ok(template));
    expect(
      (
        await fake.client.sms.createTemplate({
          name: 'Reminder',
          description: 'Payment reminder',
          message: 'Hello {name}',
        })
      ).data.uuid,
    ).toBe(UUID);
    expect(fake.svc.last().body).toEqual({
      name: 'Reminder',
      description: 'Payment reminder',
      message: 'Hello {name}',
    });

    fake.svc.on('GET', '/sms/template', ok({ count: 1, rows: [template] }));
    expect((await fake.client.sms.listTemplates({ page: 1, perPage: 10, dir: 'ASC' })).data.rows[0].name).toBe(
      'Reminder',
    );
    expect(fake.svc.last().query).toEqual({ page: '1', perPage: '10', dir: 'ASC' });

    fake.svc.on('PATCH', `/sms/template/${UUID}`, ok({ ...template, name: 'Reminder 2' }));
    expect((await fake.client.sms.updateTemplate({ id: UUID, name: 'Reminder 2', file_name: 'r.txt' })).data.name).toBe(
      'Reminder 2',
    );
    expect(fake.svc.last().body).toEqual({ name: 'Reminder 2', file_name: 'r.txt' });
    const err = await rejectionOf(fake.client.sms.updateTemplate({ id: UUID }));
    expect((err as unknown as RequestValidationError).issues[0].message).toMatch(/at least one of/);

    fake.svc.on('POST', `/sms/template/${UUID}`, { status: 200, body: { message: 'success' } });
    const del = await fake.client.sms.deleteTemplate({ id: UUID });
    expect(del).toMatchObject({ data: null, message: 'success' });
  });
});

const vend = {
  reference: 'VND-123',
  amount: '1000.00',
  merchant_amount: '990.00',
  phone_number: '08012345678',
  email: 'ada@example.com',
  merchant_id: 'SBN1',
  wallet_batch_id: 'W1',
  value_reference: '1234-5678-9012-3456-7890',
  network: null,
  transaction_id: null,
  type: 'electricity',
  action: 'debit',
  status: 'success',
  meta: '{"token":"1234-5678-9012-3456-7890"}',
  meta_json: { token: '1234-5678-9012-3456-7890', total_units: '12.5', provider_meta: { code: 'EKEDC' } },
  createdAt: 't',
  updatedAt: 't',
};

/** A purchase of 1000 (a whole number, sent as a number). */
const purchase = { reference: 'VND-123', amount: 1000, phone_number: '08012345678', email: 'ada@example.com' };

describe('H. Electricity vending', () => {
  it('providers (H1)', async () => {
    fake.svc.on(
      'GET',
      '/vending/utilities/electricity/service-providers',
      ok([
        { code: 'EKEDC', name: 'Eko', logo_url: null },
        { code: 'JED', name: 'Jos', logo_url: 'https://x/j.png' },
      ]),
    );
    const res = await fake.client.vending.providers();
    expect(res.data.map((p) => p.code)).toEqual(['EKEDC', 'JED']);
  });

  it('lookup: meter_no sent as a string (H2)', async () => {
    fake.svc.on(
      'POST',
      '/vending/utilities/electricity/lookup',
      ok({
        reference: 'VND-123',
        customer_name: 'ADA OBI',
        minimum_vend: 500,
        account_type: 'NMD',
        outstanding_debt: '0.00',
        address: '1 Marina',
        meter_type: 'prepaid',
        provider: 'EKEDC',
      }),
    );
    const res = await fake.client.vending.lookup({ meter_no: 45012345678, meter_type: 'prepaid', provider: 'EKEDC' });
    expect(fake.svc.last().body).toEqual({ meter_no: '45012345678', meter_type: 'prepaid', provider: 'EKEDC' });
    expect(res.data).toMatchObject({ reference: 'VND-123', minimum_vend: 500 });
  });

  it('purchase: integer amount sent as a number; fractions refused; decimal strings in the result (H3)', async () => {
    fake.svc.on('POST', '/vending/utilities/electricity', ok(vend));
    const res = await fake.client.vending.purchase(purchase);
    expect(fake.svc.last().body).toEqual(purchase);
    expect(res.data).toMatchObject({
      amount: '1000.00',
      value_reference: '1234-5678-9012-3456-7890',
      status: 'success',
    });
    const err = await rejectionOf(fake.client.vending.purchase({ ...purchase, amount: 999.99 }));
    expect((err as unknown as RequestValidationError).issues).toEqual([
      { path: 'amount', message: expect.stringContaining('never rounded') },
    ]);
  });

  it('purchase: a numeric amount in the result is refused (strict decimal string), outcome unknown (H3)', async () => {
    fake.svc.on('POST', '/vending/utilities/electricity', ok({ ...vend, amount: 1000.5 }));
    const err = await rejectionOf(fake.client.vending.purchase({ ...purchase, reference: 'VND-124' }));
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(err).toMatchObject({ outcomeUnknown: true, moneyMoving: true, operation: 'vending.purchase' });
  });

  it('purchase: a timeout is outcomeUnknown (H3)', async () => {
    fake.svc.on('POST', '/vending/utilities/electricity', 'hang');
    const err = await rejectionOf(
      fake.client.vending.purchase({ ...purchase, reference: 'VND-125' }, { timeoutMs: 200 }),
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ outcomeUnknown: true });
  });

  it('transactions: an array without reference, one object with reference (H4)', async () => {
    fake.svc.on('GET', '/vending/transactions', ok([vend]));
    const all = await fake.client.vending.transactions({ page: 1, perPage: 10 });
    expect(Array.isArray(all.data)).toBe(true);
    fake.svc.on('GET', '/vending/transactions', ok(vend));
    const one = await fake.client.vending.transactions({ reference: 'VND-123' });
    expect(fake.svc.last().query).toEqual({ reference: 'VND-123' });
    expect(Array.isArray(one.data)).toBe(false);
    expect(one.data).toMatchObject({ reference: 'VND-123' });
  });
});
