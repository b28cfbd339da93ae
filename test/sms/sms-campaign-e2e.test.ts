// Templates (G5-G8) and campaigns (G2-G4) end to end: the starters and the real worker on the dev
// server, the sandbox over real HTTP with its clock moved by the admin API. A campaign followed to
// success and to failed, a deleted one (not_found), a lost G2 answer found by name and never
// created twice, a refused G2, and the input rules.
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../src/logging/logger';
import type { RunningServices } from '../../src/stack/services';
import { CAMPAIGN_SEND_DELAY_MS, SMS_FAILING_BUCKET_ID } from '../../src/sandbox';
import { NotFoundError } from '../../src/api';
import {
  createSmsTemplate,
  deleteSmsCampaign,
  deleteSmsTemplate,
  followSmsCampaign,
  listSmsCampaigns,
  listSmsTemplates,
  startSmsCampaign,
  updateSmsTemplate,
} from '../../src/starters/sms';
import { StarterInputError } from '../../src/starters/input-error';
import type { StarterContext } from '../../src/starters/connect';
import { smsCampaignStateQuery, type SmsCampaignInput, type SmsCampaignState } from '../../src/shared/sms';
import { LogCapture, startServices, testConfig } from '../support/stack';
import { eventually } from '../support/polling';
import { SandboxAdmin, type RequestLogEntry } from '../support/sandbox-admin';
import { recordHistory } from '../support/replay';
import { resolveParkedFlow } from '../../src/starters/ops';

const logger = createLogger({ destination: new LogCapture(), level: 'warn' });
const config = testConfig();
let services: RunningServices;
let admin: SandboxAdmin;
let ctx: StarterContext;
let templateId: string;

beforeAll(async () => {
  services = await startServices(config, { logger });
  admin = new SandboxAdmin(services.sandboxUrl!);
  ctx = services.starters;
  templateId = (
    await createSmsTemplate(services.starters, {
      name: 'Promo',
      description: 'November promo',
      message: 'Hello from the shop',
    })
  ).uuid;
}, 60_000);
afterAll(() => services?.stop());
afterEach(() => admin.clearFaults());

const BUCKET = '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d10';
const FAST = { pollInterval: '100ms', maxPollInterval: '200ms', lostCreateSettle: '100ms' };
const campaign = (
  over: Partial<SmsCampaignInput['campaign']> = {},
  options: SmsCampaignInput['options'] = FAST,
): SmsCampaignInput => ({
  reference: `cmp-${randomUUID()}`,
  campaign: {
    name: `Nov ${randomUUID().slice(0, 8)}`,
    bucket_id: BUCKET,
    sender_id: 'SHOP',
    is_scheduled: false,
    template_id: templateId,
    ...over,
  },
  options,
});

const until = (
  h: { query: (q: typeof smsCampaignStateQuery) => Promise<SmsCampaignState> },
  ok: (s: SmsCampaignState) => boolean,
): Promise<SmsCampaignState> =>
  eventually(() => h.query(smsCampaignStateQuery), ok, {
    attempts: 300,
    intervalMs: 50,
    description: 'the campaign state',
  });
const creates = async (from: number) =>
  ((await admin.requests()) as RequestLogEntry[])
    .slice(from)
    .filter((e) => e.method === 'POST' && e.path === '/sms/campaign');

