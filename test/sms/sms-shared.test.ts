// The SMS rules the workflows and starters share: per-message checks, batching, matching an
// answer to its numbers, exact cost sums, input rules naming the field.
import {
  SmsCampaignInputSchema,
  SmsSendInputSchema,
  addDecimals,
  checkSmsMessages,
  countSmsResults,
  matchSmsBatch,
  planSmsBatches,
  smsPhoneKey,
  smsScheduleIssues,
  smsSendOverallStatus,
  toDecimalString,
  type SmsEntry,
} from '../../src/shared/sms';
import { describeInputIssues, inputIssuesOf } from '../../src/shared/input-error';

const entry = (index: number, phone: string, message = 'hi'): SmsEntry => ({
  index,
  phone_number: phone,
  message,
  key: smsPhoneKey(phone),
});
const issues = (r: { success: boolean; error?: Parameters<typeof inputIssuesOf>[0] }) =>
  r.success ? '' : describeInputIssues(inputIssuesOf(r.error!));

describe("checking a send's numbers", () => {
  it('keeps the good entries, names each bad one with its field and rule, sends an exact repeat once', () => {
    const r = checkSmsMessages([
      { phone_number: '2348012345678', message: 'a' },
      { phone_number: '0801-234', message: 'b' },
      { phone_number: '2348012345679' },
      'not an object',
      { phone_number: '+2348012345678', message: 'a' },
      { phone_number: '2348012345678', message: 'another text' },
    ]);
    expect(r.valid.map((e) => e.index)).toEqual([0, 5]);
    expect(r.rejected).toEqual([
      {
        index: 1,
        phone_number: '0801-234',
        status: 'invalid',
        error: 'messages[1].phone_number must be a phone number: 7 to 15 digits, optionally after a leading +',
      },
      { index: 2, phone_number: '2348012345679', status: 'invalid', error: 'messages[2].message is required' },
      { index: 3, status: 'invalid', error: 'messages[3] must be an object {phone_number, message}' },
      {
        index: 4,
        phone_number: '+2348012345678',
        status: 'duplicate',
        error: 'same phone_number and message as messages[0]: sent once only',
      },
    ]);
    expect(r.issues.map((i) => i.field)).toEqual(['messages.1.phone_number', 'messages.2.message', 'messages.3']);
  });

  it('matches numbers by their last 10 digits (country code, + or leading 0 aside)', () => {
    expect(smsPhoneKey('+2348012345678')).toBe('8012345678');
    expect(smsPhoneKey('08012345678')).toBe('8012345678');
    expect(smsPhoneKey('1234567')).toBe('1234567');
  });
});

describe('splitting a send into batches', () => {
  it('splits in input order within the size and never puts one number twice in a batch', () => {
    const list = Array.from({ length: 7 }, (_, i) => entry(i, `23480100000${String(i).padStart(2, '0')}`));
    expect(planSmsBatches(list, 3).map((b) => b.map((e) => e.index))).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    const same = [entry(0, '2348012345678', 'a'), entry(1, '08012345678', 'b'), entry(2, '2348099999999', 'c')];
    const batches = planSmsBatches(same, 10);
    expect(batches.map((b) => b.map((e) => e.index))).toEqual([[0, 2], [1]]);
  });
});

describe("reading each number's outcome from a batch answer", () => {
  const entries = [entry(0, '2348011111111'), entry(1, '2348022222222'), entry(2, '2348033333333')];
  it('sent, failed with the service text, and unnamed numbers as outcome_unknown', () => {
    const m = matchSmsBatch(2, entries, {
      batch_id: 'B1',
      sent: [{ phone_number: '+2348011111111', status: 'SENT', cost: '4', transaction_id: 'T1' }],
      errors: [
        { phone_number: '2348022222222', error: 'Message could not be delivered' },
        { error: 'something general' },
      ],
      total_cost: '4',
      currency: 'NGN',
    });
    expect(m.results).toEqual([
      {
        index: 0,
        phone_number: '2348011111111',
        status: 'sent',
        batch: 2,
        cost: '4',
        transaction_id: 'T1',
        service_status: 'SENT',
      },
      {
        index: 1,
        phone_number: '2348022222222',
        status: 'failed',
        batch: 2,
        error: 'the service did not send it: Message could not be delivered',
      },
      {
        index: 2,
        phone_number: '2348033333333',
        status: 'outcome_unknown',
        batch: 2,
        error: expect.stringContaining('without naming this number'),
      },
    ]);
    expect(m.unmatchedErrors).toEqual(['something general']);
    expect(m.unmatchedSent).toBe(0);
  });
});

