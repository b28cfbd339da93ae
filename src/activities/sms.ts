// SMS activities: send a batch, create a campaign, and list campaigns.
//
// Sending a batch and creating a campaign cost money and carry no reference of ours: each is sent
// once, its failures typed for the workflow (sendOnce, ./calls.ts; the types in ./failures.ts), which
// never resends after a lost answer. Campaign listings are read-only and retried by their policy.
//
// Phone numbers and message texts are never logged: only the workflow id, batch number, sizes,
// counts and the service's batch_id / campaign uuid.
import { Context } from '@temporalio/activity';
import type { PaymentsClient, SmsCampaign, SmsSendResult } from '../api';
import { flowDeps, type ActivityDeps, type FlowDeps as SmsDeps } from './deps';
import { bindActivities } from './bind';
import { attemptRequestId, read, sendOnce } from './calls';
import {
  SMS_CAMPAIGN_SERVICE_STATUSES,
  toDecimalString,
  type SmsBatchAnswer,
  type SmsCampaignLookup,
  type SmsCampaignRecord,
  type SmsMessage,
} from '../shared/sms';

/** Most campaign-list pages read for one lookup (perPage up to 100). */
const MAX_PAGES = 50;

const text = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;

/** One `errors` item: the spec gives no shape, so the number and the text are taken where an item carries them. */
export function readSmsError(item: unknown): { phone_number?: string; error: string } {
  if (typeof item === 'string') return { error: item };
  if (item && typeof item === 'object') {
    const o = item as Record<string, unknown>;
    const phone = text(o.phone_number) ?? text(o.phone) ?? text(o.number) ?? text(o.recipient);
    const error =
      text(o.error) ?? text(o.message) ?? text(o.reason) ?? text(o.status) ?? 'not sent (the service gave no reason)';
    return { ...(phone !== undefined ? { phone_number: phone } : {}), error };
  }
  return { error: 'not sent (the service gave no reason)' };
}

export function toSmsBatchAnswer(d: SmsSendResult): SmsBatchAnswer {
  const r = d.data;
  const total = toDecimalString(r.total_cost);
  return {
    ...(r.batch_id ? { batch_id: r.batch_id } : {}),
    ...(d.success != null ? { success: d.success } : {}),
    ...(d.message != null ? { message: d.message } : {}),
    sent: r.sent.map((s) => {
      const cost = toDecimalString(s.cost);
      return {
        phone_number: s.phone_number ?? '',
        ...(s.status ? { status: s.status } : {}),
        ...(cost !== undefined ? { cost } : {}),
        ...(s.transaction_id ? { transaction_id: s.transaction_id } : {}),
      };
    }),
    errors: (r.errors ?? []).map(readSmsError),
    ...(total !== undefined ? { total_cost: total } : {}),
    ...(r.currency ? { currency: r.currency } : {}),
  };
}

export function toSmsCampaignRecord(c: SmsCampaign): SmsCampaignRecord {
  const cost = c.cost == null ? undefined : String(c.cost);
  return {
    uuid: c.uuid,
    ...(c.name ? { name: c.name } : {}),
    ...(c.status ? { status: c.status } : {}),
    ...(c.scheduled_for ? { scheduled_for: c.scheduled_for } : {}),
    ...(cost !== undefined ? { cost } : {}),
    ...(c.bucket_id ? { bucket_id: c.bucket_id } : {}),
    ...(c.sender_id ? { sender_id: c.sender_id } : {}),
    ...(c.template_id ? { template_id: c.template_id } : {}),
    ...(c.createdAt ? { createdAt: c.createdAt } : {}),
  };
}

type CampaignStatus = (typeof SMS_CAMPAIGN_SERVICE_STATUSES)[number];

