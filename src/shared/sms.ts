// SMS as workflows, starters and tests see it: inputs, results, states and queries,
// defined once.
//
//   smsSendWorkflow            instant send of a list (G1): checked one message at a time, batched
//                              within the service's limit, each batch sent ONCE; per-number result
//   smsCampaignWorkflow        create (G2, once; a lost answer is searched in the campaign list by name, never
//                              created again) and follow the campaign's status (G3) until success
//                              or failed; a scheduled campaign waits durably for its time
//   smsCampaignFollowWorkflow  follow an existing campaign by its uuid (G3)
//
// Templates (G5-G8), the campaign list (G3) and its delete (G4) move no money and need no workflow:
// src/starters/sms.ts calls them through the API client. See docs/flows-sms.md.
//
// Phone numbers are personal data: they appear in workflow inputs and results (encrypted by the
// payload codec) and nowhere else: no search attribute, no log line, not in the state query.
import { defineQuery } from '@temporalio/workflow';
import type { z } from 'zod';
import { flowReference, inputIssuesOf, required, requiredText, type InputIssue } from './input-error';
import { lazy, type Zod } from './lazy';
import { durationField, durationMs } from './duration';
import type { OutcomeResolution } from './outcome';
import { merchantEventTargetSchema } from './merchant-event';
import { pickFinal } from './final-statuses';

// ---- Limits (the spec shows none for SMS: docs/choices.md) -----------------------------------

/** Messages per send request. The spec shows no limit; the sandbox refuses more than 100. */
export const SMS_DEFAULT_BATCH_SIZE = 100;
/** The largest batchSize an input may ask for (a larger batch than the service takes is refused by it: 400). */
export const SMS_MAX_BATCH_SIZE = 1000;
/** Messages per send workflow: keeps the input and the result well under Temporal's 2 MB payload limit. */
export const SMS_MAX_MESSAGES = 1000;
/** Characters per message (6 concatenated GSM parts of 153). */
export const SMS_MAX_MESSAGE_LENGTH = 918;
/** The API client's phone-number rule (src/api/schemas/sms.ts). */
export const SMS_PHONE_PATTERN = /^\+?\d{7,15}$/;
export const SMS_PHONE_RULE = 'must be a phone number: 7 to 15 digits, optionally after a leading +';
const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** ISO 8601 date-time with a zone (Z or ±hh:mm): the flow must know the instant to wait for. */
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
export const SMS_SCHEDULE_RULE = 'must be an ISO 8601 date-time with a zone, e.g. 2026-12-01T09:00:00Z';

// ---- Field rules -----------------------------------------------------------------------------

const duration = lazy('sms.duration', (z) => durationField(z, true, '"2s", "5 minutes" or "1 day"'));
export type SmsDuration = z.infer<typeof duration>;

/** '2s', '500ms', '1 minute', '2 days' or milliseconds → milliseconds (the one duration reader). */
export const smsDurationMs = (d: SmsDuration): number => durationMs(d);

/** A whole number from `min` to `max` (options: deadlines, reads, resends). */
const wholeIn = (z: Zod, min: number, max: number) =>
  z
    .number()
    .int()
    .min(min, min === 0 ? 'must not be negative' : `must be at least ${min}`)
    .max(max, `must be at most ${max}`);
const uuid = lazy('sms.uuid', (z) => z.string(required('a uuid')).regex(UUID_PATTERN, 'must be a uuid'));
const isoWithZone = lazy('sms.isoWithZone', (z) =>
  z
    .string(required('a date-time string'))
    .regex(ISO_WITH_ZONE, SMS_SCHEDULE_RULE)
    .refine((v) => !Number.isNaN(Date.parse(v)), SMS_SCHEDULE_RULE),
);

export const SmsMessageSchema = lazy('sms.SmsMessageSchema', (z) =>
  z.strictObject(
    {
      phone_number: z.string(required('a phone number string')).regex(SMS_PHONE_PATTERN, SMS_PHONE_RULE),
      message: z
        .string(required('a string'))
        .min(1, 'must not be empty')
        .max(SMS_MAX_MESSAGE_LENGTH, `must be at most ${SMS_MAX_MESSAGE_LENGTH} characters`),
    },
    { error: 'must be an object {phone_number, message}' },
  ),
);
export type SmsMessage = z.output<typeof SmsMessageSchema>;

// ---- Instant send (G1) --------------------------------------------------------------------------

