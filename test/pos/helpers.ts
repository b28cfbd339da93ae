// Shared helpers for the POS tests: a valid F3 input, and the ordering rule
// "every F3 after the first is immediately preceded by an F4 that answered 404".
import type { PosStep, PosTransactionInput } from '../../src/shared/pos';

/** A well-formed F3 input (card fields as the merchant's device would read them). */
export function cardInput(merchantRef: string, over: Partial<PosTransactionInput> = {}): PosTransactionInput {
  return {
    terminal_id: 'TERM0001',
    amount: 150000,
    currency: 'NGN',
    card_pan: '5399830000000008',
    card_expiry_month: '12',
    card_expiry_year: '29',
    card_type: 'MasterCard',
    cardholder_name: 'ADA OBI',
    card_sequence_number: '001',
    track2: '5399830000000008D2912201000000000F',
    chipdata: '9F2608A1B2C3D4E5F60718',
    aid: '4F07A0000000041010',
    pin_block: '0123456789ABCDEF',
    transaction_type: 'Purchase',
    account_type: 'DEFAULT',
    merchant_ref: merchantRef,
    ...over,
  };
}

export type CallRecord =
  | { op: 'initiate'; merchantRef: string }
  | { op: 'requery'; merchantRef: string; answer: 'found' | 'not_found' | 'error' };

/**
 * Throws unless every initiate after the first for a merchant_ref comes right after a requery
 * of that merchant_ref that answered not_found (nothing else in between for that reference).
 */
export function assertNoRetryWithoutRequery(calls: CallRecord[]): void {
  const byRef = new Map<string, CallRecord[]>();
  for (const c of calls) byRef.set(c.merchantRef, [...(byRef.get(c.merchantRef) ?? []), c]);
  for (const [ref, seq] of byRef) {
    let initiates = 0;
    seq.forEach((c, i) => {
      if (c.op !== 'initiate') return;
      initiates += 1;
      if (initiates === 1) return;
      const prev = seq[i - 1];
      if (!prev || prev.op !== 'requery' || prev.answer !== 'not_found') {
        throw new Error(`merchant_ref ${ref}: initiate #${initiates} was not preceded by a 404 requery (previous: ${JSON.stringify(prev)})`);
      }
    });
  }
}

/** The same rule over a workflow's own step record. */
export function stepsToCalls(merchantRef: string, steps: PosStep[]): CallRecord[] {
  return steps.map((s) =>
    s.op === 'initiate' ? { op: 'initiate', merchantRef } : { op: 'requery', merchantRef, answer: s.outcome },
  );
}
