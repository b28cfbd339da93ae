// A virtual-account credit, from notification to the merchant's books, exactly once.
//
//   durable duplicate check (va_credit_records) → fee/date from C5 → freeze? → hand-over
//
// - One workflow per credited reference (id va-credit-<transaction_reference>), started by the
//   receiver for an E-2 notification or by the error-log sweep (C10) for one that never reached
//   us. The workflow id stops a redelivery while the workflow runs and, after it completed, for
//   the namespace's retention (ALLOW_DUPLICATE_FAILED_ONLY). Past that — or after the execution
//   was deleted — the durable record still answers 'duplicate': a reference is credited once.
// - Only signed values are credited; for v2/v3 fee_charged and transaction_date come from the
//   service's own record (C5), never from the notification body.
// - A frozen credit (the service holds the funds: C5 `frozen_transaction`, or an unconfirmed
//   freeze in the notification) is recorded, not handed over, and asked about again until the
//   service shows it released.
// - The hand-over calls the merchant's credit handler with the reference as idempotency key,
//   retried with backoff; a handler that keeps failing leaves the workflow `handoff_failed`
//   (PaymentStatus) until an operator asks again (retryCreditHandoff).
import {
  ActivityFailure,
  condition,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { createVirtualAccountActivities, CreditFreezeLookup } from '../activities/virtual-accounts';
import {
  retryCreditHandoffUpdate,
  VA_CREDIT_DEFAULTS,
  virtualAccountCreditStateQuery,
  type CreditHandoff,
  type VirtualAccountCredit,
  type VirtualAccountCreditOutcome,
  type VirtualAccountCreditState,
} from '../shared/virtual-account-webhook';
import { paymentSearchAttributes } from '../shared/search-attributes';

type VirtualAccountActivities = ReturnType<typeof createVirtualAccountActivities>;

export const VA_DURABLE_DEDUPE_PATCH = 'va-credit-durable-dedupe';
/** Runs with this marker check the freeze and hand the credit over; older ones ended after recording it. */
export const VA_HANDOFF_PATCH = 'va-credit-freeze-and-handoff';

const { recordVirtualAccountCredit } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '30s',
  // The duplicate check must happen before anything is credited: retried until the database answers.
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});
const { confirmVirtualAccountCredit, readVirtualAccountCreditFreeze } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '30s',
  // Bounded: when the service cannot be asked, the credit stands on its signed values alone.
  retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5 },
});
const { handOverVirtualAccountCredit } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '30s',
  scheduleToCloseTimeout: VA_CREDIT_DEFAULTS.handoffRetryForMs,
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

