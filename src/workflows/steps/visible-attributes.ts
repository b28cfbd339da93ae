// A flow's search attributes, written once per change. Each upsert is a history event and a
// visibility write on the server, and every flow has its first attributes already: the starters
// pass them in the start request. So a field the start carried is not upserted again, a status is
// upserted only when it differs from the one visible, and a field staged with `stage` rides with
// the next status change (docs/performance.md, "Search attributes once per change").
//
// Decisions are taken from the start event and the flow's own commands only, so they replay.
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  PaymentAmount,
  PaymentCurrency,
  PaymentFlow,
  PaymentReference,
  PaymentStatus,
  paymentSearchAttributes,
  type PaymentSearchFields,
} from '../../shared/search-attributes';

export interface VisibleAttributes {
  /** Keeps `fields` for the next status change (nothing is written now). */
  stage(fields: Omit<PaymentSearchFields, 'status'>): void;
  /** Shows `status` (with anything staged); writes nothing when it is the one visible and nothing is staged. */
  status(status: string): void;
}

/**
 * Call before the flow's first upsert. `initial` is what the flow shows from its start: fields the
 * start request carried with the same value are not written again; the others are, in one upsert.
 */
export function visibleAttributes(initial: PaymentSearchFields): VisibleAttributes {
  const started = workflowInfo().typedSearchAttributes;
  const startedWith: PaymentSearchFields = {
    flow: started.get(PaymentFlow),
    reference: started.get(PaymentReference),
    status: started.get(PaymentStatus),
    amount: started.get(PaymentAmount),
    currency: started.get(PaymentCurrency),
  };
  const missing = Object.fromEntries(
    Object.entries(initial).filter(([k, v]) => v !== undefined && startedWith[k as keyof PaymentSearchFields] !== v),
  ) as PaymentSearchFields;
  if (Object.keys(missing).length) upsertSearchAttributes(paymentSearchAttributes(missing));
  let visibleStatus = initial.status ?? startedWith.status;
  let staged: PaymentSearchFields = {};
  return {
    stage(fields) {
      staged = { ...staged, ...fields };
    },
    status(status) {
      if (status === visibleStatus && !Object.keys(staged).length) return;
      upsertSearchAttributes(paymentSearchAttributes({ ...staged, status }));
      staged = {};
      visibleStatus = status;
    },
  };
}
