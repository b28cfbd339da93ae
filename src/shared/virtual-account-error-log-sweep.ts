// The webhook error log sweep's contract (C10/C11): its summary and the id its Schedule and runs
// are named by. The sweep starts credit workflows (./virtual-account-credit.ts) for notifications
// that never reached us.
/** One sweep of the webhook error log (C10/C11), as the sweep workflow reports it. */
export interface ErrorLogSweepSummary {
  /** Rows read from the error log. */
  rows: number;
  /** Credit workflows the sweep started (the notification never reached us). */
  started: number;
  /** Rows whose credit workflow already existed (delivered, or swept before). */
  known: number;
  /** Rows deleted (C11) after their credit was durably recorded. */
  deleted: number;
  /** Rows left for the next sweep (credit not recorded yet, or the delete failed). */
  left: number;
  /** Rows that could not be read as a credit (missing signed values): left, named with the problem. */
  invalid: { transactionRef: string; problem: string }[];
}

export const VA_ERROR_LOG_SWEEP_WORKFLOW_ID = 'va-webhook-error-log-sweep';
