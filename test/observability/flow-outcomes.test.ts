// Every final status of every flow means an outcome in the metrics (src/shared/flow-metrics.ts): a new
// final status that the outcome table does not know fails here, before a dashboard silently misses it.
import { flowOutcomeOf } from '../../src/shared/flow-metrics';
import { CARD_FINAL_STATUSES } from '../../src/shared/card-payment';
import { DIRECT_FINAL_STATUSES } from '../../src/shared/payment-common';
import { FINAL_MANDATE_STATUSES } from '../../src/shared/mandate';
import { FINAL_STATUSES } from '../../src/shared/payment-common';
import { POS_PREAUTH_FINAL_STATUSES } from '../../src/shared/pos-preauth';
import { POS_REFUND_FINAL_STATUSES } from '../../src/shared/pos-refund';
import { POS_REMOTE_FINAL_STATUSES } from '../../src/shared/pos-remote';
import { POS_TRANSACTION_FINAL_STATUSES } from '../../src/shared/pos-terminal';
import { VEND_FINAL_STATUSES } from '../../src/shared/vending';
import { SMS_CAMPAIGN_FINAL_STATUSES, SMS_SEND_FINAL_STATUSES } from '../../src/shared/sms';

const FINALS: Record<string, readonly string[]> = {
  card: [...CARD_FINAL_STATUSES, 'outcome_unknown'],
  bank: [...DIRECT_FINAL_STATUSES, 'outcome_unknown'],
  ussd: [...DIRECT_FINAL_STATUSES, 'outcome_unknown'],
  checkout: [...FINAL_STATUSES, 'outcome_unknown'],
  recurring: [...FINAL_STATUSES, 'outcome_unknown'],
  mandate: FINAL_MANDATE_STATUSES,
  'pos-preauth': [...POS_PREAUTH_FINAL_STATUSES, 'outcome_unknown'],
  'pos-refund': [...POS_REFUND_FINAL_STATUSES, 'outcome_unknown'],
  'pos-remote': POS_REMOTE_FINAL_STATUSES,
  'pos-terminal': [...POS_TRANSACTION_FINAL_STATUSES, 'outcome_unknown'],
  vend: [...VEND_FINAL_STATUSES, 'outcome_unknown'],
  'virtual-account-credit': ['credited', 'duplicate'],
  'sms-send': SMS_SEND_FINAL_STATUSES,
  'sms-campaign': SMS_CAMPAIGN_FINAL_STATUSES,
};

describe('every final status of every flow means an outcome in the metrics', () => {
  it.each(Object.entries(FINALS))('%s: every final status has an outcome', (flow, finals) => {
    expect(finals.filter((s) => flowOutcomeOf(flow, s) === undefined)).toEqual([]);
  });

  it('reads money outcomes as they are meant, and leaves statuses under way and non-payment flows alone', () => {
    expect(flowOutcomeOf('card', 'success')).toBe('succeeded');
    expect(flowOutcomeOf('pos-terminal', 'approved')).toBe('succeeded');
    expect(flowOutcomeOf('pos-remote', 'success_after_cancel')).toBe('succeeded');
    expect(flowOutcomeOf('pos-preauth', 'lapsed')).toBe('failed');
    expect(flowOutcomeOf('pos-remote', 'create_outcome_unknown')).toBe('outcome_unknown');
    expect(flowOutcomeOf('virtual-account-credit', 'duplicate')).toBe('duplicate');
    expect(flowOutcomeOf('mandate', 'approved')).toBeUndefined(); // a mandate approved is not money yet
    expect(flowOutcomeOf('card', 'awaiting_otp')).toBeUndefined();
    expect(flowOutcomeOf('pos-terminal-lock', 'held')).toBeUndefined();
    expect(flowOutcomeOf('unmatched-webhook', 'released')).toBeUndefined();
    expect(flowOutcomeOf('reconciliation-mark', 'failed')).toBeUndefined();
    expect(flowOutcomeOf('sms-send', 'constructor')).toBeUndefined();
  });
});