/** Pages through the campaign list with the given filters until `stop` says so or the list ends. */
async function scan(
  api: PaymentsClient,
  filters: { status?: CampaignStatus; name?: string },
  pageSize: number,
  stop: (item: { id: string; name?: string }) => boolean,
): Promise<boolean> {
  for (let page = 1; page <= MAX_PAGES; page++) {
    const query = { ...filters, page, perPage: pageSize };
    const res = await api.sms.listCampaigns(query, { requestId: attemptRequestId(`-p${page}`) });
    const items = res.data.items;
    if (items.some((i) => stop({ id: String(i.id), ...(i.name ? { name: i.name } : {}) }))) return true;
    if (items.length === 0 || page * pageSize >= res.data.total) return false;
  }
  return false;
}

/** Sends one batch (G1), once. The workflow never calls it again for a batch whose answer was lost. */
function smsSendBatch(
  { api, log }: SmsDeps,
  req: { sender_id: string; messages: SmsMessage[] },
  o: { batch: number; attempt: number; timeoutMs?: number },
): Promise<SmsBatchAnswer> {
  const call = {
    log,
    what: `send SMS batch ${o.batch} (G1)`,
    where: { batch: o.batch, attempt: o.attempt, size: req.messages.length },
    call: 'sms batch',
  };
  const requestId = `${Context.current().info.activityId}-b${o.batch}-a${o.attempt}`;
  const send = async () => toSmsBatchAnswer((await api.sms.send(req, { timeoutMs: o.timeoutMs, requestId })).data);
  return sendOnce(call, send, (a) => ({ batchId: a.batch_id, sent: a.sent.length, errors: a.errors.length }));
}

/** Creates the campaign (G2), once. A lost answer is searched for by name (smsListCampaignIdsByName), never created again. */
function smsCreateCampaign(
  { api, log }: SmsDeps,
  req: {
    name: string;
    bucket_id: string;
    sender_id: string;
    is_scheduled: boolean;
    sscheduled_dor: string;
    template_id: string;
  },
  o: { attempt: number; timeoutMs?: number },
): Promise<SmsCampaignRecord> {
  const call = {
    log,
    what: 'create campaign (G2)',
    where: { attempt: o.attempt },
    call: 'sms campaign create',
  };
  const requestId = `${Context.current().info.activityId}-a${o.attempt}`;
  const create = async () =>
    toSmsCampaignRecord((await api.sms.createCampaign(req, { timeoutMs: o.timeoutMs, requestId })).data);
  return sendOnce(call, create, (r) => ({ campaignId: r.uuid, status: r.status }));
}

/**
 * Which status filter of the campaign list (G3) lists the campaign. The spec's listing items carry no status, so
 * the campaign is looked for under `status=success`, then `failed`, then `pending`.
 */
function smsFindCampaign(
  { api }: SmsDeps,
  req: { id: string; name?: string; pageSize?: number },
): Promise<SmsCampaignLookup> {
  const id = req.id.toLowerCase();
  return read('list campaigns (G3)', async (): Promise<SmsCampaignLookup> => {
    for (const status of SMS_CAMPAIGN_SERVICE_STATUSES) {
      const filters = { status, ...(req.name ? { name: req.name } : {}) };
      if (await scan(api, filters, req.pageSize ?? 100, (i) => i.id.toLowerCase() === id))
        return { found: true, status };
    }
    return { found: false };
  });
}

/** The campaign list by name (G3): the ids of the campaigns carrying exactly this name. */
function smsListCampaignIdsByName({ api }: SmsDeps, req: { name: string; pageSize?: number }): Promise<string[]> {
  const ids: string[] = [];
  return read('list campaigns by name (G3)', async () => {
    await scan(api, { name: req.name }, req.pageSize ?? 100, (i) => {
      if (i.name === req.name) ids.push(i.id.toLowerCase());
      return false;
    });
    return ids;
  });
}

export function createSmsActivities(deps: Pick<ActivityDeps, 'api' | 'logger'>) {
  const d = flowDeps(deps, 'sms');
  return bindActivities(d, { smsSendBatch, smsCreateCampaign, smsFindCampaign, smsListCampaignIdsByName });
}

export type SmsActivities = ReturnType<typeof createSmsActivities>;