export const SmsSendInputSchema = lazy('sms.SmsSendInputSchema', (z) =>
  z.strictObject({
    /** The merchant's own reference for this send. Workflow id `sms-send-<reference>`: one send per reference. */
    reference: flowReference,
    /** `sender_id`: the merchant's sender id. */
    sender_id: requiredText(z, 'the sender id', 100),
    /** `messages`: [{phone_number, message}]. Each entry is checked on its own (see invalidMessages). */
    messages: z
      .array(z.unknown(), required('an array of {phone_number, message}'))
      .min(1, 'must contain at least one message')
      .max(
        SMS_MAX_MESSAGES,
        `must hold at most ${SMS_MAX_MESSAGES} messages per send; split a larger list over several references`,
      ),
    /** Where this flow's events go (docs/events.md); the starter resolves it. */
    notify: merchantEventTargetSchema.optional(),
    options: z
      .strictObject({
        /** Messages per send request. Default 100. */
        batchSize: z
          .number()
          .int('must be a whole number')
          .min(1, 'must be at least 1')
          .max(SMS_MAX_BATCH_SIZE, `must be at most ${SMS_MAX_BATCH_SIZE}`)
          .optional(),
        /** 'skip' (default): a bad entry is reported as invalid and the others are sent. 'refuse': any bad entry refuses the whole send. */
        invalidMessages: z.enum(['skip', 'refuse'], { error: 'must be skip or refuse' }).optional(),
        /** Deadline of one send call (ms). Default 30000. */
        sendTimeoutMs: wholeIn(z, 100, 300_000).optional(),
        /** Resends of a batch whose request provably never left (connection refused). Default 2. Never after a lost answer. */
        notSentRetries: wholeIn(z, 0, 5).optional(),
        /** Wait before such a resend. Default 2s. */
        retryBackoff: duration.optional(),
      })
      .optional(),
  }),
);
export type SmsSendInput = z.input<typeof SmsSendInputSchema>;
export type SmsSendParsedInput = z.output<typeof SmsSendInputSchema>;

export const smsSendWorkflowId = (reference: string): string => `sms-send-${reference}`;

/** One message that passed its rules, with its position in the input. */
export interface SmsEntry {
  index: number;
  phone_number: string;
  message: string;
  /** The number as batches and answers are matched on (digits, the last 10 when longer). */
  key: string;
}

export type SmsNumberStatus =
  /** In the service's `sent` list. */
  | 'sent'
  /** Not sent: the service named the number in `errors`, or refused the whole batch (4xx). */
  | 'failed'
  /** Broke a rule before anything was sent (the error names the field and the rule). */
  | 'invalid'
  /** The same phone number and message as an earlier entry: sent once only. */
  | 'duplicate'
  /** Provably never reached the service (or skipped after the service refused the key). */
  | 'not_sent'
  /** The batch's answer was lost (timeout, reset, 5xx, a worker lost mid-call) or did not name the number: it may have been sent. Never resent automatically. */
  | 'outcome_unknown';

export interface SmsNumberResult {
  /** Position in the input's `messages`. */
  index: number;
  /** As given (absent when the entry had none). */
  phone_number?: string;
  status: SmsNumberStatus;
  /** 1-based batch number (entries that were batched). */
  batch?: number;
  /** Decimal string, as the service gave it (sent only). */
  cost?: string;
  transaction_id?: string;
  /** The service's status for the number (e.g. SENT). */
  service_status?: string;
  /** Why it was not sent, or why its outcome is unknown. */
  error?: string;
}

/** The number's matching key: digits only; the last 10 when longer (a country code or a leading 0 does not matter). */
export function smsPhoneKey(phone: string): string {
  const digits = phone.replace(/\D/g, '');
  return digits.length > 10 ? digits.slice(-10) : digits;
}

/**
 * Checks each entry on its own: a bad entry becomes an `invalid` result naming the field and the
 * rule (`messages[3].phone_number must be …`), an exact repeat (same number, same text) a
 * `duplicate`; the others are returned to be sent.
 */
