// Reconciliation of mandate debits (docs/flows-reconciliation.md, "Mandate debits"): a debit has no
// flow of its own, so our side of it is what its mandate flow keeps. Both directions:
//  - a service row under a debit-shaped reference (`<mandate>-D<n>`, `-K<digest>`): the debit the
//    flow keeps (every one it keeps, not only the state's recent ones), or, for a `-D<n>` the flow
//    never made (past its last sequence, or a sequence it used under another reference), no debit
//    at all: money there is money no flow of ours tracks;
//  - a debit the flow recorded as success in the window that the service does not list. Observed
//    FIXED debits (the service's own, named by us) cannot be looked up by reference: a service row
//    no flow carries is matched with one by amount and day instead (ObservedDebitPool).
import type { WorkflowHandle } from '@temporalio/client';
import { mandateDebitsQuery, mandateStateQuery, type MandateDebit, type MandateDebitsAnswer } from '../shared/mandate';
import { serviceOutcome, type ServiceTransaction } from '../shared/reconciliation';

/** A mandate debit's reference: `<mandate>-D<sequence>` (scheduled) or `<mandate>-K<digest>` (on demand). */
export const MANDATE_DEBIT_REF = /^(.+)-(?:D(\d+)|K[0-9a-z]+)$/;

/** What a mandate flow keeps; partial: only its state's recent and unresolved debits (a flow that cannot answer mandateDebits). */
export type KeptDebits = MandateDebitsAnswer & { partial: boolean };

/** The debits a mandate flow keeps: its mandateDebits query, else its state's recent and unresolved debits. */
export async function readMandateDebits(handle: WorkflowHandle): Promise<KeptDebits> {
  try {
    return { ...(await handle.query(mandateDebitsQuery)), partial: false };
  } catch {
    const s = await handle.query(mandateStateQuery);
    return { debits: [...s.recentDebits, ...s.unresolvedDebits], lastSequence: 0, partial: true };
  }
}

/** Our side of one debit-shaped reference, from what its mandate flow keeps. */
export type DebitSide = { debit: MandateDebit } | { neverMade: string } | { notComparable: string };

export function debitSide(reference: string, kept: KeptDebits): DebitSide {
  const debit = kept.debits.find((d) => d.reference === reference);
  if (debit) return { debit };
  const n = Number(MANDATE_DEBIT_REF.exec(reference)?.[2] ?? NaN);
  if (Number.isSafeInteger(n) && !kept.partial) {
    if (n > kept.lastSequence)
      return { neverMade: `the mandate flow never made debit ${n} (its last is ${kept.lastSequence})` };
    const other = kept.debits.find((d) => d.sequence === n);
    if (other) return { neverMade: `the mandate flow's debit ${n} is ${other.reference}, not this reference` };
  }
  return { notComparable: 'mandate debit not among the debits its flow keeps' };
}

/** Our debits that say money moved in [fromMs, untilMs): the service must list each under its reference. */
export function debitsToFind(
  debits: readonly MandateDebit[],
  fromMs: number,
  untilMs: number,
): { sent: MandateDebit[]; observed: MandateDebit[] } {
  const inWindow = debits.filter((d) => {
    const at = Date.parse(d.at);
    return d.status === 'success' && at >= fromMs && at < untilMs;
  });
  return {
    sent: inWindow.filter((d) => d.kind !== 'observed'),
    observed: inWindow.filter((d) => d.kind === 'observed'),
  };
}

/**
 * The observed FIXED debits of the mandates a window reads, to match with service rows that no flow
 * carries: the service lists its own debits under references of its own, which the mandate lookup does not show. A
 * row stands for an observed debit when it shows money of the debit's amount, created on a day from
 * the debit's date to the day the flow saw it; each debit stands for one row at most.
 */
export class ObservedDebitPool {
  private readonly open: MandateDebit[];

  constructor(debits: readonly MandateDebit[]) {
    this.open = debits.filter((d) => d.kind === 'observed' && d.status === 'success' && d.scheduledFor);
  }

  /** The observed debit `row` stands for (taken from the pool), or undefined. */
  take(row: ServiceTransaction): MandateDebit | undefined {
    const created = row.createdAt ? Date.parse(row.createdAt) : NaN;
    if (serviceOutcome(row.status ?? '') !== 'money' || Number.isNaN(created)) return undefined;
    const day = new Date(created).toISOString().slice(0, 10);
    const i = this.open.findIndex(
      (d) =>
        (row.amount === d.amount || row.merchantAmount === d.amount) &&
        day >= d.scheduledFor! &&
        day <= d.at.slice(0, 10),
    );
    return i < 0 ? undefined : this.open.splice(i, 1)[0];
  }

  /** Whether `debit` is still unmatched. */
  has(debit: MandateDebit): boolean {
    return this.open.includes(debit);
  }
}
