// Typed starters for SMS (G1-G8).
//
//   instant send (G1)        → smsSendWorkflow (workflow id `sms-send-<reference>`)
//   campaign + follow (G2)   → smsCampaignWorkflow (`sms-campaign-<reference>`)
//   follow by uuid           → smsCampaignFollowWorkflow (`sms-campaign-follow-<uuid>`)
//   list and delete campaigns (G3, G4), templates (G5-G8): direct calls through the API client (they
//   move no money and need no durable state), like the mandate listing.
//
// Every input is checked with zod first; a broken rule throws StarterInputError naming the
// field and the rule (never the value), and nothing is started or sent.
import type { WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import {
  SmsCampaignListRequestSchema,
  SmsTemplateListRequestSchema,
  type OperationData,
  type SmsCampaignListRequest,
  type SmsTemplate,
  type SmsTemplateListRequest,
} from '../api';
import { uuidString } from '../api/schemas/common';
import {
  SMS_MAX_MESSAGE_LENGTH,
  SmsCampaignFollowInputSchema,
  SmsCampaignInputSchema,
  SmsSendInputSchema,
  checkSmsMessages,
  smsCampaignFollowWorkflowId,
  smsCampaignWorkflowId,
  smsScheduleIssues,
  smsSendWorkflowId,
  type SmsCampaignFollowInput,
  type SmsCampaignInput,
  type SmsCampaignResult,
  type SmsSendInput,
} from '../shared/sms';
import type { StarterContext } from './connect';
import { handleFor, runToResult, startFlow } from './start-flow';
import type { smsCampaignFollowWorkflow, smsCampaignWorkflow, smsSendWorkflow } from '../workflows/sms';
import { StarterInputError, parseStarterInput, type InputIssue } from '../shared/input-error';

/**
 * The input as its schema reads it, refused as the schema refuses (the same StarterInputError, under the
 * same name) when it breaks a rule the schema cannot see: nothing is started.
 */
function parseSmsInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  what: string,
  moreIssues: (v: z.output<S>) => InputIssue[],
): z.output<S> {
  const v = parseStarterInput(schema, input, what);
  const issues = moreIssues(v);
  if (issues.length > 0) throw new StarterInputError(what, issues);
  return v;
}

// ---- Instant send (G1) -------------------------------------------------------------------------

/**
 * Starts one instant send (workflow id `sms-send-<reference>`; a second start for the same
 * reference is refused, so a retried call never sends twice). Bad entries are reported per number
 * in the result unless `options.invalidMessages` is 'refuse' (then they refuse the whole send here).
 */
export async function startSmsSend(
  ctx: StarterContext,
  input: SmsSendInput,
): Promise<WorkflowHandle<typeof smsSendWorkflow>> {
  const v = parseSmsInput(SmsSendInputSchema, input, 'SMS send', (s) =>
    s.options?.invalidMessages === 'refuse' ? checkSmsMessages(s.messages).issues : [],
  );
  return startFlow<typeof smsSendWorkflow>(ctx, {
    operation: 'start SMS send',
    workflowType: 'smsSendWorkflow',
    workflowId: smsSendWorkflowId(v.reference),
    args: [input],
    search: { flow: 'sms-send', reference: v.reference, status: 'validating' },
  });
}

export const smsSendHandle = handleFor<typeof smsSendWorkflow>(smsSendWorkflowId);

export const runSmsSend = runToResult(startSmsSend);

// ---- Campaign, followed (G2) --------------------------------------------------------------------

/**
 * Creates a campaign and follows it until success or failed (workflow id
 * `sms-campaign-<reference>`, one campaign per reference). A scheduled send time must lie ahead.
 */
export async function startSmsCampaign(
  ctx: StarterContext,
  input: SmsCampaignInput,
  now: () => number = Date.now,
): Promise<WorkflowHandle<typeof smsCampaignWorkflow>> {
  const v = parseSmsInput(SmsCampaignInputSchema, input, 'SMS campaign', (c) => smsScheduleIssues(c.campaign, now()));
  return startFlow<typeof smsCampaignWorkflow>(ctx, {
    operation: 'start SMS campaign',
    workflowType: 'smsCampaignWorkflow',
    workflowId: smsCampaignWorkflowId(v.reference),
    args: [input],
    search: { flow: 'sms-campaign', reference: v.reference, status: 'validating' },
  });
}

export const smsCampaignHandle = handleFor<typeof smsCampaignWorkflow>(smsCampaignWorkflowId);

export async function runSmsCampaign(ctx: StarterContext, input: SmsCampaignInput): Promise<SmsCampaignResult> {
  return (await startSmsCampaign(ctx, input)).result();
}

/**
 * Follows an existing campaign by uuid (workflow id `sms-campaign-follow-<uuid>`). While one
 * follower runs, a second call returns it; a finished one (e.g. still_pending) may be started again.
 */
