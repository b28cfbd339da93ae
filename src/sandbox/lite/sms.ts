// SMS (G1-G8): instant messages, campaigns over a bucket with a template, templates.
import { randomUUID } from 'node:crypto';
import { fail, ok, randomDigits, requireFields, type SandboxCore } from './core';

export const SMS_COST_PER_PAGE = 4; // NGN, per 160-character page

export function registerSms(core: SandboxCore) {
  const campaigns = new Map<string, Record<string, unknown>>();
  const templates = new Map<string, Record<string, unknown>>();
  const pages = (text: string) => Math.max(1, Math.ceil(text.length / 160));
  const paged = <T>(rows: T[], q: URLSearchParams) => {
    const perPage = Math.max(Number(q.get('perPage') ?? 20) || 20, 1);
    const page = Math.max(Number(q.get('page') ?? 1) || 1, 1);
    const sorted = q.get('dir') === 'ASC' ? rows : [...rows].reverse();
    return sorted.slice((page - 1) * perPage, page * perPage);
  };

  core.route('POST', '/sms/send/instant', 'default', ({ body }) => {
    const missing = requireFields(body, ['sender_id', 'messages']);
    if (missing) return missing;
    if (!Array.isArray(body.messages) || body.messages.length === 0) return fail(400, 'messages must be a non-empty array');
    const sent: Record<string, unknown>[] = [];
    const errors: Record<string, unknown>[] = [];
    for (const m of body.messages as Record<string, unknown>[]) {
      if (!/^\+?\d{7,15}$/.test(String(m?.phone_number)) || typeof m?.message !== 'string' || !m.message) {
        errors.push({ phone_number: m?.phone_number ?? null, error: 'phone_number and message are required' });
        continue;
      }
      sent.push({ phone_number: m.phone_number, status: 'SENT', cost: pages(m.message) * SMS_COST_PER_PAGE, transaction_id: randomUUID() });
    }
    const total = sent.reduce((n, s) => n + (s.cost as number), 0);
    return ok({ success: true, message: 'Messages queued', data: { batch_id: `BATCH${randomDigits(10)}`, sent, errors, total_cost: total, currency: 'NGN' } });
  });

  core.route('POST', '/sms/campaign', 'default', ({ body }) => {
    const missing = requireFields(body, ['name', 'bucket_id', 'sender_id', 'is_scheduled', 'sscheduled_dor', 'template_id']);
    if (missing) return missing;
    if (!templates.has(String(body.template_id))) return fail(400, 'template_id does not name a template');
    const now = core.clock.iso();
    const campaign = {
      uuid: randomUUID(), name: body.name, cost: '0.00', scheduled_for: body.is_scheduled ? body.sscheduled_dor : now, status: 'pending', merchant_id: 'SBXMERCHANT',
      createdAt: now, updatedAt: now, bucket_id: body.bucket_id, sender_id: body.sender_id, template_id: body.template_id,
    };
    campaigns.set(campaign.uuid, campaign);
    return ok(campaign);
  });

  core.route('GET', '/sms/campaign', 'default', ({ query }) => {
    let rows = [...campaigns.values()];
    const status = query.get('status');
    if (status) rows = rows.filter((c) => c.status === status);
    const name = query.get('name');
    if (name) rows = rows.filter((c) => String(c.name).includes(name));
    const items = paged(rows, query).map((c) => ({ id: c.uuid, name: c.name, client_id: 'SBXMERCHANT', template_id: c.template_id, bucket_id: c.bucket_id, total: 0, created_at: c.createdAt, created_by: 'SBXMERCHANT' }));
    return { status: 200, body: { status: 'SUCCESS', message: 'Campaigns', data: { items, total: rows.length } } };
  });

  core.route('POST', '/sms/campaign/{id}', 'default', ({ params }) => (campaigns.delete(params.id) ? ok({}, 'success') : fail(404, 'Campaign not found')));

  core.route('POST', '/sms/template', 'default', ({ body }) => {
    const missing = requireFields(body, ['name', 'description', 'message']);
    if (missing) return missing;
    const now = core.clock.iso();
    const t = { uuid: randomUUID(), merchant_id: 'SBXMERCHANT', name: body.name, description: body.description, pages: pages(String(body.message)), message: body.message, createdAt: now, updatedAt: now };
    templates.set(t.uuid, t);
    return ok(t);
  });

  core.route('GET', '/sms/template', 'default', ({ query }) => {
    const rows = [...templates.values()];
    return ok({ count: rows.length, rows: paged(rows, query) });
  });

  core.route('PATCH', '/sms/template/{id}', 'default', ({ params, body }) => {
    const t = templates.get(params.id);
    if (!t) return fail(404, 'Template not found');
    for (const k of ['name', 'description', 'message', 'file_name']) if (typeof body[k] === 'string') t[k] = body[k];
    t.pages = pages(String(t.message));
    t.updatedAt = core.clock.iso();
    return ok(t);
  });

  core.route('POST', '/sms/template/{id}', 'default', ({ params }) =>
    templates.delete(params.id) ? { status: 200, body: { message: 'success' } } : fail(404, 'Template not found'),
  );
}
