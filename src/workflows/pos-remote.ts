// POS remote request (E1/E2): push a payment to a terminal, then follow it until the terminal
// completes it (success or failed), its 5-minute lifetime ends (E2 404: expired), or the caller
// cancels.
//
// The polling runs inside one heartbeating activity (E2 every 2-3 s), so 5 minutes of polling
// leaves a handful of events in history, a dead worker is noticed within the heartbeat timeout,
// and the retried attempt continues from the heartbeat details.
//
// E1 carries no reference of ours, so it is never repeated: an unknown outcome of E1 ends the
// flow as create_outcome_unknown (a second request could be paid twice). The workflow id is
// `pos-remote-<reference>` and starters refuse duplicates, so one order gets one request.
import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { PosActivities } from '../activities/pos';
import {
  FailureTypes,
  PosRemoteInputSchema,
  activityFailureMessage,
  activityFailureType,
  cancelPosRemoteSignal,
  describeIssues,
  durationMs,
  issuesOf,
  posRemoteStateQuery,
  type PosRemoteInput,
  type PosRemotePollOutcome,
  type PosRemoteResult,
  type PosRemoteState,
} from '../shared/pos';
import { paymentSearchAttributes } from '../shared/search-attributes';

const DEFAULT_POLL_TIMEOUT = '7 minutes'; // lifetime 5 minutes + margin
const DEFAULT_HEARTBEAT_TIMEOUT = '10s'; // cancellation arrives with a heartbeat: within ~8 s

const { posRemoteCreateRequest } = proxyActivities<PosActivities>({
  startToCloseTimeout: '60s',
  retry: { maximumAttempts: 1 }, // E1 is never repeated by Temporal
});

export async function posRemoteRequestWorkflow(raw: PosRemoteInput): Promise<PosRemoteResult> {
  const parsed = PosRemoteInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    throw ApplicationFailure.create({ type: 'InvalidInput', message: `invalid POS remote request: ${describeIssues(issues)}`, nonRetryable: true, details: [issues] });
  }
  const input = parsed.data;
  const state: PosRemoteState = { reference: input.reference, status: 'creating', amount: input.amount };
  let cancelRequested = false;
  let pollScope: CancellationScope | undefined;

  const setStatus = (status: PosRemoteState['status'], message?: string) => {
    state.status = status;
    if (message !== undefined) state.message = message;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };

  setHandler(posRemoteStateQuery, () => ({ ...state }));
  setHandler(cancelPosRemoteSignal, () => {
    cancelRequested = true;
    pollScope?.cancel();
  });

  upsertSearchAttributes(
    paymentSearchAttributes({ flow: 'pos-remote', reference: input.reference, status: 'creating', amount: input.amount, currency: input.currency }),
  );

  // ---- E1: create, once ----
  try {
    const created = await CancellationScope.nonCancellable(() =>
      posRemoteCreateRequest({ terminal_id: input.terminal_id, amount: input.amount, ...(input.account_type ? { account_type: input.account_type } : {}) }),
    );
    state.requestRef = created.request_ref;
  } catch (err) {
    const type = activityFailureType(err);
    if (type === FailureTypes.BadRequest || type === FailureTypes.Unauthorized || type === FailureTypes.InvalidRequest || type === FailureTypes.NotFound) {
      setStatus('rejected', `the service refused the request (${type}): ${activityFailureMessage(err)}`);
    } else {
      setStatus('create_outcome_unknown', 'E1 got no answer: a request may exist on the terminal; it is not re-created (E1 has no reference to check). Check the terminal; it expires in 5 minutes.');
    }
    return finalResult(state);
  }
  setStatus('pending');

  // ---- E2: poll in a heartbeating activity until a final state or a cancel ----
  const heartbeatTimeout = durationMs(input.options?.heartbeatTimeout ?? DEFAULT_HEARTBEAT_TIMEOUT);
  const { posRemotePollRequest } = proxyActivities<PosActivities>({
    scheduleToCloseTimeout: durationMs(input.options?.pollTimeout ?? DEFAULT_POLL_TIMEOUT),
    heartbeatTimeout,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // E2 is read-only: a worker that died is replaced, the new attempt resumes from the heartbeat.
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', nonRetryableErrorTypes: [FailureTypes.Unauthorized, FailureTypes.BadRequest, FailureTypes.InvalidRequest] },
  });
  const requestRef = state.requestRef;

  let outcome: PosRemotePollOutcome | undefined;
  if (!cancelRequested) {
    pollScope = new CancellationScope();
    try {
      outcome = await pollScope.run(() =>
        posRemotePollRequest({ request_ref: requestRef, intervalMs: input.options?.pollIntervalMs, unobservedGapMs: input.options?.unobservedGapMs }),
      );
    } catch (err) {
      if (!isCancellation(err)) {
        setStatus('poll_error', `polling stopped without a final state: ${activityFailureMessage(err)}`);
        return finalResult(state);
      }
      cancelRequested = true; // the workflow itself was cancelled
    }
  }

  if (!outcome) {
    // Cancelled. Polling has stopped (the activity confirmed). The request itself cannot be
    // withdrawn (the spec has no such call); one last E2 tells whether it had already completed.
    setStatus('cancelling');
    const { posRemoteRequeryOnce } = proxyActivities<PosActivities>({ startToCloseTimeout: '20s', retry: { maximumAttempts: 3, initialInterval: '1s' } });
    const last = await CancellationScope.nonCancellable(() => posRemoteRequeryOnce({ request_ref: requestRef }).catch(() => undefined));
    if (last && (last.status === 'success' || last.status === 'failed')) {
      setStatus(last.status, 'cancelled by the caller, but the terminal had already completed the payment');
      return finalResult(state, last, false);
    }
    setStatus('cancelled', 'polling cancelled by the caller; the request stays on the terminal until its 5-minute lifetime ends');
    return finalResult(state);
  }

  if (outcome.status === 'expired' && outcome.unobserved) {
    // Never report "not paid" for a request nobody watched: the payer may have paid.
    setStatus(
      'expired_unobserved',
      `E2 answered 404 after ${Math.round((outcome.unobservedMs ?? 0) / 1000)} s without observation (lost worker or outage): the request either expired or completed and was deleted. Check the terminal before asking the payer again.`,
    );
    return finalResult(state, outcome);
  }
  setStatus(outcome.status, outcome.status === 'expired' ? 'the request was not completed within its 5-minute lifetime' : undefined);
  return finalResult(state, outcome);
}

function finalResult(state: PosRemoteState, outcome?: PosRemotePollOutcome, fromPolling = true): PosRemoteResult {
  return {
    ...state,
    status: state.status as PosRemoteResult['status'],
    ...(outcome && outcome.status !== 'expired' ? { record: outcome.record } : {}),
    ...(outcome && fromPolling ? { polls: outcome.polls, pollAttempts: outcome.attempt } : {}),
  };
}