export async function followSmsCampaign(
  ctx: StarterContext,
  input: SmsCampaignFollowInput,
): Promise<WorkflowHandle<typeof smsCampaignFollowWorkflow>> {
  const v = parseStarterInput(SmsCampaignFollowInputSchema, input, 'SMS campaign follow');
  return startFlow<typeof smsCampaignFollowWorkflow>(ctx, {
    operation: 'follow SMS campaign',
    workflowType: 'smsCampaignFollowWorkflow',
    workflowId: smsCampaignFollowWorkflowId(v.campaign_id),
    args: [input],
    search: { flow: 'sms-campaign', reference: v.campaign_id.toLowerCase(), status: 'following' },
    policies: { workflowIdReusePolicy: 'ALLOW_DUPLICATE', workflowIdConflictPolicy: 'USE_EXISTING' },
  });
}

export const smsCampaignFollowHandle = handleFor<typeof smsCampaignFollowWorkflow>(smsCampaignFollowWorkflowId);

// ---- Campaigns (G3/G4), templates (G5-G8): direct calls ----------------------------------------

const text = (max: number) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`);

export const SmsIdInputSchema = z.strictObject({ id: uuidString });

/** A new template's body (G5): the spec's three required strings. */
export const SmsTemplateCreateInputSchema = z.strictObject({
  name: text(200),
  description: text(500),
  message: text(SMS_MAX_MESSAGE_LENGTH),
});
export type SmsTemplateCreateInput = z.input<typeof SmsTemplateCreateInputSchema>;

/** A template update's body (G7; fields not shown in the spec; the sample carries name, description and file_name; message is taken too). */
export const SmsTemplateUpdateInputSchema = z
  .strictObject({
    id: uuidString,
    name: text(200).optional(),
    description: text(500).optional(),
    message: text(SMS_MAX_MESSAGE_LENGTH).optional(),
    file_name: text(200).optional(),
  })
  .refine(
    (v) => v.name !== undefined || v.description !== undefined || v.message !== undefined || v.file_name !== undefined,
    {
      message: 'must change at least one of name, description, message, file_name',
    },
  );
export type SmsTemplateUpdateInput = z.input<typeof SmsTemplateUpdateInputSchema>;

export type SmsTemplatePage = OperationData<'sms.listTemplates'>;
export type SmsCampaignPage = OperationData<'sms.listCampaigns'>;

/** Creates a template (G5). */
export async function createSmsTemplate(
  ctx: Pick<StarterContext, 'api'>,
  input: SmsTemplateCreateInput,
): Promise<SmsTemplate> {
  return (await ctx.api.sms.createTemplate(parseStarterInput(SmsTemplateCreateInputSchema, input, 'SMS template')))
    .data;
}

/** Lists templates (G6; page, perPage, sorted_by, dir DSC/ASC, date_from, date_to). */
export async function listSmsTemplates(
  ctx: Pick<StarterContext, 'api'>,
  filters: SmsTemplateListRequest = {},
): Promise<SmsTemplatePage> {
  return (
    await ctx.api.sms.listTemplates(parseStarterInput(SmsTemplateListRequestSchema, filters, 'SMS template list'))
  ).data;
}

/** Updates a template (G7). A 404 (unknown id) throws the client's NotFoundError. */
export async function updateSmsTemplate(
  ctx: Pick<StarterContext, 'api'>,
  input: SmsTemplateUpdateInput,
): Promise<SmsTemplate> {
  return (
    await ctx.api.sms.updateTemplate(parseStarterInput(SmsTemplateUpdateInputSchema, input, 'SMS template update'))
  ).data;
}

/** Deletes a template (G8). */
export async function deleteSmsTemplate(ctx: Pick<StarterContext, 'api'>, id: string): Promise<void> {
  await ctx.api.sms.deleteTemplate(parseStarterInput(SmsIdInputSchema, { id }, 'SMS template delete'));
}

/** Lists campaigns (G3; page, perPage, sorted_by, status, name, dir, date_from, date_to). Items carry no status: filter by it. */
export async function listSmsCampaigns(
  ctx: Pick<StarterContext, 'api'>,
  filters: SmsCampaignListRequest = {},
): Promise<SmsCampaignPage> {
  return (
    await ctx.api.sms.listCampaigns(parseStarterInput(SmsCampaignListRequestSchema, filters, 'SMS campaign list'))
  ).data;
}

/** Deletes a campaign (G4). A follower of this campaign then ends not_found. */
export async function deleteSmsCampaign(ctx: Pick<StarterContext, 'api'>, id: string): Promise<void> {
  await ctx.api.sms.deleteCampaign(parseStarterInput(SmsIdInputSchema, { id }, 'SMS campaign delete'));
}
