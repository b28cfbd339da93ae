// One vocabulary of final statuses (src/shared/final-statuses.ts): every flow's list picks from it,
// and tsc refuses a word outside it or outside the flow's own statuses (the @ts-expect-error lines
// below fail the type check the day they stop being errors).
import {
  FINAL_STATUS_MEANINGS,
  finalStatusMeaning,
  pickFinal,
  type FinalStatusWord,
} from '../../src/shared/final-statuses';
import { CARD_FINAL_STATUSES } from '../../src/shared/card-payment';
import { DIRECT_FINAL_STATUSES, FINAL_STATUSES } from '../../src/shared/payment-common';
import { FINAL_MANDATE_STATUSES } from '../../src/shared/mandate';
import { POS_PREAUTH_FINAL_STATUSES } from '../../src/shared/pos-preauth';
import { POS_REFUND_FINAL_STATUSES } from '../../src/shared/pos-refund';
import { POS_REMOTE_FINAL_STATUSES } from '../../src/shared/pos-remote';
import { POS_TRANSACTION_FINAL_STATUSES } from '../../src/shared/pos-terminal';
import { VEND_FINAL_STATUSES, type VendStatus } from '../../src/shared/vending';
import { SMS_CAMPAIGN_FINAL_STATUSES, SMS_SEND_FINAL_STATUSES } from '../../src/shared/sms';

const LISTS: Record<string, readonly string[]> = {
  FINAL_STATUSES,
  CARD_FINAL_STATUSES,
  DIRECT_FINAL_STATUSES,
  FINAL_MANDATE_STATUSES,
  POS_PREAUTH_FINAL_STATUSES,
  POS_REFUND_FINAL_STATUSES,
  POS_REMOTE_FINAL_STATUSES,
  POS_TRANSACTION_FINAL_STATUSES,
  VEND_FINAL_STATUSES,
  SMS_CAMPAIGN_FINAL_STATUSES,
  SMS_SEND_FINAL_STATUSES,
};

describe('the final statuses', () => {
  it.each(Object.entries(LISTS))('%s names only words of the vocabulary', (_name, list) => {
    expect(list.filter((status) => finalStatusMeaning(status) === undefined)).toEqual([]);
  });

  it('every word of the vocabulary ends some flow (no word kept for nobody)', () => {
    const used = new Set(Object.values(LISTS).flat());
    const unused = (Object.keys(FINAL_STATUS_MEANINGS) as FinalStatusWord[]).filter((word) => !used.has(word));
    // credited: the virtual-account credit's result (src/shared/virtual-account-credit.ts) has no list.
    expect(unused).toEqual(['credited']);
  });

  it('means nothing for a word under way, or one that only looks like a key', () => {
    expect(finalStatusMeaning('awaiting_otp')).toBeUndefined();
    expect(finalStatusMeaning('constructor')).toBeUndefined();
    expect(finalStatusMeaning('not_vended')).toBe('failed');
  });

  it('refuses, at compile time, a word outside the vocabulary or outside the flow', () => {
    // @ts-expect-error 'paid' is no final status of the vocabulary
    const outside = pickFinal(['vended', 'paid']);
    // @ts-expect-error 'approved' is a final status, but no status of a vend
    const notTheFlows: readonly VendStatus[] = pickFinal(['vended', 'approved']);
    expect([outside, notTheFlows].every((list) => list.length === 2)).toBe(true);
  });
});
