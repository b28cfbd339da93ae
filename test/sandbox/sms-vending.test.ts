// G. SMS and H. electricity vending over plain HTTP.
import {
  PROVIDERS,
  SMS_FAILING_NUMBER,
  SMS_FAILING_BUCKET_ID,
  SMS_MAX_MESSAGES_PER_REQUEST,
  CAMPAIGN_SEND_DELAY_MS,
  TEST_METERS,
} from '../../src/sandbox';
import { SmsIdRequestSchema } from '../../src/api/schemas/sms';
import { useSandbox, uid, type Json } from './helpers';

const env = useSandbox();

describe('SMS (G1-G8)', () => {
  const BUCKET = '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d10';
  const template = async (name = uid('T')) =>
    (await env.api.post('/sms/template', { name, description: 'greeting', message: 'Hello {name}' })).body!
      .data as Json;

  it('sends: the result sits in data.data, costs per 160-character page, failures in errors (G1)', async () => {
    const r = await env.api.post('/sms/send/instant', {
      sender_id: 'SANDBOX',
      messages: [
        { phone_number: '2348012345678', message: 'hi' },
        { phone_number: '2348012345679', message: 'x'.repeat(161) },
        { phone_number: SMS_FAILING_NUMBER, message: 'lost' },
      ],
    });
    expect(r).toMatchObject({
      status: 200,
      body: { status: 200, success: true, data: { success: true, message: expect.any(String) } },
    });
    expect(r.body!.data.data).toEqual({
      batch_id: expect.stringMatching(/^BATCH\d{10}$/),
      sent: [
        { phone_number: '2348012345678', status: 'SENT', cost: 4, transaction_id: expect.any(String) },
        { phone_number: '2348012345679', status: 'SENT', cost: 8, transaction_id: expect.any(String) },
      ],
      errors: [{ phone_number: SMS_FAILING_NUMBER, error: expect.any(String) }],
      total_cost: 12,
      currency: 'NGN',
    });
    expect(await env.api.post('/sms/send/instant', { messages: [] })).toMatchObject({
      status: 400,
      body: { success: false, message: 'sender_id is required', data: null },
    });
    expect((await env.api.post('/sms/send/instant', { sender_id: 'S' })).body!.message).toBe('messages is required');
  });

  it('templates (G5-G8): create, list {count, rows}, update, delete → {message: "success"}', async () => {
    const t = await template('Welcome');
    expect(t).toEqual({
      uuid: expect.any(String),
      merchant_id: 'SBXMERCHANT',
      name: 'Welcome',
      description: 'greeting',
      pages: 1,
      message: 'Hello {name}',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const list = (await env.api.get('/sms/template?page=1&perPage=100&dir=ASC')).body!.data as Json;
    expect(list.count).toBeGreaterThanOrEqual(1);
    expect(list.rows).toContainEqual(expect.objectContaining({ uuid: t.uuid }));
    const updated = await env.api.call('PATCH', `/sms/template/${t.uuid}`, {
      name: 'Hi',
      description: 'd2',
      file_name: 'hi.txt',
    });
    expect(updated.body!.data).toMatchObject({ uuid: t.uuid, name: 'Hi', description: 'd2' });
    expect(await env.api.post(`/sms/template/${t.uuid}`)).toMatchObject({ status: 200, body: { message: 'success' } });
    expect(await env.api.post(`/sms/template/${t.uuid}`)).toMatchObject({
      status: 404,
      body: { message: 'Template not found' },
    });
    expect((await env.api.post('/sms/template', { name: 'x', description: 'y' })).body!.message).toBe(
      'message is required',
    );
  });

  it("campaigns (G2-G4): created pending with the spec's sscheduled_dor field, listed ({status: 'SUCCESS', data: {items, total}}), sent on the clock, deleted", async () => {
    const t = await template();
    const campaign = (over: Record<string, unknown> = {}) =>
      env.api.post('/sms/campaign', {
        name: uid('Nov'),
        bucket_id: BUCKET,
        sender_id: 'SANDBOX',
        is_scheduled: false,
        sscheduled_dor: 'now',
        template_id: t.uuid,
        ...over,
      });
    expect((await campaign({ sscheduled_dor: undefined })).body!.message).toBe('sscheduled_dor is required');
    expect((await campaign({ template_id: 'no-such' })).body!.message).toBe('template_id does not name a template');
    expect((await campaign({ bucket_id: 'not-a-uuid', sscheduled_dor: 'x' })).body!.message).toBe(
      'bucket_id must be a valid uuid',
    );
    const now = Date.parse((await env.api.admin.get('/clock')).body!.data.now as string);
    const scheduled = (await campaign({ is_scheduled: true, sscheduled_dor: new Date(now + 3600_000).toISOString() }))
      .body!.data as Json;
    const instant = (await campaign({ sscheduled_dor: 'n/a' })).body!.data as Json;
    expect(instant).toMatchObject({
      uuid: expect.any(String),
      status: 'pending',
      cost: '0.00',
      merchant_id: 'SBXMERCHANT',
      bucket_id: BUCKET,
      sender_id: 'SANDBOX',
      template_id: t.uuid,
      scheduled_for: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const listed = await env.api.get(`/sms/campaign?status=pending&name=${encodeURIComponent(instant.name as string)}`);
    expect(listed.body).toEqual({
      status: 'SUCCESS',
      message: expect.any(String),
      data: {
        items: [
          expect.objectContaining({
            id: instant.uuid,
            name: instant.name,
            client_id: 'SBXMERCHANT',
            template_id: t.uuid,
            bucket_id: BUCKET,
            total: 0,
            created_at: expect.any(String),
            created_by: 'SBXMERCHANT',
          }),
        ],
        total: 1,
      },
    });
    await env.api.admin.advance(CAMPAIGN_SEND_DELAY_MS);
    // Listing items carry the spec's fields only: the status is the filter that lists the campaign.
    const statusOf = async (c: Json) => {
      const listedAs: string[] = [];
      for (const status of ['pending', 'failed', 'success']) {
        const items = (await env.api.get(`/sms/campaign?status=${status}&name=${encodeURIComponent(c.name as string)}`))
          .body!.data.items as Json[];
        expect(items.every((i) => i.status === undefined)).toBe(true);
        if (items.some((i) => i.id === c.uuid)) listedAs.push(status);
      }
      return listedAs.join(',');
    };
    expect(await statusOf(instant)).toBe('success');
    expect(await statusOf(scheduled)).toBe('pending');
    await env.api.admin.advance(3600_000);
    expect(await statusOf(scheduled)).toBe('success');
    expect((await env.api.post(`/sms/campaign/${instant.uuid}`)).status).toBe(200);
    expect(
      (await env.api.get(`/sms/campaign?name=${encodeURIComponent(instant.name as string)}`)).body!.data.total,
    ).toBe(0);
    expect((await env.api.post(`/sms/campaign/${instant.uuid}`)).status).toBe(404);
  });

  it('a campaign over the failing test bucket ends failed at its send time (G2/G3)', async () => {
    const t = await template();
    const c = (
      await env.api.post('/sms/campaign', {
        name: uid('Fail'),
        bucket_id: SMS_FAILING_BUCKET_ID,
        sender_id: 'SANDBOX',
        is_scheduled: false,
        sscheduled_dor: 'now',
        template_id: t.uuid,
      })
    ).body!.data as Json;
    const listed = async (status: string) =>
      (
        (await env.api.get(`/sms/campaign?status=${status}&name=${encodeURIComponent(c.name as string)}`)).body!.data
          .items as Json[]
      ).map((i) => i.id);
    expect(await listed('pending')).toEqual([c.uuid]);
    await env.api.admin.advance(CAMPAIGN_SEND_DELAY_MS);
    expect(await listed('pending')).toEqual([]);
    expect(await listed('success')).toEqual([]);
    expect(await listed('failed')).toEqual([c.uuid]);
  });

  it('ids are uuids of any version (the spec names none): the sandbox (G2 bucket_id, G8 id) and the client agree', async () => {
    const t = await template();
    const accepted = [
      BUCKET, // v4, what the sandbox issues
      '6ba7b810-9dad-11d1-80b4-00c04fd430c8', // v1
      '01890a5d-ac96-774b-bcce-b302099a8057', // v7
      '00000000-0000-0000-0000-000000000000', // nil
      BUCKET.toUpperCase(),
    ];
    const refused = ['not-a-uuid', BUCKET.replace(/-/g, ''), BUCKET.slice(0, -1), BUCKET.replace('7d5a', '7g5a')];
    const sandboxAccepts = async (id: string) => {
      const created = await env.api.post('/sms/campaign', {
        name: uid('Any'),
        bucket_id: id,
        sender_id: 'SANDBOX',
        is_scheduled: false,
        sscheduled_dor: 'now',
        template_id: t.uuid,
      });
      const deleted = await env.api.post(`/sms/template/${id}`); // an unknown template: 404 once the id is a uuid
      expect([created.status, deleted.status]).toEqual(created.status === 200 ? [200, 404] : [400, 400]);
      if (created.status !== 200) {
        expect(created.body!.message).toBe('bucket_id must be a valid uuid');
        expect(deleted.body!.message).toMatch(/^id /);
      }
      return created.status === 200;
    };
    const clientAccepts = (id: string) => SmsIdRequestSchema.safeParse({ id }).success;
    for (const id of [...accepted, ...refused])
      expect({ id, sandbox: await sandboxAccepts(id), client: clientAccepts(id) }).toEqual({
        id,
        sandbox: accepted.includes(id),
        client: accepted.includes(id),
      });
  });

  it('takes at most 100 messages per request; GET /__admin/sms/messages lists what was sent (G1)', async () => {
    const many = Array.from({ length: SMS_MAX_MESSAGES_PER_REQUEST + 1 }, (_, i) => ({
      phone_number: `23481${String(i).padStart(8, '0')}`,
      message: 'hi',
    }));
    expect(await env.api.post('/sms/send/instant', { sender_id: 'S', messages: many })).toMatchObject({
      status: 400,
      body: { message: 'messages must hold at most 100 items' },
    });
    const before = ((await env.api.admin.get('/sms/messages')).body!.data as Json[]).length;
    const r = await env.api.post('/sms/send/instant', { sender_id: 'S', messages: many.slice(0, 2) });
    const batchId = (r.body!.data.data as Json).batch_id;
    const log = (await env.api.admin.get('/sms/messages')).body!.data as Json[];
    expect(log.slice(before)).toEqual([
      {
        batch_id: batchId,
        phone_number: many[0].phone_number,
        transaction_id: expect.any(String),
        at: expect.any(String),
      },
      {
        batch_id: batchId,
        phone_number: many[1].phone_number,
        transaction_id: expect.any(String),
        at: expect.any(String),
      },
    ]);
  });
});

describe('vending (H1-H4)', () => {
  const lookup = (meter_no: string, meter_type = 'prepaid', provider = 'EKEDC') =>
    env.api.post('/vending/utilities/electricity/lookup', { meter_no, meter_type, provider });
  const purchase = (reference: string, amount: unknown = 5000) =>
    env.api.post('/vending/utilities/electricity', {
      reference,
      amount,
      phone_number: '08012345678',
      email: 'ada@example.com',
    });

  it('lists the providers, JED included (H1)', async () => {
    const providers = (await env.api.get('/vending/utilities/electricity/service-providers')).body!.data as Json[];
    expect(providers.map((p) => p.code)).toEqual(PROVIDERS);
    expect(providers).toContainEqual({ code: 'JED', name: expect.any(String), logo_url: null });
  });

  it('looks up the test meters; an unknown meter, a wrong type or provider → 400 (H2)', async () => {
    const [prepaidNo, postpaidNo] = Object.keys(TEST_METERS);
    expect((await lookup(prepaidNo)).body!.data).toEqual({
      reference: expect.stringMatching(/^\d+$/),
      customer_name: 'ADA SANDBOX',
      minimum_vend: 1000,
      account_type: expect.any(String),
      outstanding_debt: '0.00',
      address: expect.any(String),
      meter_type: 'prepaid',
      provider: 'EKEDC',
    });
    expect((await lookup(postpaidNo, 'postpaid', 'JED')).body!.data).toMatchObject({
      customer_name: 'TUNDE SANDBOX',
      minimum_vend: 2000,
      outstanding_debt: '1200.50',
    });
    expect(await lookup('11111111111')).toMatchObject({ status: 400, body: { message: 'Invalid meter number' } });
    expect((await lookup(prepaidNo, 'postpaid')).body!.message).toBe('Invalid meter number');
    expect((await lookup(prepaidNo, 'prepaid', 'ZZEDC')).body!.message).toBe('provider is invalid');
    expect(
      (await env.api.post('/vending/utilities/electricity/lookup', { meter_type: 'prepaid', provider: 'IE' })).body!
        .message,
    ).toBe('meter_no is required');
  });

  it('vends once per lookup reference: token in value_reference and meta_json.token, ledger entry; the lookup by reference finds it (H3)', async () => {
    const reference = (await lookup('45067198783')).body!.data.reference as string;
    expect((await purchase(reference, 500)).body!.message).toBe('amount is below the minimum vend of 1000');
    const vend = await purchase(reference, 5000);
    const txn = vend.body!.data as Json;
    expect(txn).toMatchObject({
      reference,
      amount: '5000.00',
      merchant_amount: '5000.00',
      phone_number: '08012345678',
      email: 'ada@example.com',
      merchant_id: 'SBXMERCHANT',
      wallet_batch_id: expect.any(String),
      value_reference: expect.stringMatching(/^\d{4}(-\d{4}){4}$/),
      network: null,
      transaction_id: null,
      type: 'electricity',
      action: 'debit',
      status: 'success',
      createdAt: expect.any(String),
    });
    expect(txn.meta_json).toMatchObject({
      token: txn.value_reference,
      meter_number: '45067198783',
      provider: 'EKEDC',
      amount_paid: '5000.00',
      provider_meta: { code: 'EKEDC' },
    });
    expect(JSON.parse(txn.meta as string)).toEqual(txn.meta_json);
    expect(await purchase(reference, 5000)).toMatchObject({
      status: 400,
      body: { message: 'Transaction already processed for this reference' },
    });
    expect(env.sb.ledger({ reference })).toEqual([expect.objectContaining({ kind: 'vend', amount: '5000.00' })]);
    expect((await env.api.get(`/vending/transactions?reference=${reference}`)).body!.data).toEqual(txn);
    expect((await env.api.get('/vending/transactions?reference=999')).status).toBe(404);
    expect((await env.api.get('/vending/transactions?page=1&perPage=50')).body!.data).toContainEqual(txn);
    expect((await purchase('123')).body!.message).toBe('Invalid reference: look the meter up first');
  });
});
