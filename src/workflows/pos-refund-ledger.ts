// The refund ledger of one sale (`pos-refunds-<original merchant_ref>`): the durable running total
// of its refunds, so two refunds of one sale can never together return more than it took.
//
// A refund reserves its amount here (the reserveRefund Update, sent by the refund flow's activity)
// before its transaction send (F3) is sent; the Update's validator refuses a reservation over what is left
// (sale amount − approved refunds − refunds still reserved) and nothing reaches history then.
// Reservations are serialised by the workflow, so concurrent refunds cannot both pass. The refund
// flow settles its reservation when its outcome is known (settleRefund): approved keeps the
// amount as refunded; anything that proved no money moved releases it; an unknown outcome keeps
// it reserved (held back) until the refund flow learns the outcome.
//
// The ledger never completes (a refund may come months after the sale); it continues-as-new when
// its history grows, carrying its entries. The service keeps the same rule (the sandbox refuses
// a refund over the refundable balance), so this is the flows' own guard, not the only one.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  PosRefundLedgerInputSchema,
  ledgerTotals,
  openRefundLedgerSignal,
  refundLedgerStateQuery,
  reserveRefundUpdate,
  settleRefundSignal,
  type PosRefundLedgerInput,
  type RefundLedgerEntry,
  type RefundLedgerState,
  type RefundReservation,
} from '../shared/pos-refund';
import { paymentSearchAttributes } from '../shared/search-attributes';

/**
 * Before it, a released refund reserved again kept its first amount (docs/operations.md, "Patches in
 * use"): the ledger held, and on approval counted, that amount instead of the one granted.
 */
const REFUND_REASKED_AMOUNT_PATCH = 'pos-refund-ledger-reasked-amount';

/** Continue-as-new past this many history events (or when the server suggests it). */
const HISTORY_LIMIT = 2_000;

export async function posRefundLedgerWorkflow(raw: PosRefundLedgerInput): Promise<void> {
  const ledger = new PosRefundLedger(raw);
  ledger.listen();
  await ledger.run();
}

type Reserve = { merchant_ref: string; amount: number };
type Settle = { merchant_ref: string; amount: number; outcome: 'approved' | 'released' };

/** One run of a sale's refund ledger (a continue-as-new carries its entries to the next). */
class PosRefundLedger {
  // --- state ---

  private readonly input: ReturnType<typeof PosRefundLedgerInputSchema.parse>;
  private readonly entries: RefundLedgerEntry[];

  constructor(raw: PosRefundLedgerInput) {
    this.input = PosRefundLedgerInputSchema.parse(raw);
    this.entries = this.input.entries.map((e) => ({ ...e }));
  }

  // --- handlers ---

  listen(): void {
    setHandler(refundLedgerStateQuery, () => this.snapshot());
    setHandler(openRefundLedgerSignal, () => undefined);
    setHandler(reserveRefundUpdate, (req) => this.reserve(req), { validator: (req) => this.checkReserve(req) });
    setHandler(settleRefundSignal, (req) => this.settle(req));
  }

  /** reserveRefund: the amount held for the refund (an activity retry of the same refund gets what it was granted). */
  private reserve({ merchant_ref, amount }: Reserve): RefundReservation {
    const { sale_amount } = this.input;
    const existing = this.find(merchant_ref);
    const before = ledgerTotals(sale_amount, this.entries, merchant_ref).remaining;
    if (existing && existing.status !== 'released') {
      // The same refund asking again (an activity retry): what it was granted.
      return {
        merchantRef: merchant_ref,
        amount: existing.amount,
        saleAmount: sale_amount,
        remainingBefore: before,
        remainingAfter: before - existing.amount,
      };
    }
    if (existing) {
      existing.status = 'reserved';
      // A released refund that comes back (its request refused or never sent) may ask another amount: it holds what it
      // asks now.
      if (patched(REFUND_REASKED_AMOUNT_PATCH)) existing.amount = amount;
    } else this.entries.push({ merchantRef: merchant_ref, amount, status: 'reserved' });
    this.publish();
    return {
      merchantRef: merchant_ref,
      amount,
      saleAmount: sale_amount,
      remainingBefore: before,
      remainingAfter: before - amount,
    };
  }

  /** Refuses a reservation over what is left (nothing reaches history then). */
  private checkReserve({ merchant_ref, amount }: Reserve): void {
    const { input } = this;
    if (typeof merchant_ref !== 'string' || merchant_ref === '') throw new Error('merchant_ref is required');
    if (!Number.isSafeInteger(amount) || amount <= 0)
      throw new Error('amount must be an integer greater than 0 in the lowest currency unit');
    const existing = this.find(merchant_ref);
    if (existing && existing.status !== 'released') {
      if (existing.amount !== amount)
        throw new Error(`refund ${merchant_ref} already holds ${existing.amount}, not ${amount}`);
      return;
    }
    const { refunded, reserved, remaining } = ledgerTotals(input.sale_amount, this.entries, merchant_ref);
    if (amount > remaining) {
      throw new Error(
        `refund of ${amount} exceeds the amount left to refund of sale ${input.original_merchant_ref}: ${remaining} of ${input.sale_amount} (refunded ${refunded}, in flight ${reserved})`,
      );
    }
  }

  /** settleRefund: approved keeps the amount, released gives it back. */
  private settle({ merchant_ref, amount, outcome }: Settle): void {
    const existing = this.find(merchant_ref);
    if (existing) {
      // approved is final: a late "released" never un-refunds money the service returned.
      if (existing.status !== 'approved') existing.status = outcome;
    } else if (outcome === 'approved' && Number.isSafeInteger(amount) && amount > 0) {
      // A refund the service approved that never reserved here (e.g. found by its own requery (F4) after the ledger was
      // started anew).
      this.entries.push({ merchantRef: merchant_ref, amount, status: 'approved' });
    }
    this.publish();
  }

  // --- the main steps ---

  /** Open until its history grows, then continue-as-new with its entries. */
  async run(): Promise<void> {
    const { input } = this;
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow: 'pos-refund-ledger',
        reference: input.original_merchant_ref,
        amount: input.sale_amount,
        currency: input.currency,
      }),
    );
    this.publish();

    await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_LIMIT);
    await condition(allHandlersFinished);
    await continueAsNew<typeof posRefundLedgerWorkflow>({ ...input, entries: this.entries });
  }

  // --- helpers ---

  private find(ref: string): RefundLedgerEntry | undefined {
    return this.entries.find((e) => e.merchantRef === ref);
  }

  private snapshot(): RefundLedgerState {
    const { input, entries } = this;
    return {
      originalMerchantRef: input.original_merchant_ref,
      saleAmount: input.sale_amount,
      currency: input.currency,
      ...ledgerTotals(input.sale_amount, entries),
      entries: entries.map((e) => ({ ...e })),
    };
  }

  private publish(): void {
    const s = this.snapshot();
    upsertSearchAttributes(
      paymentSearchAttributes({ status: s.remaining === 0 && s.reserved === 0 ? 'fully_refunded' : 'open' }),
    );
  }
}
