// Electricity vending (H1-H4): one purchase is never vended twice.
//
//   1. input rules (zod, shared with the starter)
//   2. H1 providers (cached by the worker): the provider must be listed
//   3. H2 meter lookup: amount ≥ minimum_vend; the lookup's reference is the purchase's key
//   4. H3 purchase through the one send-once rule (./send-once.ts): send = H3, requery = H4 by
//      reference. What this flow keeps:
//      answered / found    → the record's STATUS decides, never the HTTP 200: success → vended
//                            (token), failed → failed, anything else (pending) → requeried
//                            (H4) on a backoff until final; pending past `pendingFor` parks as
//                            outcome_unknown (./unknown-outcome.ts). Never re-purchased.
//      refused (400/401…)  → rejected: nothing was vended
//      never received      → not_vended (a refused resend: rejected)
//      unverified          → outcome_unknown: never sent again, requeried on a backoff for
//                            `unknownRequeryFor` (24 h); an operator may resolveOutcome
//                            (src/shared/outcome.ts) with vended | failed | not_vended
//   5. cancelled after H3 may have been sent: a non-cancellable cleanup asks H4 once more and the
//      result carries the real outcome (or outcome_unknown) with cancelRequested; never "cancelled".
//
// Before a resend the flow waits: `retryBackoff`, and — when the earlier H3 attempt was lost by
// its heartbeat timeout (a worker that died or was cut off mid-call) — until that attempt's HTTP
// call can no longer be in flight (purchaseTimeoutMs plus a margin).
import type { RetryPolicy } from '@temporalio/common';
import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { VendingActivities } from '../activities/vending';
import {
  VEND_FIRST_STATUS,
  VEND_H1_WHAT,
  VEND_RESOLVE_OUTCOMES,
  VendInputSchema,
  vendRecordOutcome,
  vendStateQuery,
  type MeterInfo,
  type VendInput,
  type VendRecord,
  type VendResolveOutcome,
  type VendResult,
  type VendState,
  type VendStep,
} from '../shared/vending';
import {
  checkResolveOutcome,
  resolveOutcomeUpdate,
  UNKNOWN_OUTCOME_DEFAULTS,
  type OutcomeResolution,
} from '../shared/outcome';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { sendOnce, type Presence } from './steps/send-once';
import { visibleAttributes } from './steps/visible-attributes';
import { awaitFinal, lostByHeartbeat, type Settled } from './steps/unknown-outcome';
import {
  FailureTypes,
  activityFailureMessage,
  activityFailureType,
  describeIssues,
  issuesOf,
} from '../shared/failures';
import { durationMs } from '../shared/duration';

const DEFAULTS = {
  maxPurchaseAttempts: 2,
  checkSettleDelay: '3s',
  retryBackoff: '2s',
  purchaseTimeoutMs: 45_000,
  checkTimeout: '10 minutes',
  pendingFor: '10 minutes',
  unknownRequeryFor: UNKNOWN_OUTCOME_DEFAULTS.requeryFor,
  requeryBackoff: UNKNOWN_OUTCOME_DEFAULTS.firstBackoff,
  requeryMaxBackoff: UNKNOWN_OUTCOME_DEFAULTS.maxBackoff,
} as const;
const REFUSED: readonly string[] = [
  FailureTypes.BadRequest,
  FailureTypes.Unauthorized,
  FailureTypes.InvalidRequest,
  FailureTypes.NotFound,
];
/** H3's heartbeat timeout: a worker lost mid-call is noticed this quickly. */
const PURCHASE_HEARTBEAT_TIMEOUT = '10s';
/** Margin over the HTTP timeout: start-to-close, and the wait before a resend after a lost heartbeat. */
const IN_FLIGHT_MARGIN_MS = 15_000;