describe('SMS templates (G5-G8) through the starters', () => {
  it('create, list, update, delete; an unknown id is a 404; rules name the field', async () => {
    const t = await createSmsTemplate(services.starters, {
      name: 'Welcome',
      description: 'greeting',
      message: 'Welcome aboard',
    });
    expect(t).toMatchObject({
      uuid: expect.any(String),
      name: 'Welcome',
      description: 'greeting',
      message: 'Welcome aboard',
      pages: 1,
    });
    expect((await listSmsTemplates(services.starters, { perPage: 100 })).rows.map((r) => r.uuid)).toContain(t.uuid);
    const u = await updateSmsTemplate(services.starters, {
      id: t.uuid,
      message: 'y'.repeat(200),
      file_name: 'welcome.txt',
    });
    expect(u).toMatchObject({ uuid: t.uuid, name: 'Welcome', message: 'y'.repeat(200), pages: 2 });
    await deleteSmsTemplate(services.starters, t.uuid);
    expect((await listSmsTemplates(services.starters, { perPage: 100 })).rows.map((r) => r.uuid)).not.toContain(t.uuid);
    await expect(deleteSmsTemplate(services.starters, t.uuid)).rejects.toBeInstanceOf(NotFoundError);
    await expect(updateSmsTemplate(services.starters, { id: t.uuid, name: 'x' })).rejects.toThrow('Template not found');

    await expect(createSmsTemplate(services.starters, { name: 'x', description: ' ', message: 'm' })).rejects.toThrow(
      'invalid SMS template input: description must not be empty',
    );
    await expect(updateSmsTemplate(services.starters, { id: t.uuid })).rejects.toThrow(
      'must change at least one of name, description, message, file_name',
    );
    await expect(deleteSmsTemplate(services.starters, 'nope')).rejects.toThrow(
      'invalid SMS template delete input: id must be a uuid',
    );
    await expect(listSmsTemplates(services.starters, { dir: 'DOWN' as 'DSC' })).rejects.toBeInstanceOf(
      StarterInputError,
    );
  });
});

