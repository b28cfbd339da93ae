// Electricity vending (H1-H4): one purchase is never vended twice.
//
//   1. input rules (zod, shared with the starter)
//   2. H1 providers (cached by the worker): the provider must be listed
//   3. H2 meter lookup: amount ≥ minimum_vend; the lookup's reference is the purchase's key
//   4. H3 purchase, once (the activity never retries by itself)
//      answered            → vended (token) or failed
//      refused (400/401…)  → rejected: nothing was vended
//      no answer           → check by reference (H4):
//                             found     → that is the outcome (token)
//                             not found → the first never arrived: a retry with the SAME
//                                         reference, bounded (maxPurchaseAttempts, default 2)
//                             no answer → outcome_unknown: never sent again
//      a RETRY refused     → checked by reference once more: found → vended; else rejected
//
// The only way to send H3 is `purchase(permit)`; permits are the first (used once) and one
// minted from an H4 "not found" for the attempt just made.
import type { RetryPolicy } from '@temporalio/common';
import { ApplicationFailure, proxyActivities, setHandler, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { VendingActivities } from '../activities/vending';
import { FailureTypes, activityFailureMessage, activityFailureType, describeIssues, durationMs, issuesOf } from '../shared/pos';
import {
  VendInputSchema,
  vendStateQuery,
  type MeterInfo,
  type VendInput,
  type VendRecord,
  type VendResult,
  type VendState,
  type VendStep,
} from '../shared/vending';
import { paymentSearchAttributes } from '../shared/search-attributes';

const DEFAULTS = { maxPurchaseAttempts: 2, checkSettleDelay: '3s', retryBackoff: '2s', purchaseTimeoutMs: 45_000, checkTimeout: '10 minutes' } as const;
const REFUSED: readonly string[] = [FailureTypes.BadRequest, FailureTypes.Unauthorized, FailureTypes.InvalidRequest, FailureTypes.NotFound];

type PurchasePermit = { readonly kind: 'first' } | { readonly kind: 'after-not-found'; readonly checkedAttempt: number };

export async function vendElectricityWorkflow(raw: VendInput): Promise<VendResult> {
  const parsed = VendInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    throw ApplicationFailure.create({ type: 'InvalidInput', message: `invalid vend request: ${describeIssues(issues)}`, nonRetryable: true, details: [issues] });
  }
  const { options = {}, ...input } = parsed.data;
  const maxAttempts = options.maxPurchaseAttempts ?? DEFAULTS.maxPurchaseAttempts;
  const purchaseTimeoutMs = options.purchaseTimeoutMs ?? DEFAULTS.purchaseTimeoutMs;

  const readRetry: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', nonRetryableErrorTypes: [...REFUSED, FailureTypes.ServiceError] };
  const { vendListProviders, vendLookupMeter } = proxyActivities<VendingActivities>({ startToCloseTimeout: '30s', scheduleToCloseTimeout: '5 minutes', retry: readRetry });
  const { vendPurchase } = proxyActivities<VendingActivities>({ startToCloseTimeout: purchaseTimeoutMs + 15_000, retry: { maximumAttempts: 1 } });
  const { vendFindByReference } = proxyActivities<VendingActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: durationMs(options.checkTimeout ?? DEFAULTS.checkTimeout),
    retry: readRetry,
  });

  const state: VendState = { orderRef: input.order_ref, status: 'validating', attempt: 0, steps: [] };
  setHandler(vendStateQuery, () => ({ ...state, steps: [...state.steps] }));
  const setStatus = (status: VendState['status']) => {
    state.status = status;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const record = (s: VendStep) => state.steps.push(s);
  let meter: MeterInfo | undefined;
  const finish = (status: VendResult['status'], message: string, transaction?: VendRecord): VendResult => {
    setStatus(status);
    return {
      ...state,
      steps: [...state.steps],
      status,
      message,
      ...(meter ? { meter } : {}),
      ...(transaction ? { transaction, ...(transaction.token ? { token: transaction.token } : {}) } : {}),
    };
  };
  upsertSearchAttributes(paymentSearchAttributes({ flow: 'vend', reference: input.order_ref, status: 'validating', currency: 'NGN' }));

  // ---- H1: the provider must be listed ----
  setStatus('looking_up');
  try {
    const providers = await vendListProviders();
    if (!providers.some((p) => p.code.toUpperCase() === input.provider)) {
      record({ op: 'lookup', outcome: 'rejected', detail: 'UnknownProvider' });
      return finish('rejected', `provider ${input.provider} is not in the provider list (H1)`);
    }
  } catch (err) {
    return finish('rejected', `the provider list (H1) could not be read: ${activityFailureMessage(err)}; nothing was vended`);
  }

  // ---- H2: lookup, minimum_vend ----
  try {
    meter = await vendLookupMeter({ meter_no: input.meter_no, meter_type: input.meter_type, provider: input.provider });
  } catch (err) {
    record({ op: 'lookup', outcome: 'rejected', detail: activityFailureType(err) ?? 'Unknown' });
    return finish('rejected', `meter lookup (H2) failed: ${activityFailureMessage(err)}; nothing was vended`);
  }
  record({ op: 'lookup', outcome: 'found' });
  state.reference = meter.reference;
  upsertSearchAttributes(paymentSearchAttributes({ reference: meter.reference }));
  if (meter.minimum_vend !== undefined && input.amount < meter.minimum_vend) {
    return finish('rejected', `amount ${input.amount} is below the meter's minimum_vend ${meter.minimum_vend}; nothing was vended`);
  }
  const purchaseRequest = { reference: meter.reference, amount: input.amount, phone_number: input.phone_number, email: input.email };

  // ---- H3: the only path to a purchase ----
  let firstPermitUsed = false;
  async function purchase(permit: PurchasePermit): Promise<{ kind: 'response'; transaction: VendRecord } | { kind: 'unknown' | 'rejected'; detail: string }> {
    if (permit.kind === 'first') {
      if (firstPermitUsed) throw ApplicationFailure.nonRetryable('the first-purchase permit was used twice', 'PermitViolation');
      firstPermitUsed = true;
    } else if (permit.checkedAttempt !== state.attempt) {
      throw ApplicationFailure.nonRetryable('a retry permit must come from the check of the attempt just made', 'PermitViolation');
    }
    state.attempt += 1;
    setStatus('purchasing');
    try {
      const transaction = await vendPurchase(purchaseRequest, { attempt: state.attempt, timeoutMs: purchaseTimeoutMs });
      record({ op: 'purchase', attempt: state.attempt, outcome: 'response', detail: transaction.status });
      return { kind: 'response', transaction };
    } catch (err) {
      const type = activityFailureType(err);
      if (type !== undefined && REFUSED.includes(type)) {
        record({ op: 'purchase', attempt: state.attempt, outcome: 'rejected', detail: type });
        return { kind: 'rejected', detail: activityFailureMessage(err) };
      }
      record({ op: 'purchase', attempt: state.attempt, outcome: 'unknown', detail: type ?? 'ActivityFailure' });
      return { kind: 'unknown', detail: activityFailureMessage(err) };
    }
  }

  const fromTransaction = (t: VendRecord, how: string): VendResult =>
    t.status === 'success'
      ? finish('vended', `vended${how}`, t)
      : finish('failed', `the service holds the purchase with status ${t.status}${how}; it is not sent again`, t);

  let permit: PurchasePermit = { kind: 'first' };
  for (;;) {
    const sent = await purchase(permit);
    if (sent.kind === 'response') return fromTransaction(sent.transaction, '');
    if (sent.kind === 'rejected' && state.attempt === 1) return finish('rejected', `the purchase was refused: ${sent.detail}; nothing was vended`);
    // A retry refused (e.g. 'already processed for this reference') is checked by reference too.

    // No answer: check by reference before anything else.
    await sleep(durationMs(options.checkSettleDelay ?? DEFAULTS.checkSettleDelay));
    setStatus('checking');
    let check;
    try {
      check = await vendFindByReference({ reference: purchaseRequest.reference });
    } catch (err) {
      record({ op: 'check', attempt: state.attempt, outcome: 'error', detail: activityFailureType(err) ?? 'Unknown' });
      return finish('outcome_unknown', `the purchase got no answer and the check by reference (H4) failed (${activityFailureMessage(err)}); it is NOT sent again. Reconcile reference ${purchaseRequest.reference}.`);
    }
    if (check.found) {
      record({ op: 'check', attempt: state.attempt, outcome: 'found', detail: check.transaction.status });
      return fromTransaction(check.transaction, ' (found by reference after a lost answer)');
    }
    record({ op: 'check', attempt: state.attempt, outcome: 'not_found' });
    if (sent.kind === 'rejected') return finish('rejected', `the purchase was refused: ${sent.detail}; nothing was vended`);
    if (state.attempt >= maxAttempts) {
      return finish('not_vended', `the service never received the purchase (H4: not found after ${state.attempt} attempt(s)); nothing was vended`);
    }
    setStatus('retry_wait');
    await sleep(durationMs(options.retryBackoff ?? DEFAULTS.retryBackoff));
    permit = { kind: 'after-not-found', checkedAttempt: state.attempt };
  }
}
