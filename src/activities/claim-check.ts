// The activity side of the claim check: open the sealed secret right before the service call,
// and delete it (in the store's next batch delete) once the service has answered that call (or
// refused it). A lost answer keeps the record, so that a resend which a requery proved safe can
// still be made; its TTL ends it anyway.
// A handle that no longer opens fails with SecretUnavailable (non-retryable): nothing was sent,
// and the flow asks for the data again.
import { ApplicationFailure } from '@temporalio/activity';
import { PaymentsApiError } from '../api';
import type { ClaimCheckStore } from '../claim-check/store';
import { SecretUnavailableError } from '../claim-check/store';
import { SECRET_UNAVAILABLE, type SecretPurpose } from '../shared/claim-check';

/**
 * When to keep the record after the call instead of deleting it (default: only on a lost answer).
 * A flow that may send the same request again once a requery proved the first never arrived
 * (POS F3 after a 91/96 or a connection that failed before sending, D1 proven absent) keeps it
 * for that resend; the flow discards it when it ends, and the TTL ends it anyway.
 */
export interface KeepSealed<T> {
  /** Keep after this answer (e.g. a processor code that leaves the outcome unknown). */
  afterAnswer?: (result: T) => boolean;
  /** Keep after this failure (replaces the default rule: an unknown outcome keeps it). */
  afterError?: (err: unknown) => boolean;
}

export async function withSealed<S, T>(
  store: ClaimCheckStore,
  handle: string,
  purpose: SecretPurpose,
  use: (secret: S) => Promise<T>,
  keep: KeepSealed<T> = {},
): Promise<T> {
  let secret: S;
  try {
    secret = await store.open<S>(handle, purpose);
  } catch (err) {
    if (err instanceof SecretUnavailableError)
      throw ApplicationFailure.create({ type: SECRET_UNAVAILABLE, message: err.message, nonRetryable: true });
    throw err;
  }
  try {
    const result = await use(secret);
    if (!keep.afterAnswer?.(result)) discard(store, handle);
    return result;
  } catch (err) {
    const kept = keep.afterError ? keep.afterError(err) : err instanceof PaymentsApiError && err.outcomeUnknown;
    if (!kept) discard(store, handle);
    throw err;
  }
}

/** The call is made: the record goes in the store's next batch delete (no round trip here; its TTL ends it anyway). */
function discard(store: ClaimCheckStore, handle: string): void {
  store.discardSoon(handle);
}
