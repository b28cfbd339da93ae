// The activity side of the claim check: open the sealed secret right before the service call,
// and delete it (in the store's next batch delete) once the service has answered that call (or
// refused it). A lost answer keeps the record, so that a resend which a requery proved safe can
// still be made; its TTL ends it anyway. A card kept that way is sealed again without its CVV: the
// CVV never outlives the authorisation attempt (PCI DSS 3.3.1.2), so such a resend asks the payer
// for the card again.
// A handle that no longer opens, or whose record lacks what the call needs, fails with
// SecretUnavailable (non-retryable): nothing was sent, and the flow asks for the data again.
import { ApplicationFailure } from '@temporalio/activity';
import { PaymentsApiError } from '../api';
import type { ClaimCheckStore } from '../claim-check/store';
import { SecretUnavailableError } from '../claim-check/store';
import { SECRET_UNAVAILABLE, type SecretPurpose } from '../shared/claim-check';
import type { CardDetails } from '../shared/card-payment';
import { FailureTypes } from '../shared/failures';
import { toActivityFailure } from './failures';

/**
 * When to keep the record after the call instead of deleting it (default: only on a lost answer).
 * A flow that may send the same request again once a requery proved the first never arrived
 * (a POS transaction after a 91/96 or a connection that failed before sending, a mandate create proven absent) keeps it
 * for that resend; the flow discards it when it ends, and the TTL ends it anyway.
 */
export interface KeepSealed<T, S = unknown> {
  /** Keep after this answer (e.g. a processor code that leaves the outcome unknown). */
  afterAnswer?: (result: T) => boolean;
  /** Keep after this failure (replaces the default rule: an unknown outcome keeps it). */
  afterError?: (err: unknown) => boolean;
  /** What stays sealed when the record is kept after a failure (e.g. the card without its CVV). Default: all of it. */
  keptAfterError?: (secret: S) => unknown;
  /** False when the record lacks what the call needs (a card whose CVV is gone): SecretUnavailable, nothing sent. */
  usable?: (secret: S) => boolean;
}

/** The card's rule: the CVV is used once; a card kept after a lost answer keeps its PAN and expiry only. */
export const CARD_CVV_ONCE: KeepSealed<unknown, CardDetails> = {
  keptAfterError: ({ cvv: _cvv, ...withoutCvv }) => withoutCvv,
  usable: (card) => typeof card.cvv === 'string' && card.cvv.length > 0,
};

/**
 * Kept for a resend after any unclear failure (a lost answer, or a call that failed before it was
 * sent): a mandate create and a POS transaction may be sent again once a requery proved the first never arrived.
 */
export const keptForResend = (err: unknown): boolean => {
  const type = toActivityFailure(err, { moneyMoving: true, what: 'resend' }).type;
  return type === FailureTypes.OutcomeUnknown || type === FailureTypes.Transient;
};

export async function withSealed<S, T>(
  store: ClaimCheckStore,
  handle: string,
  purpose: SecretPurpose,
  use: (secret: S) => Promise<T>,
  keep: KeepSealed<T, S> = {},
): Promise<T> {
  const secret = await openSealed<S>(store, handle, purpose, keep);
  try {
    const result = await use(secret);
    if (!keep.afterAnswer?.(result)) discard(store, handle);
    return result;
  } catch (err) {
    const kept = keep.afterError ? keep.afterError(err) : err instanceof PaymentsApiError && err.outcomeUnknown;
    if (!kept) discard(store, handle);
    else if (keep.keptAfterError) await resealKept(store, handle, purpose, keep.keptAfterError(secret));
    throw err;
  }
}

async function openSealed<S>(
  store: ClaimCheckStore,
  handle: string,
  purpose: SecretPurpose,
  keep: Pick<KeepSealed<unknown, S>, 'usable'>,
): Promise<S> {
  let secret: S;
  try {
    secret = await store.open<S>(handle, purpose);
  } catch (err) {
    if (err instanceof SecretUnavailableError) throw secretUnavailable(err);
    throw err;
  }
  if (keep.usable && !keep.usable(secret)) {
    discard(store, handle); // of no use to any later call either
    throw secretUnavailable(new SecretUnavailableError(purpose));
  }
  return secret;
}

const secretUnavailable = (err: SecretUnavailableError) =>
  ApplicationFailure.nonRetryable(err.message, SECRET_UNAVAILABLE);

/**
 * Seals the kept part again under the same handle. When that cannot be done (the record is gone,
 * or the database refused), the whole record is deleted instead: what must not outlive the call
 * never stays for the sake of a resend.
 */
async function resealKept(store: ClaimCheckStore, handle: string, purpose: SecretPurpose, kept: unknown) {
  const resealed = await store.reseal(handle, purpose, kept).catch(() => false);
  if (!resealed) discard(store, handle);
}

/** The call is made: the record goes in the store's next batch delete (no round trip here; its TTL ends it anyway). */
function discard(store: ClaimCheckStore, handle: string): void {
  store.discardSoon(handle);
}
