// The virtual-account credit notification (E-2) as workflows see it.
//
// Only what the signature covers is handed on. Versions 2 and 3 sign six values
// (transaction_reference, virtual_account_number, currency, principal_amount, settled_amount,
// customer_identifier); version 1 signs the whole raw body. Anything else in a v2/v3 body
// (fee_charged, transaction_date, session_id, names...) could have been changed by anyone on the
// way without breaking the signature, so it never reaches a credit: the credit workflow asks the
// service itself (C5) for fee_charged and transaction_date instead.
import { defineQuery, defineUpdate } from '@temporalio/workflow';

/** What the receiver hands `virtualAccountCreditWorkflow`. */
export interface VirtualAccountCredit {
  // Signed in every version.
  transactionReference: string;
  virtualAccountNumber: string;
  principalAmount: string; // decimal string, as the spec sends it
  settledAmount: string;
  currency: string;
  customerIdentifier: string;
  /** Signed in version 1 only (the whole body is signed); absent for v2/v3. */
  feeCharged?: string;
  /** Signed in version 1 only; absent for v2/v3. */
  transactionDate?: string;
  /**
   * v3 only, UNSIGNED: used as nothing but a lookup key for the service's own record (the filtered list's
   * `session_id` filter (C5); a v3 reference is not the one that list knows). A forged value finds no row,
   * or a row whose signed values do not match, and is then ignored.
   */
  lookupSessionId?: string;
  version: 1 | 2 | 3;
  receivedAt: string;
  /**
   * The notification's `meta.freeze_transaction_ref` / `reason_for_frozen_transaction`: signed in
   * v1 only, so for v2/v3 a HINT — the credit workflow asks the service (its record's `frozen_transaction`,
   * C5) and a hint it cannot confirm holds the credit back rather than hands it on.
   */
  frozenHint?: { freezeTransactionRef: string; reason?: string };
  /** How the credit reached us: the credit notification (E-2), or a sweep of the service's webhook error log (C10). */
  source?: 'webhook' | 'error-log';
}

/** Where fee_charged and transaction_date of a credit come from. */
export type CreditFieldsSource =
  /** v1: the whole body is signed. */
  | 'signed-body'
  /** v2/v3: the service's record for the reference (C5), whose signed values matched. */
  | 'service-query'
  /** v2/v3: the service's record did not confirm them (not found, mismatch, unreachable): left out, never taken from the body. */
  | 'unconfirmed';

/** The credit as recorded (durably, once per transaction reference). */
export interface CreditedVirtualAccountTransaction {
  transactionReference: string;
  virtualAccountNumber: string;
  principalAmount: string;
  settledAmount: string;
  currency: string;
  customerIdentifier: string;
  feeCharged?: string;
  transactionDate?: string;
  fieldsSource: CreditFieldsSource;
  version: 1 | 2 | 3;
  /** When the first delivery was recorded (ISO). */
  creditedAt: string;
}

/** What `virtualAccountCreditWorkflow` answers. */
export interface VirtualAccountCreditOutcome {
  /**
   * 'credited': this run recorded the credit (and handed it over, see `handoff`). 'duplicate': the
   * reference was credited before; nothing credited now. 'frozen': recorded, but the service holds
   * the funds (frozen_transaction) and they were not released within the watch period: not handed
   * over.
   */
  status: 'credited' | 'duplicate' | 'frozen';
  /** The credit as recorded by the first delivery (for a duplicate too). */
  credit: CreditedVirtualAccountTransaction;
  /** Deliveries that reached the durable check so far, this one included. */
  deliveries: number;
  /** The freeze the service reported, and when it was seen released. */
  freeze?: {
    freezeTransactionRef?: string;
    reason?: string;
    confirmedBy: 'service' | 'notification';
    releasedAt?: string;
  };
  /** The hand-over to the merchant's credit handler (absent for a duplicate, or runs before handlers existed). */
  handoff?: CreditHandoff;
}

/** The merchant's credit handler's answer, recorded on the workflow. */
export interface CreditHandoff {
  /**
   * delivered: the handler (a function, the old callback) accepted it; refused: it answered a
   * permanent refusal; emitted: the credit's `virtual_account.credit.received` event was handed to
   * its own delivery (`notify list`), which retries it from then on; not_configured: no handler and
   * no events target on this worker.
   */
  status: 'delivered' | 'refused' | 'emitted' | 'not_configured';
  /** The idempotency key the handler received (the transaction reference). */
  idempotencyKey: string;
  /** emitted: the event's id (the `webhook-id`, its delivery workflow's id: `notify redeliver <id>`). */
  eventId?: string;
  attempts?: number;
  detail?: string;
  at: string;
}

/** The credit workflow's state while it runs (frozen, handing over). */
export interface VirtualAccountCreditState {
  status: 'recording' | 'confirming' | 'frozen' | 'handing_over' | 'handoff_failed' | 'credited' | 'duplicate';
  transactionReference: string;
  reason?: string;
  outcome?: VirtualAccountCreditOutcome;
}

export const virtualAccountCreditStateQuery = defineQuery<VirtualAccountCreditState>('virtualAccountCreditState');
/** Operator: try the hand-over again after it gave up (handoff_failed). */
export const retryCreditHandoffUpdate = defineUpdate<{ accepted: true }, [{ operator: string; reason: string }]>(
  'retryCreditHandoff',
);

/** Timings of the credit workflow (docs/flows-virtual-accounts.md). */
export const VA_CREDIT_DEFAULTS = {
  /** A frozen credit is asked about (C5) this often... */
  freezeCheckEveryMs: 60 * 60_000,
  /** ...for this long; still frozen then: the workflow ends 'frozen' (not handed over). */
  freezeWatchForMs: 30 * 24 * 60 * 60_000,
  /** The hand-over is retried with backoff (5 s doubling to 10 min) for this long before handoff_failed. */
  handoffRetryForMs: 3 * 24 * 60 * 60_000,
} as const;

export const virtualAccountCreditWorkflowId = (transactionReference: string): string =>
  `va-credit-${transactionReference}`;

/**
 * A credit's decimal amount (`"1500.50"`) in the lowest unit (150050), read as digits, never as a
 * float; undefined for anything but a plain decimal with at most two places (never rounded).
 */
export function creditAmountInLowestUnit(decimal: string): number | undefined {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(decimal.trim());
  if (!m) return undefined;
  const value = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * A credit's two events (docs/events.md): `needs_attention` when the hand-over gives up (the credit
 * workflow's emission, its first event), `received` when the hand-over emits it (always after).
 */
export const VA_CREDIT_EVENT_SEQUENCE = { needsAttention: 1, received: 2 } as const;
