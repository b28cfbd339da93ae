// SMS (G): instant messages (G1), campaigns over a bucket with a template (G2-G4), message
// templates (G5-G8). Nothing is really sent; costs are the sandbox's own tariff.
import { randomUUID } from 'node:crypto';
import type { SandboxClock } from './clock';
import { z } from 'zod';
import {
  addRoutes,
  asObject,
  fail,
  inDays,
  MERCHANT_ID,
  ok,
  page,
  randomDigits,
  type Reply,
  type RequestContext,
  type RouteHandler,
  type Router,
} from './http';
import {
  DAYS,
  identifier,
  matching,
  oneOf,
  PAGING,
  pathParams,
  rule,
  text,
  UUID,
  type RouteFields,
} from './validation';

/** NGN per 160-character page (the sandbox's tariff). */
export const SMS_COST_PER_PAGE = 4;
/** An unscheduled campaign moves from pending to success this long after creation (sandbox clock). */
export const CAMPAIGN_SEND_DELAY_MS = 60_000;
/** Sending to this number always fails (it lands in `errors`). */
export const SMS_FAILING_NUMBER = '2348000000000';
/** The send takes at most this many messages per request (the sandbox's own limit; the spec shows none). */
export const SMS_MAX_MESSAGES_PER_REQUEST = 100;
/** A campaign over this bucket fails when its send time comes (buckets are not modelled otherwise). */
export const SMS_FAILING_BUCKET_ID = '0000fa11-0000-4000-8000-000000000000';

const SEND_INSTANT_FIELDS: RouteFields = {
  body: z.object({
    sender_id: text(),
    // Each message is checked on its own: a bad one is listed in `errors`, the others are sent.
    messages: rule((v) => Array.isArray(v), 'must be an array of {phone_number, message}').pipe(
      rule(
        (v) => (v as unknown[]).length <= SMS_MAX_MESSAGES_PER_REQUEST,
        `must hold at most ${SMS_MAX_MESSAGES_PER_REQUEST} items`,
      ),
    ),
  }),
};
const CREATE_CAMPAIGN_FIELDS: RouteFields = {
  body: z.object({
    name: text(),
    bucket_id: matching(UUID, 'must be a valid uuid'),
    sender_id: text(),
    is_scheduled: rule((v) => typeof v === 'boolean', 'must be a boolean'),
    sscheduled_dor: text(),
    template_id: identifier(),
  }),
};
const LISTING = { ...PAGING, dir: oneOf(['ASC', 'DESC', 'DSC'], 'must be ASC or DSC').optional(), ...DAYS };
const LIST_CAMPAIGNS_FIELDS: RouteFields = {
  query: z.object({
    ...LISTING,
    status: oneOf(['pending', 'failed', 'success'], 'must be pending, failed or success').optional(),
  }),
};
const CREATE_TEMPLATE_FIELDS: RouteFields = { body: z.object({ name: text(), description: text(), message: text() }) };
const BY_UUID = pathParams({ id: matching(UUID, 'must be a valid uuid') });
const UPDATE_TEMPLATE_FIELDS: RouteFields = {
  params: BY_UUID,
  body: z.object({
    name: text().optional(),
    description: text().optional(),
    message: text().optional(),
    file_name: text().optional(),
  }),
};

/** One message the send accepted (admin view: GET /__admin/sms/messages). */
export interface SentSms {
  batch_id: string;
  phone_number: string;
  transaction_id: string;
  at: string;
}

export interface SmsApi {
  /** Every message the send sent, oldest first. */
  sentMessages(): SentSms[];
}

interface Campaign {
  uuid: string;
  name: string;
  cost: string;
  scheduled_for: string;
  status: 'pending' | 'failed' | 'success';
  merchant_id: string;
  createdAt: string;
  updatedAt: string;
  bucket_id: string;
  sender_id: string;
  template_id: string;
  sendAt: number | undefined;
}

/** The messages sent, the campaigns and the templates. */
interface SmsState {
  clock: SandboxClock;
  sentLog: SentSms[];
  campaigns: Map<string, Campaign>;
  templates: Map<string, Record<string, unknown>>;
}

