// POS fixtures (suite-specific; the general helpers are in test/support): a valid F3 input, the
// ordering rule "every F3 after the first is immediately preceded by an F4 that answered 404", and
// waiting for a pre-authorisation's state.
import type { WorkflowHandle } from '@temporalio/client';
import type { ClaimCheckStore } from '../../src/claim-check/store';
import { posPreAuthStateQuery, type PosPreAuthState, type PosPreAuthStatus } from '../../src/shared/pos-preauth';
import type { PosSealedTransactionInput, PosStep, PosTransactionInput } from '../../src/shared/pos-terminal';
import { eventually } from '../support/polling';

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
        throw new Error(
          `merchant_ref ${ref}: initiate #${initiates} was not preceded by a 404 requery (previous: ${JSON.stringify(prev)})`,
        );
      }
    });
  }
}

/** The same rule over a workflow's own step record. */
export function stepsToCalls(merchantRef: string, steps: PosStep[]): CallRecord[] {
  return steps.flatMap((s): CallRecord[] =>
    s.op === 'initiate'
      ? [{ op: 'initiate', merchantRef }]
      : s.op === 'requery'
        ? [{ op: 'requery', merchantRef, answer: s.outcome }]
        : [],
  );
}

/** A workflow input with the card sealed: a claim-check-shaped handle (the scripted activities need no store) and display data. */
export function sealedCardInput(
  merchantRef: string,
  over: Partial<PosSealedTransactionInput> = {},
  handle = `cc_${'A'.repeat(22)}`,
): PosSealedTransactionInput {
  const {
    card_pan,
    card_expiry_month,
    card_expiry_year,
    cardholder_name,
    card_sequence_number,
    track2,
    chipdata,
    pin_block,
    ...rest
  } = cardInput(merchantRef);
  void [card_expiry_month, card_expiry_year, cardholder_name, card_sequence_number, track2, chipdata, pin_block];
  return { ...rest, card: { handle, bin: card_pan.slice(0, 6), last4: card_pan.slice(-4) }, ...over };
}

/** For activities of flows that seal nothing (E1/E2, vending): any use of the claim-check store fails the test. */
export const unusedClaimCheck = new Proxy({} as ClaimCheckStore, {
  get: (_t, prop) => {
    throw new Error(`this flow seals nothing, yet the claim-check store's ${String(prop)} was used`);
  },
});

/** Reads the pre-authorisation's state until it is `status` (up to 30 s), asserts that it is, and returns it. */
export async function preAuthReaches(
  h: Pick<WorkflowHandle, 'query'>,
  status: PosPreAuthStatus,
): Promise<PosPreAuthState> {
  const state = await eventually(
    () => h.query(posPreAuthStateQuery),
    (s) => s.status === status,
    { timeoutMs: 30_000, intervalMs: 50, description: `pre-auth status ${status}`, returnLastOnTimeout: true },
  );
  expect(state.status).toBe(status);
  return state;
}
