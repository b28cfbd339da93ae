// G. SMS: messages (G1), campaigns (G2-G4), templates (G5-G8).
import { z } from 'zod';
import {
  anyData,
  countedRows,
  dayWindow,
  finiteNumber,
  opt,
  phoneNumber,
  requiredOr,
  requiredString,
  sortedPaging,
  uuidString,
} from './common';

const dir = z.enum(['DSC', 'ASC'], { error: 'must be DSC or ASC (as the spec writes them)' });

export const SmsSendRequestSchema = z.strictObject({
  sender_id: requiredString(),
  messages: z
    .array(z.strictObject({ phone_number: phoneNumber, message: requiredString() }), {
      error: requiredOr('must be an array of {phone_number, message}'),
    })
    .min(1, 'must contain at least one message'),
});
export type SmsSendRequest = z.input<typeof SmsSendRequestSchema>;

export const SmsSendDetailsSchema = z.looseObject({
  batch_id: opt(z.string()),
  sent: z.array(
    z.looseObject({
      phone_number: opt(z.string()),
      status: opt(z.string()),
      cost: opt(finiteNumber),
      transaction_id: opt(z.string()),
    }),
  ),
  errors: opt(z.array(z.unknown())),
  total_cost: opt(finiteNumber),
  currency: opt(z.string()),
});

/** The outer `data` carries `success`, `message` and the send result in `data`. */
export const SmsSendResultSchema = z.looseObject({
  success: opt(z.boolean()),
  message: opt(z.string()),
  data: SmsSendDetailsSchema,
});
export type SmsSendResult = z.output<typeof SmsSendResultSchema>;

export const SmsCampaignCreateRequestSchema = z.strictObject({
  name: requiredString(),
  bucket_id: uuidString,
  sender_id: requiredString(),
  is_scheduled: z.boolean({ error: requiredOr('must be a boolean') }),
  /** Spelled so by the spec (probably "scheduled_for"); format not stated. Sent under this key. */
  sscheduled_dor: z.string({ error: requiredOr('must be a string') }),
  template_id: requiredString(),
});
export type SmsCampaignCreateRequest = z.input<typeof SmsCampaignCreateRequestSchema>;

export const SmsCampaignSchema = z.looseObject({
  uuid: z.string(),
  name: opt(z.string()),
  cost: opt(z.union([z.string(), z.number()])),
  scheduled_for: opt(z.string()),
  status: opt(z.string()),
  merchant_id: opt(z.string()),
  createdAt: opt(z.string()),
  updatedAt: opt(z.string()),
  bucket_id: opt(z.string()),
  sender_id: opt(z.string()),
  template_id: opt(z.string()),
});
export type SmsCampaign = z.output<typeof SmsCampaignSchema>;

export const SmsCampaignListRequestSchema = z.strictObject({
  ...sortedPaging,
  status: z.enum(['pending', 'failed', 'success'], { error: 'must be pending, failed or success' }).optional(),
  name: z.string().min(1).optional(),
  dir: dir.optional(),
  ...dayWindow,
});
export type SmsCampaignListRequest = z.input<typeof SmsCampaignListRequestSchema>;

export const SmsCampaignListItemSchema = z.looseObject({
  id: z.union([z.string(), z.number()]),
  name: opt(z.string()),
  client_id: opt(z.union([z.string(), z.number()])),
  template_id: opt(z.string()),
  bucket_id: opt(z.string()),
  total: opt(z.union([z.string(), z.number()])),
  created_at: opt(z.string()),
  created_by: opt(z.union([z.string(), z.number()])),
});
export type SmsCampaignListItem = z.output<typeof SmsCampaignListItemSchema>;

export const SmsCampaignPageSchema = z.looseObject({
  items: z.array(SmsCampaignListItemSchema),
  total: z.number().int(),
});
export type SmsCampaignPage = z.output<typeof SmsCampaignPageSchema>;

export const SmsIdRequestSchema = z.strictObject({ id: uuidString });
export type SmsIdRequest = z.input<typeof SmsIdRequestSchema>;

/** Deleting a campaign (G4): response body not shown. */
export const SmsDeleteResultSchema = anyData;
export type SmsDeleteResult = z.output<typeof SmsDeleteResultSchema>;

export const SmsTemplateCreateRequestSchema = z.strictObject({
  name: requiredString(),
  description: requiredString(),
  message: requiredString(),
});
export type SmsTemplateCreateRequest = z.input<typeof SmsTemplateCreateRequestSchema>;

export const SmsTemplateSchema = z.looseObject({
  uuid: z.string(),
  merchant_id: opt(z.string()),
  name: opt(z.string()),
  description: opt(z.string()),
  pages: opt(z.number().int()),
  message: opt(z.string()),
  createdAt: opt(z.string()),
  updatedAt: opt(z.string()),
});
export type SmsTemplate = z.output<typeof SmsTemplateSchema>;

export const SmsTemplateListRequestSchema = z.strictObject({ ...sortedPaging, dir: dir.optional(), ...dayWindow });
export type SmsTemplateListRequest = z.input<typeof SmsTemplateListRequestSchema>;

export const SmsTemplatePageSchema = countedRows(SmsTemplateSchema);
export type SmsTemplatePage = z.output<typeof SmsTemplatePageSchema>;

/** Updating a template (G7): body fields not shown; the sample carries name, description and file_name. */
const templateChange = z.string().min(1, 'must not be empty').optional();
const TEMPLATE_CHANGES = ['name', 'description', 'message', 'file_name'] as const;
export const SmsTemplateUpdateRequestSchema = z
  .strictObject({
    id: uuidString,
    name: templateChange,
    description: templateChange,
    message: templateChange,
    file_name: templateChange,
  })
  .refine((v) => TEMPLATE_CHANGES.some((k) => v[k] !== undefined), {
    message: `must change at least one of ${TEMPLATE_CHANGES.join(', ')}`,
  });
export type SmsTemplateUpdateRequest = z.input<typeof SmsTemplateUpdateRequestSchema>;
