// Our side of mandate debits in reconciliation (src/activities/reconciliation-mandates.ts): which
// debit a debit-shaped reference is, when it is one the flow never made, and which of the flow's
// debits the service must list. The whole activity runs against the stack in reconciliation-e2e.
import type { WorkflowHandle } from '@temporalio/client';
import {
  ObservedDebitPool,
  debitSide,
  debitsToFind,
  readMandateDebits,
  type KeptDebits,
} from '../../src/activities/reconciliation-mandates';
import { mandateDebitsQuery, type MandateDebit, type MandateState } from '../../src/shared/mandate';

const debit = (over: Partial<MandateDebit>): MandateDebit => ({
  sequence: 1,
  reference: 'M1-D1',
  amount: 20_000,
  status: 'success',
  kind: 'scheduled',
  at: '2027-01-10T10:00:00.000Z',
  ...over,
});

const kept = (debits: MandateDebit[], lastSequence: number, partial = false): KeptDebits => ({
  debits,
  lastSequence,
  partial,
});

describe('a debit-shaped reference listed by the service', () => {
  const flow = kept(
    [
      debit({}),
      debit({ sequence: 2, reference: 'M1-Kabc', kind: 'requested' }),
      debit({ sequence: 3, reference: 'M1-D3' }),
    ],
    3,
  );

  it('is the debit the flow keeps under it (any of them, not only the recent ones)', () => {
    expect(debitSide('M1-D3', flow)).toEqual({ debit: flow.debits[2] });
    expect(debitSide('M1-Kabc', flow)).toEqual({ debit: flow.debits[1] });
  });

  it('names no debit when its number is past the last one the flow made, or the flow used that number for another reference', () => {
    expect(debitSide('M1-D9', flow)).toEqual({ neverMade: 'the mandate flow never made debit 9 (its last is 3)' });
    expect(debitSide('M1-D2', flow)).toEqual({
      neverMade: "the mandate flow's debit 2 is M1-Kabc, not this reference",
    });
  });

  it('is not guessed when the flow no longer keeps it, or answered only with its state', () => {
    const older = kept([debit({ sequence: 600, reference: 'M1-D600' })], 600);
    expect(debitSide('M1-D5', older)).toEqual({ notComparable: 'mandate debit not among the debits its flow keeps' });
    expect(debitSide('M1-Kzzz', flow)).toEqual({ notComparable: 'mandate debit not among the debits its flow keeps' });
    expect(debitSide('M1-D9', kept(flow.debits, 0, true))).toEqual({
      notComparable: 'mandate debit not among the debits its flow keeps',
    });
  });
});

describe("the flow's debits the service must list", () => {
  it('are its successes in the window; observed FIXED debits are apart (no reference of the service to look up)', () => {
    const from = Date.parse('2027-01-10T00:00:00Z');
    const until = Date.parse('2027-01-11T00:00:00Z');
    const debits = [
      debit({ reference: 'in' }),
      debit({ reference: 'failed', status: 'failed' }),
      debit({ reference: 'parked', status: 'outcome_unknown' }),
      debit({ reference: 'before', at: '2027-01-09T23:59:59.999Z' }),
      debit({ reference: 'after', at: '2027-01-11T00:00:00.000Z' }),
      debit({ reference: 'M1-F1', kind: 'observed' }),
    ];
    const { sent, observed } = debitsToFind(debits, from, until);
    expect(sent.map((d) => d.reference)).toEqual(['in']);
    expect(observed.map((d) => d.reference)).toEqual(['M1-F1']);
  });
});

describe("a service row no flow carries, and a FIXED mandate's observed debits", () => {
  const observed = (over: Partial<MandateDebit>) =>
    debit({
      kind: 'observed',
      confirmedBy: 'observed',
      reference: 'M1-F1',
      amount: 100_000,
      scheduledFor: '2027-01-10',
      at: '2027-01-11T00:00:00.000Z',
      ...over,
    });
  const row = (over: Partial<{ status: string; amount: number; merchantAmount: number; createdAt: string }>) => ({
    reference: 'SQ-own-1',
    status: 'success',
    amount: 100_000,
    createdAt: '2027-01-10T08:00:00Z',
    ...over,
  });

  it('stands for the observed debit of its amount, created from its date to the day it was seen; each debit once', () => {
    const first = observed({});
    const pool = new ObservedDebitPool([first, debit({}), observed({ reference: 'M1-F2', status: 'failed' })]);
    expect(pool.take(row({ amount: 90_000 }))).toBeUndefined();
    expect(pool.take(row({ createdAt: '2027-01-09T23:00:00Z' }))).toBeUndefined(); // before its date
    expect(pool.take(row({ createdAt: '2027-01-12T01:00:00Z' }))).toBeUndefined(); // after it was seen
    expect(pool.take(row({ status: 'failed' }))).toBeUndefined(); // no money
    expect(pool.has(first)).toBe(true);
    expect(pool.take(row({ createdAt: '2027-01-11T00:00:00Z' }))).toBe(first);
    expect(pool.has(first)).toBe(false);
    expect(pool.take(row({}))).toBeUndefined(); // taken: a second row of the same amount is not it
  });

  it('matches by merchant_amount too, and never a sent debit or a failed observed date', () => {
    const pool = new ObservedDebitPool([debit({ amount: 100_000 }), observed({ status: 'failed' })]);
    expect(pool.take(row({}))).toBeUndefined();
    const byMerchantAmount = new ObservedDebitPool([observed({})]);
    expect(byMerchantAmount.take(row({ amount: 101_500, merchantAmount: 100_000 }))?.reference).toBe('M1-F1');
  });
});

describe('reading what a mandate flow keeps', () => {
  it("asks mandateDebits; a flow that cannot answer it gives its state's recent and unresolved debits, marked partial", async () => {
    const all = { debits: [debit({})], lastSequence: 1 };
    const answering = { query: async () => all } as unknown as WorkflowHandle;
    await expect(readMandateDebits(answering)).resolves.toEqual({ ...all, partial: false });

    const asked: string[] = [];
    const state = { recentDebits: [debit({})], unresolvedDebits: [debit({ sequence: 2, reference: 'M1-D2' })] };
    const older = {
      query: async (q: { name: string }) => {
        asked.push(q.name);
        if (q.name === mandateDebitsQuery.name) throw new Error('unknown queryType mandateDebits');
        return state as unknown as MandateState;
      },
    } as unknown as WorkflowHandle;
    await expect(readMandateDebits(older)).resolves.toEqual({
      debits: [...state.recentDebits, ...state.unresolvedDebits],
      lastSequence: 0,
      partial: true,
    });
    expect(asked).toEqual(['mandateDebits', 'mandateState']);
  });
});