export async function vendElectricityWorkflow(raw: VendInput): Promise<VendResult> {
  const parsed = VendInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    throw ApplicationFailure.create({
      type: 'InvalidInput',
      message: `invalid vend request: ${describeIssues(issues)}`,
      nonRetryable: true,
      details: [issues],
    });
  }
  const { options = {}, ...input } = parsed.data;
  const maxAttempts = options.maxPurchaseAttempts ?? DEFAULTS.maxPurchaseAttempts;
  const purchaseTimeoutMs = options.purchaseTimeoutMs ?? DEFAULTS.purchaseTimeoutMs;

  const readRetry: RetryPolicy = {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    nonRetryableErrorTypes: [...REFUSED, FailureTypes.ServiceError],
  };
  const lookupOptions = { startToCloseTimeout: '30s', scheduleToCloseTimeout: '5 minutes', retry: readRetry } as const;
  const { vendListProviders, vendLookupMeter, vendLookupListedMeter } =
    proxyActivities<VendingActivities>(lookupOptions);
  // H1+H2 are reads before anything is sent: as a local activity they run inside the workflow task
  // that started the flow (one marker event instead of an activity task and the workflow task it
  // wakes; docs/performance.md). A worker lost mid-read just reads again on replay.
  const local = proxyLocalActivities<VendingActivities>(lookupOptions);
  const { vendPurchase } = proxyActivities<VendingActivities>({
    startToCloseTimeout: purchaseTimeoutMs + IN_FLIGHT_MARGIN_MS,
    heartbeatTimeout: PURCHASE_HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 1 },
  });
  const { vendFindByReference } = proxyActivities<VendingActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: durationMs(options.checkTimeout ?? DEFAULTS.checkTimeout),
    retry: readRetry,
  });
  // While pending or parked: one bounded read per round; the rounds carry the backoff.
  const { vendFindByReference: vendWatchByReference } = proxyActivities<VendingActivities>({
    startToCloseTimeout: '30s',
    scheduleToCloseTimeout: '2 minutes',
    retry: { ...readRetry, maximumAttempts: 3 },
  });

  const state: VendState = { orderRef: input.order_ref, status: 'validating', attempt: 0, steps: [] };
  setHandler(vendStateQuery, () => ({ ...state, steps: [...state.steps] }));
  let resolution: OutcomeResolution<VendResolveOutcome> | undefined;
  setHandler(
    resolveOutcomeUpdate,
    (r) => {
      resolution ??= {
        outcome: r.outcome as VendResolveOutcome,
        reason: r.reason.trim(),
        operator: r.operator.trim(),
        resolvedAt: new Date(Date.now()).toISOString(),
      };
      return resolution;
    },
    {
      validator: (r) =>
        checkResolveOutcome(r, VEND_RESOLVE_OUTCOMES, state.status === 'outcome_unknown' && resolution === undefined),
    },
  );
  // Flows started since vend-attributes-once write their search attributes once per change
  // (./visible-attributes.ts): three upserts per sale instead of six. The patch's own upsert
  // (TemporalChangeVersion) is one of the three, and it stands in for vend-one-step-lookup's.
  // vend-local-lookup (the lookup as a local activity) includes both and stands in for their
  // markers: a new flow records one patch marker, its histories' replays take the same branches.
  const localLookup = patched('vend-local-lookup');
  const attributesOnce = localLookup || patched('vend-attributes-once');
  const visible = attributesOnce
    ? visibleAttributes({ flow: 'vend', reference: input.order_ref, status: VEND_FIRST_STATUS, currency: 'NGN' })
    : undefined;
  const setStatus = (status: VendState['status']) => {
    state.status = status;
    if (visible) visible.status(status);
    else upsertSearchAttributes(paymentSearchAttributes({ status }));
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
  if (!visible)
    upsertSearchAttributes(
      paymentSearchAttributes({ flow: 'vend', reference: input.order_ref, status: 'validating', currency: 'NGN' }),
    );

  // ---- H1: the provider must be listed; H2: lookup, minimum_vend ----
  setStatus('looking_up');
  const meterRequest = { meter_no: input.meter_no, meter_type: input.meter_type, provider: input.provider };
  const unlisted = () => {
    record({ op: 'lookup', outcome: 'rejected', detail: 'UnknownProvider' });
    return finish('rejected', `provider ${input.provider} is not in the provider list (H1)`);
  };
  const unreadable = (err: unknown) =>
    finish('rejected', `the provider list (H1) could not be read: ${activityFailureMessage(err)}; nothing was vended`);
  const lookupFailed = (err: unknown) => {
    record({ op: 'lookup', outcome: 'rejected', detail: activityFailureType(err) ?? 'Unknown' });
    return finish('rejected', `meter lookup (H2) failed: ${activityFailureMessage(err)}; nothing was vended`);
  };
  if (attributesOnce || patched('vend-one-step-lookup')) {
    // Both reads in one activity: one workflow task fewer per sale (docs/performance.md).
    try {
      const found = await (localLookup ? local.vendLookupListedMeter : vendLookupListedMeter)(meterRequest);
      if (!found.listed) return unlisted();
      meter = found.meter;
    } catch (err) {
      return activityFailureMessage(err).startsWith(VEND_H1_WHAT) ? unreadable(err) : lookupFailed(err);
    }
  } else {
    try {
      const providers = await vendListProviders();
      if (!providers.some((p) => p.code.toUpperCase() === input.provider)) return unlisted();
    } catch (err) {
      return unreadable(err);
    }
    try {
      meter = await vendLookupMeter(meterRequest);
    } catch (err) {
      return lookupFailed(err);
    }
  }
  record({ op: 'lookup', outcome: 'found' });
  state.reference = meter.reference;
  if (visible) visible.stage({ reference: meter.reference });
  else upsertSearchAttributes(paymentSearchAttributes({ reference: meter.reference }));
  if (meter.minimum_vend !== undefined && input.amount < meter.minimum_vend) {
    return finish(
      'rejected',
      `amount ${input.amount} is below the meter's minimum_vend ${meter.minimum_vend}; nothing was vended`,
    );
  }
  const purchaseRequest = {
    reference: meter.reference,
    amount: input.amount,
    phone_number: input.phone_number,
    email: input.email,
  };
  const reference = purchaseRequest.reference;

  // ---- H3 through send-once; H4 by reference is its requery ----
  /** No H3 attempt may still be in flight after this (workflow time). */
  let inFlightUntil = 0;
  let lastSendRefused = false;
  const send = async (sendNumber: number): Promise<VendRecord> => {
    if (sendNumber > 1) {
      setStatus('retry_wait');
      await sleep(Math.max(durationMs(options.retryBackoff ?? DEFAULTS.retryBackoff), inFlightUntil - Date.now()));
    }
    state.attempt += 1;
    setStatus('purchasing');
    try {
      const transaction = await vendPurchase(purchaseRequest, { attempt: state.attempt, timeoutMs: purchaseTimeoutMs });
      record({ op: 'purchase', attempt: state.attempt, outcome: 'response', detail: transaction.status });
      return transaction;
    } catch (err) {
      const type = activityFailureType(err);
      lastSendRefused = type !== undefined && REFUSED.includes(type);
      if (lostByHeartbeat(err)) inFlightUntil = Date.now() + purchaseTimeoutMs + IN_FLIGHT_MARGIN_MS;
      record({
        op: 'purchase',
        attempt: state.attempt,
        outcome: lastSendRefused ? 'rejected' : 'unknown',
        detail: type ?? (lostByHeartbeat(err) ? 'HeartbeatTimeout' : 'ActivityFailure'),
      });
      throw err;
    }
  };
  const requery = async (): Promise<Presence<VendRecord>> => {
    setStatus('checking');
    try {
      const check = await vendFindByReference({ reference });
      if (check.found) {
        record({ op: 'check', attempt: state.attempt, outcome: 'found', detail: check.transaction.status });
        return { found: true, record: check.transaction };
      }
      record({ op: 'check', attempt: state.attempt, outcome: 'not_found' });
      return { found: false };
    } catch (err) {
      record({ op: 'check', attempt: state.attempt, outcome: 'error', detail: activityFailureType(err) ?? 'Unknown' });
      throw err;
    }
  };

  const fromTransaction = (t: VendRecord, how: string): VendResult =>
    vendRecordOutcome(t.status) === 'vended'
      ? finish('vended', `vended${how}`, t)
      : finish('failed', `the service holds the purchase with status ${t.status}${how}; it is not sent again`, t);

  /** Pending or unknown: requery until final, park as outcome_unknown, accept resolveOutcome. */
  const watch = async (startAs: 'pending' | 'outcome_unknown', how: string, last?: VendRecord): Promise<VendResult> => {
    const settled: Settled<VendRecord> = await awaitFinal<VendRecord>({
      startAs,
      requery: async () => {
        const check = await vendWatchByReference({ reference });
        return check.found ? { found: true, record: check.transaction } : { found: false };
      },
      isFinal: (t) => vendRecordOutcome(t.status) !== 'pending',
      absentIsFinal: () => Date.now() >= inFlightUntil,
      setStatus,
      resolution: () => resolution,
      onRead: (read) => {
        if (read === 'error') record({ op: 'check', attempt: state.attempt, outcome: 'error', detail: 'Unavailable' });
        else if (read.found) {
          last = read.record;
          record({ op: 'check', attempt: state.attempt, outcome: 'found', detail: read.record.status });
        } else record({ op: 'check', attempt: state.attempt, outcome: 'not_found' });
      },
      pendingForMs: durationMs(options.pendingFor ?? DEFAULTS.pendingFor),
      requeryForMs: durationMs(options.unknownRequeryFor ?? DEFAULTS.unknownRequeryFor),
      firstBackoffMs: durationMs(options.requeryBackoff ?? DEFAULTS.requeryBackoff),
      maxBackoffMs: durationMs(options.requeryMaxBackoff ?? DEFAULTS.requeryMaxBackoff),
    });
    if (settled.kind === 'final')
      return fromTransaction(settled.record, `${how}; final after requery by reference (H4)`);
    if (settled.kind === 'absent')
      return finish(
        'not_vended',
        `the service does not know reference ${reference} (H4 not found after the purchase got no answer); nothing was vended`,
      );
    const r = settled.resolution as OutcomeResolution<VendResolveOutcome>;
    state.resolution = r;
    record({ op: 'resolve', attempt: state.attempt, outcome: r.outcome, detail: `by ${r.operator}: ${r.reason}` });
    return finish(
      r.outcome,
      `resolved by ${r.operator}: ${r.reason} (the service could not tell the outcome of reference ${reference})`,
      last,
    );
  };

  // Everything from here may follow a purchase that moved money.
  try {
    const sent = await sendOnce<VendRecord, VendRecord>({
      what: 'electricity purchase (H3)',
      send,
      requery,
      settleMs: durationMs(options.checkSettleDelay ?? DEFAULTS.checkSettleDelay),
      // H4 "not found" after the settle delay is the service's answer; a resend also waits
      // until no earlier attempt can be in flight.
      absentReads: 1,
      maxSends: maxAttempts,
      isRefusal: (err) => {
        const type = activityFailureType(err);
        return type !== undefined && REFUSED.includes(type);
      },
    });
    switch (sent.outcome) {
      case 'answered':
        if (vendRecordOutcome(sent.answer.status) !== 'pending') return fromTransaction(sent.answer, '');
        return await watch('pending', ` (answered ${sent.answer.status})`, sent.answer);
      case 'found':
        if (vendRecordOutcome(sent.record.status) !== 'pending')
          return fromTransaction(sent.record, ' (found by reference after a lost answer)');
        return await watch('pending', ` (found ${sent.record.status} by reference after a lost answer)`, sent.record);
      case 'refused':
        return finish('rejected', `the purchase was refused: ${sent.failure.message}; nothing was vended`);
      case 'never-received':
        return lastSendRefused
          ? finish('rejected', `the purchase was refused: ${sent.lost}; nothing was vended`)
          : finish(
              'not_vended',
              `the service never received the purchase (H4: not found after ${state.attempt} attempt(s)); nothing was vended`,
            );
      case 'unverified':
        return await watch(
          'outcome_unknown',
          ` (the purchase got no answer (${sent.lost}) and H4 could not answer; it is NOT sent again)`,
        );
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled while a purchase may have moved money: ask the service, record what it says.
    return await CancellationScope.nonCancellable(async () => {
      let found: Presence<VendRecord> | undefined;
      try {
        found = await requery();
      } catch {
        found = undefined;
      }
      const note = 'cancel requested after the purchase may have been sent';
      let result: VendResult;
      if (found?.found && vendRecordOutcome(found.record.status) !== 'pending')
        result = fromTransaction(found.record, ` (${note}; H4 by reference)`);
      else if (
        found &&
        !found.found &&
        state.steps.every((s) => !(s.op === 'check' && s.outcome === 'found')) &&
        Date.now() >= inFlightUntil
      )
        result = finish(
          'not_vended',
          `${note}: the service does not know reference ${reference} (H4 not found); nothing was vended`,
        );
      else
        result = finish(
          'outcome_unknown',
          `${note}: the service ${found?.found ? `holds it as ${found.record.status}` : 'could not tell'}; reconcile reference ${reference}`,
          found?.found ? found.record : undefined,
        );
      return { ...result, cancelRequested: true };
    });
  }
}