describe('costs', () => {
  it('adds decimal strings exactly (never as floats)', () => {
    expect(addDecimals('0.1', '0.2')).toBe('0.30');
    expect(['0.1', '0.2', '0.3'].reduce(addDecimals, '0')).toBe('0.60');
    expect(addDecimals('4', '12.125')).toBe('16.125');
    expect(addDecimals('-1.5', '1')).toBe('-0.50');
    expect(toDecimalString(4)).toBe('4');
    expect(toDecimalString(1e-7)).toBe('0.0000001');
    expect(toDecimalString('2.50')).toBe('2.50');
    expect(toDecimalString('abc')).toBeUndefined();
    expect(toDecimalString(Number.NaN)).toBeUndefined();
  });
});

describe('overall status', () => {
  it('sent / partially_sent / not_sent / outcome_unknown', () => {
    const r = (s: 'sent' | 'failed' | 'outcome_unknown') => ({ index: 0, status: s });
    expect(smsSendOverallStatus(countSmsResults([r('sent'), r('sent')]))).toBe('sent');
    expect(smsSendOverallStatus(countSmsResults([r('sent'), r('failed')]))).toBe('partially_sent');
    expect(smsSendOverallStatus(countSmsResults([r('failed')]))).toBe('not_sent');
    expect(smsSendOverallStatus(countSmsResults([r('failed'), r('outcome_unknown')]))).toBe('outcome_unknown');
  });
});

describe('input rules name the field and the rule', () => {
  it('send', () => {
    expect(issues(SmsSendInputSchema.safeParse({ reference: 'r1', messages: [{}] }))).toBe('sender_id is required');
    expect(issues(SmsSendInputSchema.safeParse({ reference: 'r 1', sender_id: 'S', messages: [] }))).toBe(
      'reference must be 1 to 100 letters, digits, "_", "-" or "."; messages must contain at least one message',
    );
    expect(
      issues(SmsSendInputSchema.safeParse({ reference: 'r1', sender_id: 'S', messages: new Array(1001).fill({}) })),
    ).toContain('messages must hold at most 1000 messages per send');
    expect(
      issues(
        SmsSendInputSchema.safeParse({ reference: 'r1', sender_id: 'S', messages: [{}], options: { batchSize: 0 } }),
      ),
    ).toBe('options.batchSize must be at least 1');
  });
  it('campaign, with the spec field sscheduled_dor', () => {
    const c = {
      name: 'Nov',
      bucket_id: '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d10',
      sender_id: 'S',
      is_scheduled: true,
      template_id: '7d5a2c0e-2b7a-4d7e-9c1e-0f4a8b6c2d11',
    };
    expect(issues(SmsCampaignInputSchema.safeParse({ reference: 'c1', campaign: c }))).toBe(
      'campaign.sscheduled_dor is required when is_scheduled is true',
    );
    expect(
      issues(
        SmsCampaignInputSchema.safeParse({ reference: 'c1', campaign: { ...c, sscheduled_dor: '2026-12-01 09:00' } }),
      ),
    ).toBe('campaign.sscheduled_dor must be an ISO 8601 date-time with a zone, e.g. 2026-12-01T09:00:00Z');
    expect(
      issues(
        SmsCampaignInputSchema.safeParse({
          reference: 'c1',
          campaign: { ...c, bucket_id: 'b', is_scheduled: 'yes', sscheduled_dor: '2026-12-01T09:00:00Z' },
        }),
      ),
    ).toBe('campaign.bucket_id must be a uuid; campaign.is_scheduled must be a boolean');
    expect(
      SmsCampaignInputSchema.safeParse({
        reference: 'c1',
        campaign: { ...c, sscheduled_dor: '2026-12-01T09:00:00+01:00' },
      }).success,
    ).toBe(true);
    expect(
      smsScheduleIssues(
        { is_scheduled: true, sscheduled_dor: '2020-01-01T00:00:00Z' },
        Date.parse('2021-01-01T00:00:00Z'),
      ),
    ).toEqual([{ field: 'campaign.sscheduled_dor', rule: 'must be in the future when is_scheduled is true' }]);
  });
});