const pages = (text: string) => Math.max(1, Math.ceil(text.length / 160));
const publicCampaign = ({ sendAt: _s, ...c }: Campaign) => c;
const sortRows = <T extends Record<string, unknown>>(rows: T[], key: string, dir: string | null): T[] => {
  const sorted = [...rows].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
  return dir === 'ASC' ? sorted : sorted.reverse();
};

/** Campaign status on the sandbox clock: pending until its send time, then success (failed over the failing bucket). */
function refresh(clock: SandboxClock, c: Campaign): void {
  if (c.status === 'pending' && c.sendAt !== undefined && clock.now() >= c.sendAt) {
    c.status = c.bucket_id.toLowerCase() === SMS_FAILING_BUCKET_ID ? 'failed' : 'success';
    c.updatedAt = clock.iso(c.sendAt);
  }
}

/** Instant send (G1): each message checked on its own; the bad ones are listed in `errors`, the others sent. */
function sendInstant({ clock, sentLog }: SmsState, { body }: RequestContext): Reply {
  const batchId = `BATCH${randomDigits(10)}`;
  const sent: Record<string, unknown>[] = [];
  const errors: Record<string, unknown>[] = [];
  for (const raw of body.messages as unknown[]) {
    const m = asObject(raw);
    const phone = String(m.phone_number ?? '');
    if (!/^\+?\d{7,15}$/.test(phone) || typeof m.message !== 'string' || m.message === '') {
      errors.push({ phone_number: m.phone_number ?? null, error: 'phone_number and message are required' });
      continue;
    }
    if (phone.replace(/^\+/, '') === SMS_FAILING_NUMBER) {
      errors.push({ phone_number: phone, error: 'Message could not be delivered to this number' });
      continue;
    }
    const transactionId = randomUUID();
    const cost = pages(m.message) * SMS_COST_PER_PAGE;
    sent.push({ phone_number: phone, status: 'SENT', cost, transaction_id: transactionId });
    sentLog.push({ batch_id: batchId, phone_number: phone, transaction_id: transactionId, at: clock.iso() });
  }
  const total = sent.reduce((n, s) => n + (s.cost as number), 0);
  return ok({
    success: sent.length > 0,
    message: sent.length > 0 ? 'Messages sent' : 'No message sent',
    data: { batch_id: batchId, sent, errors, total_cost: total, currency: 'NGN' },
  });
}

/** A campaign (G2), sent at its schedule (or shortly, unscheduled) on the sandbox clock. */
function createCampaign({ clock, campaigns, templates }: SmsState, { body }: RequestContext): Reply {
  if (!templates.has(String(body.template_id))) return fail(400, 'template_id does not name a template');
  const now = clock.now();
  const scheduledAt = body.is_scheduled ? Date.parse(String(body.sscheduled_dor)) : now + CAMPAIGN_SEND_DELAY_MS;
  const campaign: Campaign = {
    uuid: randomUUID(),
    name: String(body.name),
    cost: '0.00', // bucket records are not shown in the spec: the sandbox's buckets are empty
    scheduled_for: body.is_scheduled ? String(body.sscheduled_dor) : clock.iso(now),
    status: 'pending',
    merchant_id: MERCHANT_ID,
    createdAt: clock.iso(now),
    updatedAt: clock.iso(now),
    bucket_id: String(body.bucket_id),
    sender_id: String(body.sender_id),
    template_id: String(body.template_id),
    // A schedule the sandbox cannot read stays pending.
    sendAt: Number.isNaN(scheduledAt) ? undefined : scheduledAt,
  };
  campaigns.set(campaign.uuid, campaign);
  return ok(publicCampaign(campaign), 'Campaign created');
}

/**
 * The campaign list (G3) has its own envelope: status 'SUCCESS', no success flag. Items carry the spec's listing fields
 * only (no status): a campaign's status is read through the `status` filter.
 */
