// The virtual-account credit notification (E-2) as workflows see it.
//
// Only what the signature covers is handed on. Versions 2 and 3 sign six values
// (transaction_reference, virtual_account_number, currency, principal_amount, settled_amount,
// customer_identifier); version 1 signs the whole raw body. Anything else in a v2/v3 body
// (fee_charged, transaction_date, session_id, names...) could have been changed by anyone on the
// way without breaking the signature, so it never reaches a credit: the credit workflow asks the
// service itself (C5) for fee_charged and transaction_date instead.

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
   * v3 only, UNSIGNED: used as nothing but a lookup key for the service's own record (C5
   * `session_id` filter; a v3 reference is not the one C5 knows). A forged value finds no row,
   * or a row whose signed values do not match, and is then ignored.
   */
  lookupSessionId?: string;
  version: 1 | 2 | 3;
  receivedAt: string;
}

/** Where fee_charged and transaction_date of a credit come from. */
export type CreditFieldsSource =
  /** v1: the whole body is signed. */
  | 'signed-body'
  /** v2/v3: the service's C5 record for the reference, whose signed values matched. */
  | 'service-query'
  /** v2/v3: C5 did not confirm them (not found, mismatch, unreachable): left out, never taken from the body. */
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
  /** 'credited': this run recorded the credit. 'duplicate': the reference was credited before; nothing credited now. */
  status: 'credited' | 'duplicate';
  /** The credit as recorded by the first delivery (for a duplicate too). */
  credit: CreditedVirtualAccountTransaction;
  /** Deliveries that reached the durable check so far, this one included. */
  deliveries: number;
}

export const virtualAccountCreditWorkflowId = (transactionReference: string): string => `va-credit-${transactionReference}`;
