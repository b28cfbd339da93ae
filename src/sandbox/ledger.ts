// The ledger: one entry per money movement the sandbox performed. Tests read it
// (`GET /__admin/ledger`, `sandbox.ledger()`) to check that a payment happened exactly once,
// whatever the caller saw (a dropped response, a retry, a duplicate webhook).
import { randomUUID } from 'node:crypto';
import type { SandboxClock } from './clock';

export type LedgerKind =
  | 'card_charge' // B1/B2 direct card
  | 'bank_debit' // B3/B4 direct bank account debit
  | 'ussd' // B5 direct USSD
  | 'checkout' // A1 hosted checkout, any channel (card, bank, ussd, transfer via A2)
  | 'token_charge' // A4 charge with a token
  | 'mandate_debit' // D3
  | 'pos_remote' // E1/E2 approved by the terminal
  | 'pos_sale' // F3 Purchase or Completion approved
  | 'pos_refund' // F3 Refund approved
  | 'vend' // H3
  | 'va_credit'; // C9 simulated credit into a virtual account

export const LEDGER_KINDS: readonly LedgerKind[] = [
  'card_charge',
  'bank_debit',
  'ussd',
  'checkout',
  'token_charge',
  'mandate_debit',
  'pos_remote',
  'pos_sale',
  'pos_refund',
  'vend',
  'va_credit',
];

export interface LedgerEntry {
  id: string;
  kind: LedgerKind;
  reference: string;
  /** Lowest unit (kobo) for card, bank, POS and mandate amounts; the spec's decimal string for vending and virtual accounts. */
  amount: number | string;
  currency: string;
  at: string;
}

export class Ledger {
  private entries: LedgerEntry[] = [];

  constructor(private readonly clock: SandboxClock) {}

  record(kind: LedgerKind, reference: string, amount: number | string, currency: string): LedgerEntry {
    const entry: LedgerEntry = { id: randomUUID(), kind, reference, amount, currency, at: this.clock.iso() };
    this.entries.push(entry);
    return entry;
  }

  list(filter: { reference?: string | null; kind?: string | null } = {}): LedgerEntry[] {
    return this.entries
      .filter(
        (e) => (!filter.reference || e.reference === filter.reference) && (!filter.kind || e.kind === filter.kind),
      )
      .map((e) => ({ ...e }));
  }

  clear(): void {
    this.entries = [];
  }
}