function listCampaigns({ clock, campaigns }: SmsState, { query }: RequestContext): Reply {
  let rows = [...campaigns.values()];
  rows.forEach((c) => refresh(clock, c));
  const status = query.get('status');
  if (status) rows = rows.filter((c) => c.status === status);
  const name = query.get('name')?.toLowerCase();
  if (name) rows = rows.filter((c) => c.name.toLowerCase().includes(name));
  rows = rows.filter((c) => inDays(c.createdAt, query));
  const sorted = sortRows(rows.map(publicCampaign), 'createdAt', query.get('dir'));
  const items = page(sorted, query, 20).map((c) => ({
    id: c.uuid,
    name: c.name,
    client_id: MERCHANT_ID,
    template_id: c.template_id,
    bucket_id: c.bucket_id,
    total: 0,
    created_at: c.createdAt,
    created_by: MERCHANT_ID,
  }));
  return {
    status: 200,
    body: { status: 'SUCCESS', message: 'Campaigns retrieved', data: { items, total: rows.length } },
  };
}

/** Deletes a campaign (G4; response body: not shown; ours is the envelope with data {}). */
const deleteCampaign: RouteHandler<SmsState> = ({ campaigns }, { params }) =>
  campaigns.delete(params.id) ? ok({}, 'success') : fail(404, 'Campaign not found');

/** Creates a template (G5). */
function createTemplate({ clock, templates }: SmsState, { body }: RequestContext): Reply {
  const now = clock.iso();
  const t = {
    uuid: randomUUID(),
    merchant_id: MERCHANT_ID,
    name: body.name,
    description: body.description,
    pages: pages(String(body.message)),
    message: body.message,
    createdAt: now,
    updatedAt: now,
  };
  templates.set(t.uuid, t);
  return ok(t, 'Template created');
}

/** Lists templates (G6). */
function listTemplates({ templates }: SmsState, { query }: RequestContext): Reply {
  const rows = [...templates.values()].filter((t) => inDays(String(t.createdAt), query));
  const sorted = sortRows(rows, 'createdAt', query.get('dir'));
  return ok({ count: rows.length, rows: page(sorted, query, 20) });
}

/** Updates a template (G7; fields: not shown; the sample's name, description, file_name, and message are taken). */
function updateTemplate({ clock, templates }: SmsState, { params, body }: RequestContext): Reply {
  const t = templates.get(params.id);
  if (!t) return fail(404, 'Template not found');
  for (const k of ['name', 'description', 'message', 'file_name']) if (typeof body[k] === 'string') t[k] = body[k];
  t.pages = pages(String(t.message));
  t.updatedAt = clock.iso();
  return ok(t, 'Template updated');
}

/** Deletes a template (G8): body {message: 'success'} only. */
const deleteTemplate: RouteHandler<SmsState> = ({ templates }, { params }) =>
  templates.delete(params.id) ? { status: 200, body: { message: 'success' } } : fail(404, 'Template not found');

export function registerSms(router: Router, deps: { clock: SandboxClock }): SmsApi {
  const state: SmsState = { clock: deps.clock, sentLog: [], campaigns: new Map(), templates: new Map() };
  addRoutes(router, 'sms', state, [
    ['POST', '/sms/send/instant', SEND_INSTANT_FIELDS, sendInstant],
    ['POST', '/sms/campaign', CREATE_CAMPAIGN_FIELDS, createCampaign],
    ['GET', '/sms/campaign', LIST_CAMPAIGNS_FIELDS, listCampaigns],
    ['POST', '/sms/campaign/{id}', { params: BY_UUID }, deleteCampaign],
    ['POST', '/sms/template', CREATE_TEMPLATE_FIELDS, createTemplate],
    ['GET', '/sms/template', { query: z.object(LISTING) }, listTemplates],
    ['PATCH', '/sms/template/{id}', UPDATE_TEMPLATE_FIELDS, updateTemplate],
    ['POST', '/sms/template/{id}', { params: BY_UUID }, deleteTemplate],
  ]);
  return { sentMessages: () => state.sentLog.map((m) => ({ ...m })) };
}