export async function virtualAccountCreditWorkflow(
  credit: VirtualAccountCredit,
): Promise<VirtualAccountCreditOutcome | VirtualAccountCredit> {
  if (!patched(VA_DURABLE_DEDUPE_PATCH)) {
    // Runs started before the durable check: they completed at once, answering the notification.
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow: 'virtual-account-credit',
        reference: credit.transactionReference,
        status: 'credited',
        currency: credit.currency,
      }),
    );
    return credit;
  }
  const handingOver = patched(VA_HANDOFF_PATCH);
  const state: VirtualAccountCreditState = { status: 'recording', transactionReference: credit.transactionReference };
  const setStatus = (status: VirtualAccountCreditState['status'], reason?: string) => {
    const changed = status !== state.status;
    state.status = status;
    state.reason = reason;
    if (changed && handingOver) upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  let retryRequested = false;
  if (handingOver) {
    setHandler(virtualAccountCreditStateQuery, () => state);
    setHandler(
      retryCreditHandoffUpdate,
      () => {
        retryRequested = true;
        return { accepted: true as const };
      },
      {
        validator: (input) => {
          if (state.status !== 'handoff_failed')
            throw new Error(`retryCreditHandoff: the credit is ${state.status}, not handoff_failed`);
          if (!input || typeof input.operator !== 'string' || input.operator.trim() === '')
            throw new Error('operator: required, a non-empty string');
          if (typeof input.reason !== 'string' || input.reason.trim() === '')
            throw new Error('reason: required, a non-empty string');
        },
      },
    );
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow: 'virtual-account-credit',
        reference: credit.transactionReference,
        status: 'recording',
        currency: credit.currency,
      }),
    );
  }

  let outcome: VirtualAccountCreditOutcome = await recordVirtualAccountCredit(credit);
  if (outcome.status === 'credited' && outcome.credit.fieldsSource === 'unconfirmed') {
    try {
      const confirmed = await confirmVirtualAccountCredit(credit);
      if (confirmed) outcome = { ...outcome, credit: confirmed };
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn(
        'virtual-account credit: the service could not confirm fee and date; credited on the signed values only',
        { transactionReference: credit.transactionReference },
      );
    }
  }

  if (handingOver && outcome.status === 'credited') {
    // ---- frozen: recorded, held back until the service shows the funds released ----
    setStatus('confirming');
    const freeze = await watchFreeze(credit, (reason) => setStatus('frozen', reason));
    if (freeze) outcome = { ...outcome, freeze };
    if (freeze && !freeze.releasedAt) {
      outcome = { ...outcome, status: 'frozen' };
      setStatus('frozen', `still frozen after ${VA_CREDIT_DEFAULTS.freezeWatchForMs} ms: not handed over`);
      state.outcome = outcome;
      return outcome;
    }
    // ---- the hand-over: at least once, one idempotency key ----
    let handoff: CreditHandoff | undefined;
    while (!handoff) {
      setStatus('handing_over');
      try {
        handoff = await handOverVirtualAccountCredit({
          credit: outcome.credit,
          ...(freeze
            ? { releasedFreeze: { freezeTransactionRef: freeze.freezeTransactionRef, reason: freeze.reason } }
            : {}),
        });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        setStatus(
          'handoff_failed',
          `the credit handler did not take the credit: ${err.cause?.message ?? err.message}; an operator may ask again (retryCreditHandoff)`,
        );
        await condition(() => retryRequested);
        retryRequested = false;
      }
    }
    outcome = { ...outcome, handoff };
  }

  state.outcome = outcome;
  setStatus(outcome.status);
  if (!handingOver) {
    upsertSearchAttributes(
      paymentSearchAttributes({
        flow: 'virtual-account-credit',
        reference: credit.transactionReference,
        status: outcome.status,
        currency: outcome.credit.currency,
      }),
    );
  }
  return outcome;
}

/**
 * The credit's freeze, as the service shows it. undefined: not frozen. Otherwise the freeze, with
 * `releasedAt` when the service showed it released within the watch period. A freeze named only by
 * an unsigned notification field is believed until the service can be asked (holding value back
 * is the safe side); a service that answers "not frozen" overrules it.
 */
async function watchFreeze(
  credit: VirtualAccountCredit,
  onFrozen: (reason: string) => void,
): Promise<VirtualAccountCreditOutcome['freeze']> {
  const ask = async (): Promise<CreditFreezeLookup | undefined> => {
    try {
      return await readVirtualAccountCreditFreeze(credit);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return undefined;
    }
  };
  let look = await ask();
  const frozenNow = (l: CreditFreezeLookup | undefined) =>
    l?.known ? l.frozen !== undefined : credit.frozenHint !== undefined;
  if (!frozenNow(look)) return undefined;
  const fromService = look?.known && look.frozen;
  const freeze: NonNullable<VirtualAccountCreditOutcome['freeze']> = fromService
    ? { ...fromService, confirmedBy: 'service' }
    : {
        freezeTransactionRef: credit.frozenHint?.freezeTransactionRef,
        reason: credit.frozenHint?.reason,
        confirmedBy: 'notification',
      };
  onFrozen(
    `the service holds the funds (freeze ${freeze.freezeTransactionRef ?? 'unnamed'}${freeze.reason ? `: ${freeze.reason}` : ''}); checked again every ${VA_CREDIT_DEFAULTS.freezeCheckEveryMs} ms`,
  );
  const until = Date.now() + VA_CREDIT_DEFAULTS.freezeWatchForMs;
  while (Date.now() < until) {
    await sleep(Math.min(VA_CREDIT_DEFAULTS.freezeCheckEveryMs, until - Date.now()));
    look = await ask();
    if (look?.known && !look.frozen) return { ...freeze, releasedAt: new Date().toISOString() };
  }
  return freeze;
}
