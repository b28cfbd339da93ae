// SMS (G1-G8) through the API client against the sandbox.
import { PaymentsClient, PermissionDeniedError, NotFoundError } from '../../src/api';
import { startSandbox, type Sandbox, DEFAULT_SANDBOX_KEY } from '../../src/sandbox';

let sb: Sandbox;
let api: PaymentsClient;
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  api = new PaymentsClient({ baseUrl: sb.url, secretKey: DEFAULT_SANDBOX_KEY, timeoutMs: 2_000 });
});
afterAll(async () => {
  await api.close();
  await sb.close();
});

it('sends instant messages with per-page cost', async () => {
  const res = await api.sms.send({ sender_id: 'SANDBOX', messages: [{ phone_number: '2348012345678', message: 'hi' }, { phone_number: '2348012345679', message: 'x'.repeat(200) }] });
  expect(res.data.data).toMatchObject({ sent: [{ status: 'SENT', cost: 4 }, { status: 'SENT', cost: 8 }], total_cost: 12, currency: 'NGN' });
});

it('manages templates and campaigns', async () => {
  const t = await api.sms.createTemplate({ name: 'Welcome', description: 'greeting', message: 'Hello {name}' });
  expect(t.data).toMatchObject({ name: 'Welcome', pages: 1 });
  expect((await api.sms.listTemplates({} as never)).data).toMatchObject({ count: 1, rows: [expect.objectContaining({ uuid: t.data.uuid })] });
  expect((await api.sms.updateTemplate({ id: t.data.uuid, name: 'Hi' } as never)).data.name).toBe('Hi');
  const c = await api.sms.createCampaign({ name: 'Nov', bucket_id: '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d10', sender_id: 'SANDBOX', is_scheduled: true, sscheduled_dor: '2026-12-01 10:00', template_id: t.data.uuid });
  expect(c.data).toMatchObject({ status: 'pending', template_id: t.data.uuid });
  expect((await api.sms.listCampaigns({ status: 'pending' } as never)).data).toMatchObject({ total: 1, items: [expect.objectContaining({ id: c.data.uuid })] });
  await api.sms.deleteCampaign({ id: c.data.uuid });
  expect((await api.sms.listCampaigns({} as never)).data.total).toBe(0);
  await api.sms.deleteTemplate({ id: t.data.uuid });
  await expect(api.sms.deleteTemplate({ id: t.data.uuid })).rejects.toBeInstanceOf(NotFoundError);
});

it('refuses a missing key with 401 and a wrong one with 403', async () => {
  const res = await fetch(`${sb.url}/sms/template`);
  expect(res.status).toBe(401);
  const wrong = new PaymentsClient({ baseUrl: sb.url, secretKey: 'sandbox_sk_other_000', timeoutMs: 2_000 });
  await expect(wrong.sms.listTemplates({} as never)).rejects.toBeInstanceOf(PermissionDeniedError);
  await wrong.close();
});