export function checkSmsMessages(messages: readonly unknown[]): {
  valid: SmsEntry[];
  rejected: SmsNumberResult[];
  issues: InputIssue[];
} {
  const valid: SmsEntry[] = [];
  const rejected: SmsNumberResult[] = [];
  const issues: InputIssue[] = [];
  const firstSeen = new Map<string, number>();
  messages.forEach((raw, index) => {
    const parsed = SmsMessageSchema.safeParse(raw);
    const given =
      raw && typeof raw === 'object' && typeof (raw as { phone_number?: unknown }).phone_number === 'string'
        ? (raw as { phone_number: string }).phone_number
        : undefined;
    if (!parsed.success) {
      const mine = inputIssuesOf(parsed.error, '').map((i) => ({
        field: i.field ? `messages.${index}.${i.field}` : `messages.${index}`,
        rule: i.rule,
      }));
      issues.push(...mine);
      rejected.push({
        index,
        ...(given !== undefined ? { phone_number: given } : {}),
        status: 'invalid',
        error: mine.map((i) => `${i.field.replace(/^messages\.(\d+)/, 'messages[$1]')} ${i.rule}`).join('; '),
      });
      return;
    }
    const key = smsPhoneKey(parsed.data.phone_number);
    const dupKey = `${key}\u0000${parsed.data.message}`;
    const first = firstSeen.get(dupKey);
    if (first !== undefined) {
      rejected.push({
        index,
        phone_number: parsed.data.phone_number,
        status: 'duplicate',
        error: `same phone_number and message as messages[${first}]: sent once only`,
      });
      return;
    }
    firstSeen.set(dupKey, index);
    valid.push({ index, phone_number: parsed.data.phone_number, message: parsed.data.message, key });
  });
  return { valid, rejected, issues };
}

/**
 * Splits the entries into batches of at most `size`, in input order, never with the same number
 * twice in one batch (so each answer line names exactly one entry).
 */
export function planSmsBatches(entries: readonly SmsEntry[], size: number): SmsEntry[][] {
  const batches: { entries: SmsEntry[]; keys: Set<string> }[] = [];
  let firstOpen = 0;
  for (const e of entries) {
    while (firstOpen < batches.length && batches[firstOpen].entries.length >= size) firstOpen++;
    let target = batches.slice(firstOpen).find((b) => b.entries.length < size && !b.keys.has(e.key));
    if (!target) {
      target = { entries: [], keys: new Set() };
      batches.push(target);
    }
    target.entries.push(e);
    target.keys.add(e.key);
  }
  return batches.map((b) => b.entries);
}

/** A send answer as the flow keeps it (costs as decimal strings). */
export interface SmsBatchAnswer {
  batch_id?: string;
  success?: boolean;
  message?: string;
  sent: { phone_number: string; status?: string; cost?: string; transaction_id?: string }[];
  /** The spec types `errors` as an array without its shape: the number and the text when the item carries them. */
  errors: { phone_number?: string; error: string }[];
  total_cost?: string;
  currency?: string;
}

/** Places a batch's answer on its entries: `sent`, `errors`, and what the answer did not name. */
export function matchSmsBatch(
  batch: number,
  entries: readonly SmsEntry[],
  answer: SmsBatchAnswer,
): { results: SmsNumberResult[]; unmatchedErrors: string[]; unmatchedSent: number } {
  const sentBy = new Map<string, SmsBatchAnswer['sent'][number]>();
  let unmatchedSent = 0;
  const keys = new Set(entries.map((e) => e.key));
  for (const s of answer.sent) {
    const k = smsPhoneKey(s.phone_number);
    if (keys.has(k) && !sentBy.has(k)) sentBy.set(k, s);
    else unmatchedSent++;
  }
  const errorBy = new Map<string, string>();
  const unmatchedErrors: string[] = [];
  for (const e of answer.errors) {
    const k = e.phone_number !== undefined ? smsPhoneKey(e.phone_number) : undefined;
    if (k !== undefined && keys.has(k) && !errorBy.has(k) && !sentBy.has(k)) errorBy.set(k, e.error);
    else unmatchedErrors.push(e.error);
  }
  const results = entries.map((e): SmsNumberResult => {
    const line = (status: SmsNumberStatus, rest: Partial<SmsNumberResult>): SmsNumberResult => ({
      index: e.index,
      phone_number: e.phone_number,
      status,
      batch,
      ...rest,
    });
    const s = sentBy.get(e.key);
    if (s)
      return line('sent', {
        ...(s.cost !== undefined ? { cost: s.cost } : {}),
        ...(s.transaction_id !== undefined ? { transaction_id: s.transaction_id } : {}),
        ...(s.status !== undefined ? { service_status: s.status } : {}),
      });
    const err = errorBy.get(e.key);
    if (err !== undefined) return line('failed', { error: `the service did not send it: ${err}` });
    return line('outcome_unknown', {
      error: `the service answered batch ${batch}${answer.batch_id ? ` (${answer.batch_id})` : ''} without naming this number in sent or errors; not resent`,
    });
  });
  return { results, unmatchedErrors, unmatchedSent };
}

