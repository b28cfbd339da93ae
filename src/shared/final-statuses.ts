// The one vocabulary of the statuses a flow ends in, each with what it means for the money (the
// metrics' outcome, src/shared/flow-metrics.ts). Every flow's list of final statuses picks from it
// (`pickFinal`), so a flow cannot end in a word the metrics, dashboards and CLI do not know.

/** Each final status and its meaning: the money moved, did not move, or nobody can say yet. */
export const FINAL_STATUS_MEANINGS = {
  success: 'succeeded',
  approved: 'succeeded',
  vended: 'succeeded',
  completed: 'succeeded',
  credited: 'succeeded',
  success_after_cancel: 'succeeded',
  failed: 'failed',
  declined: 'failed',
  rejected: 'failed',
  refused: 'failed',
  not_received: 'failed',
  not_sent: 'failed',
  not_vended: 'failed',
  card_data_unavailable: 'failed',
  expired: 'failed',
  expired_unobserved: 'failed',
  cancelled: 'failed',
  lapsed: 'failed',
  released: 'failed',
  completion_declined: 'failed',
  completion_rejected: 'failed',
  completion_not_received: 'failed',
  outcome_unknown: 'outcome_unknown',
  create_outcome_unknown: 'outcome_unknown',
  poll_error: 'outcome_unknown',
  unknown: 'outcome_unknown',
  // Only the SMS flows end in these (sent: the service charged for the messages; a campaign still
  // pending when the flow stopped following it may yet be sent).
  sent: 'succeeded',
  partially_sent: 'succeeded',
  not_found: 'failed',
  still_pending: 'outcome_unknown',
} as const;

export type FinalStatusWord = keyof typeof FINAL_STATUS_MEANINGS;
export type FinalStatusMeaning = (typeof FINAL_STATUS_MEANINGS)[FinalStatusWord];

/** The words that end only an SMS flow: elsewhere they are no final status. */
export const SMS_ONLY_FINAL_STATUSES: readonly FinalStatusWord[] = [
  'sent',
  'partially_sent',
  'not_found',
  'still_pending',
];

/**
 * A flow's final statuses, picked from the vocabulary: declare the result with the flow's own status
 * type (`const X: readonly VendStatus[] = pickFinal([...])`) and a word outside either is refused by tsc.
 */
export function pickFinal<S extends FinalStatusWord>(statuses: readonly S[]): readonly S[] {
  return statuses;
}

/** What a word means, when it is a final status of the vocabulary. */
export function finalStatusMeaning(status: string): FinalStatusMeaning | undefined {
  return Object.hasOwn(FINAL_STATUS_MEANINGS, status) ? FINAL_STATUS_MEANINGS[status as FinalStatusWord] : undefined;
}
