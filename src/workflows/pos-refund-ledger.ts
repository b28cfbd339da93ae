// The refund ledger of one sale (`pos-refunds-<original merchant_ref>`): the durable running total
// of its refunds, so two refunds of one sale can never together return more than it took.
//
// A refund reserves its amount here (the reserveRefund Update, sent by the refund flow's activity)
// before its F3 is sent; the Update's validator refuses a reservation over what is left
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
} from '../shared/pos-refund';
import { paymentSearchAttributes } from '../shared/search-attributes';

/** Continue-as-new past this many history events (or when the server suggests it). */
const HISTORY_LIMIT = 2_000;

export async function posRefundLedgerWorkflow(raw: PosRefundLedgerInput): Promise<void> {
  const input = PosRefundLedgerInputSchema.parse(raw);
  const entries: RefundLedgerEntry[] = input.entries.map((e) => ({ ...e }));
  const find = (ref: string) => entries.find((e) => e.merchantRef === ref);
  const state = (): RefundLedgerState => {
    const t = ledgerTotals(input.sale_amount, entries);
    return {
      originalMerchantRef: input.original_merchant_ref,
      saleAmount: input.sale_amount,
      currency: input.currency,
      ...t,
      entries: entries.map((e) => ({ ...e })),
    };
  };
  const publish = () =>
    upsertSearchAttributes(
      paymentSearchAttributes({
        status: state().remaining === 0 && state().reserved === 0 ? 'fully_refunded' : 'open',
      }),
    );

  setHandler(refundLedgerStateQuery, state);
  setHandler(openRefundLedgerSignal, () => undefined);
  setHandler(
    reserveRefundUpdate,
    ({ merchant_ref, amount }) => {
      const existing = find(merchant_ref);
      const before = ledgerTotals(input.sale_amount, entries, merchant_ref).remaining;
      if (existing && existing.status !== 'released') {
        // The same refund asking again (an activity retry): what it was granted.
        return {
          merchantRef: merchant_ref,
          amount: existing.amount,
          saleAmount: input.sale_amount,
          remainingBefore: before,
          remainingAfter: before - existing.amount,
        };
      }
      if (existing) existing.status = 'reserved';
      else entries.push({ merchantRef: merchant_ref, amount, status: 'reserved' });
      publish();
      return {
        merchantRef: merchant_ref,
        amount,
        saleAmount: input.sale_amount,
        remainingBefore: before,
        remainingAfter: before - amount,
      };
    },
    {
      validator: ({ merchant_ref, amount }) => {
        if (typeof merchant_ref !== 'string' || merchant_ref === '') throw new Error('merchant_ref is required');
        if (!Number.isSafeInteger(amount) || amount <= 0)
          throw new Error('amount must be an integer greater than 0 in the lowest currency unit');
        const existing = find(merchant_ref);
        if (existing && existing.status !== 'released') {
          if (existing.amount !== amount)
            throw new Error(`refund ${merchant_ref} already holds ${existing.amount}, not ${amount}`);
          return;
        }
        const { refunded, reserved, remaining } = ledgerTotals(input.sale_amount, entries, merchant_ref);
        if (amount > remaining) {
          throw new Error(
            `refund of ${amount} exceeds the amount left to refund of sale ${input.original_merchant_ref}: ${remaining} of ${input.sale_amount} (refunded ${refunded}, in flight ${reserved})`,
          );
        }
      },
    },
  );
  setHandler(settleRefundSignal, ({ merchant_ref, amount, outcome }) => {
    const existing = find(merchant_ref);
    if (existing) {
      // approved is final: a late "released" never un-refunds money the service returned.
      if (existing.status !== 'approved') existing.status = outcome;
    } else if (outcome === 'approved' && Number.isSafeInteger(amount) && amount > 0) {
      // A refund the service approved that never reserved here (e.g. found by its own F4 after the ledger was started anew).
      entries.push({ merchantRef: merchant_ref, amount, status: 'approved' });
    }
    publish();
  });

  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'pos-refund-ledger',
      reference: input.original_merchant_ref,
      amount: input.sale_amount,
      currency: input.currency,
    }),
  );
  publish();

  await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_LIMIT);
  await condition(allHandlersFinished);
  await continueAsNew<typeof posRefundLedgerWorkflow>({ ...input, entries });
}