describe('SMS campaigns (G2-G4) followed by the workflow', () => {
  it('followed to success: created pending, polled until the service sends it', async () => {
    const input = campaign();
    const h = await startSmsCampaign(ctx, input);
    const pending = await until(h, (s) => s.status === 'following' && s.serviceStatus === 'pending');
    expect(pending.campaignId).toMatch(/^[0-9a-f-]{36}$/);
    await admin.advanceClock(CAMPAIGN_SEND_DELAY_MS);
    const result = await h.result();
    expect(result).toMatchObject({
      status: 'success',
      serviceStatus: 'success',
      campaignId: pending.campaignId,
      campaign: { uuid: pending.campaignId, status: 'pending', name: input.campaign.name },
    });
    expect(result.steps[0]).toEqual({ op: 'create', attempt: 1, outcome: 'created', detail: 'pending' });
    expect(
      (await listSmsCampaigns(services.starters, { status: 'success', name: input.campaign.name })).items.map(
        (i) => i.id,
      ),
    ).toEqual([pending.campaignId]);
  });

  it('followed to failed (the failing test bucket)', async () => {
    const h = await startSmsCampaign(ctx, campaign({ bucket_id: SMS_FAILING_BUCKET_ID }));
    await until(h, (s) => s.serviceStatus === 'pending');
    await admin.advanceClock(CAMPAIGN_SEND_DELAY_MS);
    expect(await h.result()).toMatchObject({
      status: 'failed',
      serviceStatus: 'failed',
      message: expect.stringContaining('failed: the campaign list (G3) shows it as failed'),
    });
  });

  it('a campaign deleted (G4) while followed ends not_found after missingReads reads without it', async () => {
    const h = await startSmsCampaign(ctx, campaign({}, { ...FAST, missingReads: 2 }));
    const s = await until(h, (x) => x.serviceStatus === 'pending');
    await deleteSmsCampaign(services.starters, s.campaignId!);
    const result = await h.result();
    expect(result.status).toBe('not_found');
    expect(
      result.steps
        .filter((x) => x.op === 'poll')
        .slice(-2)
        .map((x) => x.outcome),
    ).toEqual(['not_listed', 'not_listed']);
  });

  it("G2's answer lost: found by name in G3, never created twice, and followed", async () => {
    const input = campaign();
    await admin.fault({ method: 'POST', path: '^/sms/campaign$', kind: 'drop-after-processing', count: 1 });
    const from = (await admin.requests()).length;
    const h = await startSmsCampaign(ctx, input);
    const found = await until(h, (s) => s.status === 'following');
    expect(found.steps.slice(0, 2)).toEqual([
      { op: 'create', attempt: 1, outcome: 'unknown', detail: expect.stringContaining('OutcomeUnknown') },
      { op: 'search', read: 1, outcome: 'found', detail: found.campaignId },
    ]);
    await admin.advanceClock(CAMPAIGN_SEND_DELAY_MS);
    expect((await h.result()).status).toBe('success');
    await recordHistory(h, 'sms-campaign-lost-create-found-success');
    expect(await creates(from)).toHaveLength(1);
    expect((await listSmsCampaigns(services.starters, { name: input.campaign.name })).total).toBe(1);
  });

  it("G2's answer lost and no new campaign listed: parked outcome_unknown (G3 read again in the background), not created again; an operator resolves it", async () => {
    // The request is dropped before the service processes it: nothing exists, but the flow cannot know.
    await admin.fault({ method: 'POST', path: '^/sms/campaign$', kind: 'drop-before-processing', count: 1 });
    const from = (await admin.requests()).length;
    const h = await startSmsCampaign(ctx, campaign({}, { ...FAST, lostCreateReads: 2 }));
    await eventually(async () => (await h.query(smsCampaignStateQuery)).status === 'outcome_unknown', {
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    expect((await h.describe()).status.name).toBe('RUNNING');
    expect((await h.describe()).searchAttributes.PaymentStatus).toEqual(['outcome_unknown']);
    expect((await h.query(smsCampaignStateQuery)).steps.map((x) => `${x.op}:${x.outcome}`)).toEqual([
      'create:unknown',
      'search:not_found',
      'search:not_found',
    ]);
    await resolveParkedFlow(ctx, h.workflowId, {
      outcome: 'rejected',
      reason: 'not in the provider dashboard (test)',
      operator: 'ops@example.com',
    });
    const result = await h.result();
    expect(result).toMatchObject({
      status: 'rejected',
      resolution: { outcome: 'rejected', operator: 'ops@example.com' },
    });
    expect(result.message).toContain('it is NOT created again');
    expect(await creates(from)).toHaveLength(1);
  });

  it('a refused G2 (4xx: the template does not exist) ends rejected, nothing created', async () => {
    const result = await (await startSmsCampaign(ctx, campaign({ template_id: randomUUID() }))).result();
    expect(result).toMatchObject({
      status: 'rejected',
      message:
        'the service refused the campaign: create campaign (G2): template_id does not name a template; nothing was created',
    });
  });

  it('follows an existing campaign by uuid; a second follow joins the running follower', async () => {
    const input = campaign();
    const h = await startSmsCampaign(ctx, input);
    const s = await until(h, (x) => x.serviceStatus === 'pending');
    const f1 = await followSmsCampaign(ctx, { campaign_id: s.campaignId!, name: input.campaign.name, options: FAST });
    const run1 = (await f1.describe()).runId;
    const f2 = await followSmsCampaign(ctx, { campaign_id: s.campaignId!.toUpperCase(), options: FAST });
    expect(f2.workflowId).toBe(f1.workflowId);
    expect((await f2.describe()).runId).toBe(run1);
    await until(f1, (x) => x.serviceStatus === 'pending');
    await admin.advanceClock(CAMPAIGN_SEND_DELAY_MS);
    expect(await f1.result()).toMatchObject({ status: 'success', campaignId: s.campaignId });
    expect((await h.result()).status).toBe('success');
    await recordHistory(f1, 'sms-campaign-followed-by-uuid');
  });

  it('input rules are checked before anything starts, naming the field and the rule', async () => {
    const bad = (input: unknown) => startSmsCampaign(ctx, input as SmsCampaignInput);
    await expect(bad(campaign({ bucket_id: 'bucket-1' }))).rejects.toThrow(
      'invalid SMS campaign input: campaign.bucket_id must be a uuid',
    );
    await expect(bad(campaign({ is_scheduled: true }))).rejects.toThrow(
      'campaign.sscheduled_dor is required when is_scheduled is true',
    );
    await expect(
      bad(campaign({ is_scheduled: true, sscheduled_dor: new Date(Date.now() - 60_000).toISOString() })),
    ).rejects.toThrow('campaign.sscheduled_dor must be in the future when is_scheduled is true');
    await expect(bad({ ...campaign(), campaign: { ...campaign().campaign, scheduled_for: 'x' } })).rejects.toThrow(
      /Unrecognized key/,
    );
    await expect(followSmsCampaign(ctx, { campaign_id: 'abc' })).rejects.toThrow(
      'invalid SMS campaign follow input: campaign_id must be a uuid',
    );
  });
});