// ---- Exact decimal sums (costs are never added as floats) -------------------------------------

/** A cost as a decimal string: numbers are written out in full (never exponent notation); anything else is undefined. */
export function toDecimalString(v: unknown): string | undefined {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return undefined;
    const s = String(v);
    if (!/e/i.test(s)) return s;
    return v
      .toFixed(20)
      .replace(/(\.\d*?)0+$/, '$1')
      .replace(/\.$/, '');
  }
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim())) return v.trim();
  return undefined;
}

function scaled(d: string): { n: bigint; scale: number } {
  const neg = d.startsWith('-');
  const [int, frac = ''] = (neg ? d.slice(1) : d).split('.');
  const n = BigInt(`${int}${frac}` || '0');
  return { n: neg ? -n : n, scale: frac.length };
}

/** a + b over decimal strings, exactly; the result has at least 2 decimals. */
export function addDecimals(a: string, b: string): string {
  const x = scaled(a);
  const y = scaled(b);
  const scale = Math.max(x.scale, y.scale, 2);
  const sum = x.n * 10n ** BigInt(scale - x.scale) + y.n * 10n ** BigInt(scale - y.scale);
  const neg = sum < 0n;
  const digits = (neg ? -sum : sum).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

// ---- Send state and result -------------------------------------------------------------------

export type SmsSendStatus = 'validating' | 'sending' | 'sent' | 'partially_sent' | 'not_sent' | 'outcome_unknown';
/**
 * Final statuses: `sent` every number sent; `partially_sent` some sent, others not or unknown;
 * `not_sent` none sent and none unknown; `outcome_unknown` none proven sent, some unknown.
 */
export const SMS_SEND_FINAL_STATUSES: readonly SmsSendStatus[] = pickFinal([
  'sent',
  'partially_sent',
  'not_sent',
  'outcome_unknown',
]);

export type SmsBatchOutcome =
  | 'waiting'
  | 'sending'
  /** The service answered: see the numbers. */
  | 'answered'
  /** 4xx: the service refused the batch; nothing in it was sent. */
  | 'refused'
  /** The request provably never left (after the allowed resends). */
  | 'not_sent'
  /** The answer was lost: every number in it is outcome_unknown; never resent. */
  | 'outcome_unknown'
  /** Not attempted: an earlier batch was refused for the key (401/403), or the send was cancelled. */
  | 'skipped';

export interface SmsBatchRecord {
  batch: number;
  size: number;
  /** Send requests made for this batch (more than 1 only after a "never left" failure). */
  attempts: number;
  outcome: SmsBatchOutcome;
  batch_id?: string;
  total_cost?: string;
  currency?: string;
  /** The failure type or the service's message. */
  detail?: string;
  /** Error lines the answer carried without a number of this batch. */
  unmatched_errors?: string[];
  /** Sent lines that named no number of this batch. */
  unmatched_sent?: number;
}

export interface SmsSendCounts {
  total: number;
  sent: number;
  failed: number;
  invalid: number;
  duplicate: number;
  not_sent: number;
  outcome_unknown: number;
}

/** The query's view: counts and batches, no phone numbers. */
export interface SmsSendState {
  reference: string;
  status: SmsSendStatus;
  batchSize: number;
  batches: SmsBatchRecord[];
  counts: SmsSendCounts;
  /** Sum of the answered batches' total_cost, per currency (decimal strings). */
  costByCurrency: Record<string, string>;
  /** The workflow was cancelled: the batch in flight was let finish, the later ones are not_sent. */
  cancelRequested?: boolean;
  /** Set when an operator resolved the numbers whose outcome was unknown (resolveOutcome). */
  resolution?: OutcomeResolution;
}

/** What an operator may say of a parked send's outcome_unknown numbers (resolveOutcome). */
export const SMS_SEND_RESOLVE_OUTCOMES = ['sent', 'failed'] as const;

export interface SmsSendResult extends SmsSendState {
  status: 'sent' | 'partially_sent' | 'not_sent' | 'outcome_unknown';
  message: string;
  /** One line per input entry, in input order. */
  numbers: SmsNumberResult[];
  /** The total when all batches answered in one currency. */
  totalCost?: string;
  currency?: string;
}

export function countSmsResults(numbers: readonly SmsNumberResult[]): SmsSendCounts {
  const c: SmsSendCounts = {
    total: numbers.length,
    sent: 0,
    failed: 0,
    invalid: 0,
    duplicate: 0,
    not_sent: 0,
    outcome_unknown: 0,
  };
  for (const n of numbers) c[n.status]++;
  return c;
}

export function smsSendOverallStatus(c: SmsSendCounts): SmsSendResult['status'] {
  if (c.sent === c.total) return 'sent';
  if (c.sent > 0) return 'partially_sent';
  return c.outcome_unknown > 0 ? 'outcome_unknown' : 'not_sent';
}

export const smsSendStateQuery = defineQuery<SmsSendState>('smsSendState');

// ---- Campaigns (G2/G3) -------------------------------------------------------------------------

/** The campaign create's body, with the spec's field names (`sscheduled_dor` included, spelled as the spec spells it). */
export const SmsCampaignCreateSchema = lazy('sms.SmsCampaignCreateSchema', (z) =>
  z
    .strictObject({
      name: requiredText(z, 'the campaign name', 200),
      bucket_id: uuid,
      sender_id: requiredText(z, 'the sender id', 100),
      is_scheduled: z.boolean(required('a boolean')),
      /** The send time when is_scheduled (required then); sent unchanged. When not scheduled and absent, the flow sends the creation time. */
      sscheduled_dor: isoWithZone.optional(),
      template_id: uuid,
    })
    .superRefine((v, ctx) => {
      if (v.is_scheduled && v.sscheduled_dor === undefined)
        ctx.addIssue({ code: 'custom', path: ['sscheduled_dor'], message: 'is required when is_scheduled is true' });
    }),
);
export type SmsCampaignCreate = z.input<typeof SmsCampaignCreateSchema>;

const campaignOptions = lazy('sms.campaignOptions', (z) =>
  z
    .strictObject({
      /** First wait between campaign-list reads while the campaign is pending. Default 30s. */
      pollInterval: duration.optional(),
      /** The wait doubles up to this. Default 5 minutes. */
      maxPollInterval: duration.optional(),
      /** How long a pending campaign is followed after its send time (or the start) before the flow ends still_pending. Default 24 hours. */
      followFor: duration.optional(),
      /** While waiting for a scheduled time, check this often that the campaign still exists. Default 6 hours. */
      scheduledCheckEvery: duration.optional(),
      /** Consecutive campaign-list reads that do not list the campaign before it is taken as deleted (not_found). Default 3. */
      missingReads: wholeIn(z, 1, 10).optional(),
      /** After the create's answer was lost: campaign-list reads by name looking for the new campaign. Default 3. */
      lostCreateReads: wholeIn(z, 1, 10).optional(),
      /** Wait before each of those reads. Default 5s. */
      lostCreateSettle: duration.optional(),
      /** Deadline of the create call (ms). Default 30000. */
      createTimeoutMs: wholeIn(z, 100, 300_000).optional(),
      /** The campaign list's perPage. Default 100. */
      pageSize: wholeIn(z, 1, 100).optional(),
      /** Resends of a create that provably never left. Default 2. */
      notSentRetries: wholeIn(z, 0, 5).optional(),
      /** Wait before such a resend. Default 2s. */
      retryBackoff: duration.optional(),
    })
    .optional(),
);
export type SmsCampaignOptions = z.input<typeof campaignOptions>;

export const SmsCampaignInputSchema = lazy('sms.SmsCampaignInputSchema', (z) =>
  z.strictObject({
    /** The merchant's own reference for this campaign. Workflow id `sms-campaign-<reference>`: one campaign per reference. */
    reference: flowReference,
    campaign: SmsCampaignCreateSchema,
    /** Where this flow's events go (docs/events.md); the starter resolves it. */
    notify: merchantEventTargetSchema.optional(),
    options: campaignOptions,
  }),
);
export type SmsCampaignInput = z.input<typeof SmsCampaignInputSchema>;

export const SmsCampaignFollowInputSchema = lazy('sms.SmsCampaignFollowInputSchema', (z) =>
  z.strictObject({
    /** The campaign's uuid (the create's `uuid`, the list's `id`). Workflow id `sms-campaign-follow-<uuid>`. */
    campaign_id: uuid,
    /** Its name, when known: the list reads then filter by name. */
    name: requiredText(z, 'the campaign name', 200).optional(),
    /** Its send time (the create's `scheduled_for`), when known: the flow waits for it before polling. */
    scheduled_for: isoWithZone.optional(),
    /** Where this flow's events go (docs/events.md); the starter resolves it. */
    notify: merchantEventTargetSchema.optional(),
    options: campaignOptions,
  }),
);
export type SmsCampaignFollowInput = z.input<typeof SmsCampaignFollowInputSchema>;

export const smsCampaignWorkflowId = (reference: string): string => `sms-campaign-${reference}`;
export const smsCampaignFollowWorkflowId = (campaignId: string): string =>
  `sms-campaign-follow-${campaignId.toLowerCase()}`;

/** Starter-only rule (it needs the current time): a scheduled send time must lie ahead. */
export function smsScheduleIssues(
  c: { is_scheduled?: boolean; sscheduled_dor?: string },
  nowMs: number,
  field = 'campaign.sscheduled_dor',
): InputIssue[] {
  if (!c.is_scheduled || c.sscheduled_dor === undefined) return [];
  const at = Date.parse(c.sscheduled_dor);
  return !Number.isNaN(at) && at <= nowMs ? [{ field, rule: 'must be in the future when is_scheduled is true' }] : [];
}

/** Campaign status values (spec: pending on creation, failed, success). */
export const SMS_CAMPAIGN_SERVICE_STATUSES = ['success', 'failed', 'pending'] as const;
export type SmsCampaignServiceStatus = (typeof SMS_CAMPAIGN_SERVICE_STATUSES)[number];

export type SmsCampaignStatus =
  | 'validating'
  | 'creating'
  /** The create's answer was lost: looking for the campaign in the list by name. */
  | 'searching'
  /** Waiting durably for the scheduled send time. */
  | 'scheduled'
  /** Reading the campaign list until success or failed. */
  | 'following'
  | 'success'
  | 'failed'
  /** The create was refused (4xx) or never left: no campaign was created. */
  | 'rejected'
  /** The campaign was no longer listed (deleted). */
  | 'not_found'
  /** Still pending when followFor ran out: follow it again later. */
  | 'still_pending'
  /** The create's answer was lost and the list did not show one new campaign by that name: it may exist. Never created again. */
  | 'outcome_unknown';

export const SMS_CAMPAIGN_FINAL_STATUSES: readonly SmsCampaignStatus[] = pickFinal([
  'success',
  'failed',
  'rejected',
  'not_found',
  'still_pending',
  'outcome_unknown',
]);

export type SmsCampaignStep =
  | { op: 'create'; attempt: number; outcome: 'created' | 'refused' | 'not_sent' | 'unknown'; detail?: string }
  | { op: 'search'; read: number; outcome: 'found' | 'not_found' | 'ambiguous' | 'error'; detail?: string }
  | { op: 'poll'; outcome: SmsCampaignServiceStatus | 'not_listed' | 'error'; at: string; detail?: string };

/** What the create answered (the campaign resource). */
export interface SmsCampaignRecord {
  uuid: string;
  name?: string;
  status?: string;
  scheduled_for?: string;
  cost?: string;
  bucket_id?: string;
  sender_id?: string;
  template_id?: string;
  createdAt?: string;
}

export interface SmsCampaignState {
  /** The merchant's reference (create flows). */
  reference?: string;
  campaignId?: string;
  name?: string;
  status: SmsCampaignStatus;
  /** The instant the flow waits for (ISO), when scheduled. */
  scheduledFor?: string;
  /** Campaign-list polls so far. */
  polls: number;
  /** The latest status the list showed. */
  serviceStatus?: SmsCampaignServiceStatus;
  lastPolledAt?: string;
  /** Create and search steps, and the latest polls (older polls are counted in `polls` only). */
  steps: SmsCampaignStep[];
  /** The workflow was cancelled (a create in flight is let finish; following stops). */
  cancelRequested?: boolean;
  /** Set when an operator resolved a campaign whose create answer was lost (resolveOutcome). */
  resolution?: OutcomeResolution;
}

/** What an operator may say of a campaign parked after a lost create answer (rejected: it was never created). */
export const SMS_CAMPAIGN_RESOLVE_OUTCOMES = ['success', 'failed', 'rejected'] as const;

export interface SmsCampaignResult extends SmsCampaignState {
  status: 'success' | 'failed' | 'rejected' | 'not_found' | 'still_pending' | 'outcome_unknown';
  message: string;
  campaign?: SmsCampaignRecord;
}

export const smsCampaignStateQuery = defineQuery<SmsCampaignState>('smsCampaignState');

/** The campaign list read for one campaign: listed under which status filter, or not listed at all. */
export type SmsCampaignLookup = { found: true; status: SmsCampaignServiceStatus } | { found: false };
