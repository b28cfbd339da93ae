// POS remote request (E1/E2): push a payment to a terminal, then follow it until the terminal
// completes it (success or failed) or its 5-minute lifetime ends (E2 404 after the lifetime).
//
//   terminal lock → baseline (A6) → E1 (announced) → [lost answer: search A6] → poll E2 → final look
//
// - One open request per terminal: the flow queues at the terminal's lock workflow
//   (src/workflows/pos-terminal-lock.ts) and holds it until its request can no longer be open.
// - E1 carries no reference of ours and is never sent twice once it may have left: its activity
//   signals the workflow (acknowledged) right before the HTTP call. Without that mark, or when the
//   client proves nothing left, E1 may be sent again. With it, a lost answer is resolved from the
//   service's own records: A6 lists the terminal's requests; the one that is neither in the
//   baseline (read before E1) nor an earlier lock holder's is ours. Nothing found within the
//   lifetime + grace, or more than one candidate: outcome_unknown, visible, never a guess.
// - The lifetime counts from the latest time the request can have been created (E1's answer, or
//   the failure of a lost E1); an E2 404 before it ended is an error, and polling goes on.
// - Cancel cannot withdraw the request: the flow watches it until the lifetime ends and reports
//   success_after_cancel if the payer approves anyway. Expiry and cancel end with a final look at
//   the service's transaction record (A6 by reference).
// - Polling runs inside one heartbeating activity (E2 every 2-3 s): few history events, a dead
//   worker noticed within the heartbeat timeout, the retried attempt continuing from the details.
//
// Flows started before this design (no patch marker) run legacyFlow unchanged, so their
// histories replay. The workflow id is `pos-remote-<reference>` and starters refuse duplicates.
import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PosActivities } from '../activities/pos';
import {
  PosRemoteInputSchema,
  cancelPosRemoteSignal,
  posRemoteE1SendingSignal,
  posRemoteStateQuery,
  posTerminalLockWorkflowId,
  releaseTerminalLockSignal,
  terminalLockCheckSignal,
  terminalLockGrantedSignal,
  type PosRemoteInput,
  type PosRemoteParsedInput,
  type PosRemotePollOutcome,
  type PosRemoteRecord,
  type PosRemoteResult,
  POS_REMOTE_A6_MAX_PAGES,
  type PosRemoteSearchOutcome,
  type PosRemoteState,
} from '../shared/pos';
import { paymentSearchAttributes } from '../shared/search-attributes';
import {
  FailureTypes,
  activityFailureMessage,
  activityFailureType,
  describeIssues,
  issuesOf,
} from '../shared/failures';
import { durationMs } from '../shared/duration';

const DEFAULT_POLL_TIMEOUT = '7 minutes'; // lifetime 5 minutes + margin
const DEFAULT_HEARTBEAT_TIMEOUT = '10s'; // cancellation arrives with a heartbeat: within ~8 s
const DEFAULT_CREATE_HEARTBEAT_TIMEOUT = '5s';
const DEFAULT_LIFETIME = '5 minutes'; // spec, Limits
const DEFAULT_SEARCH_GRACE = '2 minutes';
const DEFAULT_SEARCH_INTERVAL = '5s';
const DEFAULT_LOCK_TIMEOUT = '15 minutes';
const MAX_UNSENT_E1_ATTEMPTS = 3;
/** Flows with this marker take the lock and resolve lost E1 answers; older ones run legacyFlow. */
export const POS_REMOTE_SAFETY_PATCH = 'pos-remote-terminal-lock-and-lost-e1-search';

const { posRemoteCreateRequest } = proxyActivities<PosActivities>({
  startToCloseTimeout: '60s',
  retry: { maximumAttempts: 1 }, // E1 is never repeated by Temporal
});

export async function posRemoteRequestWorkflow(raw: PosRemoteInput): Promise<PosRemoteResult> {
  const parsed = PosRemoteInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    throw ApplicationFailure.create({
      type: 'InvalidInput',
      message: `invalid POS remote request: ${describeIssues(issues)}`,
      nonRetryable: true,
      details: [issues],
    });
  }
  const input = parsed.data;
  if (patched(POS_REMOTE_SAFETY_PATCH)) return lockedFlow(input);
  return legacyFlow(input);
}

const REFUSED: string[] = [
  FailureTypes.BadRequest,
  FailureTypes.Unauthorized,
  FailureTypes.InvalidRequest,
  FailureTypes.NotFound,
];

async function lockedFlow(input: PosRemoteParsedInput): Promise<PosRemoteResult> {
  const o = input.options ?? {};
  const lifetimeMs = durationMs(o.requestLifetime ?? DEFAULT_LIFETIME);
  const state: PosRemoteState = { reference: input.reference, status: 'locking', amount: input.amount };
  const me = { workflowId: workflowInfo().workflowId, runId: workflowInfo().runId };
  let cancelRequested = false;
  let pollScope: CancellationScope | undefined;
  let granted: { recentRefs: string[] } | undefined;
  let e1Announced = false;

  const setStatus = (status: PosRemoteState['status'], message?: string) => {
    state.status = status;
    if (message !== undefined) state.message = message;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
  const onCancel = () => {
    cancelRequested = true;
    state.cancelRequested = true;
    pollScope?.cancel();
  };

  setHandler(posRemoteStateQuery, () => ({ ...state }));
  setHandler(cancelPosRemoteSignal, onCancel);
  setHandler(terminalLockGrantedSignal, (g) => {
    granted = { recentRefs: g.recentRefs };
  });
  setHandler(terminalLockCheckSignal, () => undefined); // its delivery is the answer
  setHandler(posRemoteE1SendingSignal, () => {
    e1Announced = true;
  });
  // A cancelled workflow is a cancel request: the steps below run non-cancellable, as the
  // request (once sent) lives on whatever the caller wants.
  CancellationScope.current().cancelRequested.catch(onCancel);

  upsertSearchAttributes(
    paymentSearchAttributes({
      flow: 'pos-remote',
      reference: input.reference,
      status: 'locking',
      amount: input.amount,
      currency: input.currency,
    }),
  );

  const reads = proxyActivities<PosActivities>({
    startToCloseTimeout: '60s',
    heartbeatTimeout: '30s',
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '10s',
      maximumAttempts: 5,
      nonRetryableErrorTypes: [FailureTypes.Unauthorized, FailureTypes.BadRequest, FailureTypes.InvalidRequest],
    },
  });
  // A lock per task queue too (histories from before the patch used the terminal alone).
  const lockId = patched('terminal-lock-per-task-queue')
    ? posTerminalLockWorkflowId(input.terminal_id, workflowInfo().taskQueue)
    : posTerminalLockWorkflowId(input.terminal_id);
  const release = () =>
    getExternalWorkflowHandle(lockId)
      .signal(releaseTerminalLockSignal, { ...me, ...(state.requestRef ? { requestRef: state.requestRef } : {}) })
      .catch(() => undefined); // no lock running: nothing to release

  return CancellationScope.nonCancellable(async () => {
    // ---- the terminal lock ----
    try {
      await reads.posTerminalLockAcquire({
        terminal_id: input.terminal_id,
        lockWorkflowId: lockId,
        ...(o.lockCheckInterval !== undefined ? { checkIntervalMs: durationMs(o.lockCheckInterval) } : {}),
      });
    } catch (err) {
      setStatus('not_sent', `the terminal lock could not be taken; nothing was sent: ${activityFailureMessage(err)}`);
      await release();
      return finalResult(state);
    }
    await condition(() => granted !== undefined || cancelRequested, durationMs(o.lockTimeout ?? DEFAULT_LOCK_TIMEOUT));
    if (!granted || cancelRequested) {
      setStatus(
        cancelRequested ? 'cancelled' : 'not_sent',
        cancelRequested
          ? 'cancelled while waiting for the terminal; nothing was sent'
          : 'the terminal stayed busy with another request; nothing was sent',
      );
      await release();
      return finalResult(state);
    }
    try {
      return await holdingFlow();
    } finally {
      await release();
    }
  });

  async function holdingFlow(): Promise<PosRemoteResult> {
    setStatus('creating');
    // ---- baseline: the terminal's requests that exist before ours ----
    let exclude: string[];
    try {
      const before = await reads.posRemoteFindRequest({
        terminal_id: input.terminal_id,
        amount: input.amount,
        currency: input.currency,
        exclude: [],
      });
      // A merchant with more rows than the read covers gets a partial baseline: enough to send E1
      // (the lock keeps our own flows apart), but a lost E1 answer then cannot be searched for and
      // ends outcome_unknown, never not_sent and never a guessed request.
      exclude = [...before.refs, ...(granted?.recentRefs ?? [])];
    } catch (err) {
      setStatus(
        'not_sent',
        `the service's transaction records could not be read, so a lost E1 answer could not be found again; nothing was sent: ${activityFailureMessage(err)}`,
      );
      return finalResult(state);
    }

    // ---- E1: sent again only when it provably never left ----
    const { posRemoteCreateRequest: create } = proxyActivities<PosActivities>({
      startToCloseTimeout: '60s',
      heartbeatTimeout: durationMs(o.createHeartbeatTimeout ?? DEFAULT_CREATE_HEARTBEAT_TIMEOUT),
      retry: { maximumAttempts: 1 },
    });
    let lostAt: number | undefined;
    for (let attempt = 1; ; attempt++) {
      if (cancelRequested) {
        setStatus('cancelled', 'cancelled before E1 was sent; nothing was sent');
        return finalResult(state);
      }
      e1Announced = false;
      state.createAttempts = attempt;
      try {
        const created = await create(
          {
            terminal_id: input.terminal_id,
            amount: input.amount,
            ...(input.account_type ? { account_type: input.account_type } : {}),
          },
          { announce: true },
        );
        state.requestRef = created.request_ref;
        state.createdAt = Date.now();
        break;
      } catch (err) {
        const type = activityFailureType(err);
        if (type !== undefined && REFUSED.includes(type)) {
          setStatus('rejected', `the service refused the request (${type}): ${activityFailureMessage(err)}`);
          return finalResult(state);
        }
        // Announced and not proven unsent (a lost answer, a killed worker): it may have left.
        const neverSent = !e1Announced || type === FailureTypes.Transient;
        if (!neverSent) {
          lostAt = Date.now();
          break;
        }
        if (attempt >= MAX_UNSENT_E1_ATTEMPTS) {
          setStatus(
            'not_sent',
            `E1 could not be sent (${attempt} attempts, none left): ${activityFailureMessage(err)}`,
          );
          return finalResult(state);
        }
        await sleep(2000 * attempt);
      }
    }

    // ---- a lost E1 answer: find the request in the service's records ----
    if (lostAt !== undefined) {
      state.createdAt = lostAt; // the latest it can have been created
      const deadline = lostAt + lifetimeMs + durationMs(o.searchGrace ?? DEFAULT_SEARCH_GRACE);
      setStatus(
        'searching',
        "E1's answer was lost after it may have reached the service; looking for the request in the service's transaction records",
      );
      let lastProblem = '';
      for (;;) {
        let found: PosRemoteSearchOutcome | undefined;
        try {
          found = await reads.posRemoteFindRequest({
            terminal_id: input.terminal_id,
            amount: input.amount,
            currency: input.currency,
            exclude,
          });
        } catch (err) {
          lastProblem = ` (last search failed: ${activityFailureMessage(err)})`;
        }
        if (found?.kind === 'incomplete') {
          // Part of a list proves neither which request is ours nor that none is: a failed read.
          lastProblem = ` (the transaction list around today is longer than ${POS_REMOTE_A6_MAX_PAGES * 100} rows, too long to search)`;
          found = undefined;
        }
        if (found?.kind === 'one') {
          state.requestRef = found.request_ref;
          state.recovered = true;
          break;
        }
        if (found?.kind === 'many') {
          setStatus(
            'outcome_unknown',
            `E1's answer was lost and the terminal has several new requests for this amount (${found.request_refs.join(', ')}): which is ours cannot be told. Check the terminal and the transaction list.`,
          );
          return finalResult(state);
        }
        if (Date.now() >= deadline && patched('lost-e1-absent-is-not-sent')) {
          // Absence is proof only when read: after lifetime + grace, a successful search that shows
          // nothing means E1 never arrived (A6 lists every request from its creation). Failed
          // reads keep searching for another lifetime; then it is outcome_unknown.
          if (found?.kind === 'none' && (o.lostCreateAbsentIs ?? 'not_sent') === 'not_sent') {
            setStatus(
              'not_sent',
              `E1's answer was lost, and the service's transaction records show no request for this terminal and amount through its lifetime + grace: E1 never reached the service, nobody could pay it`,
            );
            return finalResult(state);
          }
          if (found?.kind === 'none' || Date.now() >= deadline + lifetimeMs) {
            setStatus(
              'outcome_unknown',
              `E1's answer was lost and no request was found in the service's records within its lifetime + grace${lastProblem}. The terminal may have charged the payer: check the transaction list before asking again.`,
            );
            return finalResult(state);
          }
        } else if (Date.now() >= deadline) {
          setStatus(
            'outcome_unknown',
            `E1's answer was lost and no request was found in the service's records within its lifetime + grace${lastProblem}. The terminal may have charged the payer: check the transaction list before asking again.`,
          );
          return finalResult(state);
        }
        const searchEveryMs = durationMs(o.searchInterval ?? DEFAULT_SEARCH_INTERVAL);
        await sleep(
          Math.max(1, deadline > Date.now() ? Math.min(searchEveryMs, deadline - Date.now()) : searchEveryMs),
        );
      }
    }
    setStatus(
      'pending',
      state.recovered ? "found in the service's transaction records after E1's answer was lost" : undefined,
    );
    const requestRef = state.requestRef!;

    // ---- E2: poll until a final state, an expiry after the lifetime, or a cancel ----
    const { posRemotePollRequest } = proxyActivities<PosActivities>({
      scheduleToCloseTimeout: durationMs(o.pollTimeout ?? DEFAULT_POLL_TIMEOUT),
      heartbeatTimeout: durationMs(o.heartbeatTimeout ?? DEFAULT_HEARTBEAT_TIMEOUT),
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: {
        initialInterval: '1s',
        backoffCoefficient: 2,
        maximumInterval: '10s',
        nonRetryableErrorTypes: [FailureTypes.Unauthorized, FailureTypes.BadRequest, FailureTypes.InvalidRequest],
      },
    });
    const pollArgs = {
      request_ref: requestRef,
      intervalMs: o.pollIntervalMs,
      unobservedGapMs: o.unobservedGapMs,
      expiresNotBefore: state.createdAt! + lifetimeMs,
    };

    let outcome: PosRemotePollOutcome | undefined;
    if (!cancelRequested) {
      pollScope = new CancellationScope();
      try {
        outcome = await pollScope.run(() => posRemotePollRequest(pollArgs));
      } catch (err) {
        if (!isCancellation(err)) {
          setStatus('poll_error', `polling stopped without a final state: ${activityFailureMessage(err)}`);
          return finalResult(state);
        }
      }
      pollScope = undefined;
    }

    if (!outcome) {
      // Cancelled: the request cannot be withdrawn (no such call). One look now; then it is
      // watched until its lifetime ends, so an approval after the cancel is not lost.
      setStatus(
        'cancelling',
        'cancelled by the caller; the request stays on the terminal until its lifetime ends and is watched until then',
      );
      const last = await reads.posRemoteRequeryOnce({ request_ref: requestRef }).catch(() => undefined);
      if (last && (last.status === 'success' || last.status === 'failed')) {
        setStatus(last.status, 'cancelled by the caller, but the terminal had already completed the payment');
        return finalResult(state, last, false);
      }
      let watched: PosRemotePollOutcome;
      try {
        watched = await posRemotePollRequest(pollArgs);
      } catch (err) {
        setStatus(
          'poll_error',
          `cancelled; watching for a late approval stopped without a final state: ${activityFailureMessage(err)}`,
        );
        return finalResult(state);
      }
      if (watched.status === 'expired') return afterNotFound(watched, true);
      if (watched.status === 'success')
        setStatus(
          'success_after_cancel',
          'the payer approved on the terminal after the cancel: money moved (honour or refund the order)',
        );
      else setStatus('cancelled', 'cancelled by the caller; the terminal then declined the request');
      return finalResult(state, watched);
    }
    if (outcome.status === 'expired') return afterNotFound(outcome, false);
    setStatus(outcome.status);
    return finalResult(state, outcome);
  }

  /** E2 answered 404 after the lifetime: the final look at the service's transaction record. */
  async function afterNotFound(
    outcome: Extract<PosRemotePollOutcome, { status: 'expired' }>,
    afterCancel: boolean,
  ): Promise<PosRemoteResult> {
    const found = await reads.posRemoteLookupRecord({ request_ref: state.requestRef! }).catch(() => undefined);
    // Only a completed or abandoned record is conclusive; a record still 'pending' after E2's 404 is not.
    const look = found?.found && ['success', 'failed', 'abandoned'].includes(found.status) ? found : undefined;
    const base = { ...finalResult(state, outcome) };
    if (look?.found && (look.status === 'success' || look.status === 'failed')) {
      const approved = look.status === 'success';
      const status = approved
        ? afterCancel
          ? 'success_after_cancel'
          : 'success'
        : afterCancel
          ? 'cancelled'
          : 'failed';
      setStatus(
        status,
        `E2 answered 404 (the request is gone), and the service's transaction record shows it ${approved ? 'approved' : 'declined'}`,
      );
      return { ...base, status, message: state.message, record: look.record as PosRemoteRecord };
    }
    if (look?.found) {
      setStatus(
        afterCancel ? 'cancelled' : 'expired',
        `the request's lifetime ended without completion (E2 404; transaction record: ${look.status})`,
      );
      return { ...base, status: state.status as PosRemoteResult['status'], message: state.message };
    }
    // The service's record could not confirm it: a watched 404 after the lifetime is expiry, an unwatched one is not.
    if (outcome.unobserved) {
      setStatus(
        'expired_unobserved',
        `E2 answered 404 after ${Math.round((outcome.unobservedMs ?? 0) / 1000)} s without observation (lost worker or outage), and no transaction record confirmed it: the request either expired or completed and was deleted. Check the terminal before asking the payer again.`,
      );
    } else {
      setStatus(
        afterCancel ? 'cancelled' : 'expired',
        'the request was not completed within its lifetime (E2 404; no transaction record to confirm)',
      );
    }
    return { ...base, status: state.status as PosRemoteResult['status'], message: state.message };
  }
}

/** Flows started before the terminal lock (no patch marker): the original code, unchanged. */
async function legacyFlow(input: PosRemoteParsedInput): Promise<PosRemoteResult> {
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
    paymentSearchAttributes({
      flow: 'pos-remote',
      reference: input.reference,
      status: 'creating',
      amount: input.amount,
      currency: input.currency,
    }),
  );

  // ---- E1: create, once ----
  try {
    const created = await CancellationScope.nonCancellable(() =>
      posRemoteCreateRequest({
        terminal_id: input.terminal_id,
        amount: input.amount,
        ...(input.account_type ? { account_type: input.account_type } : {}),
      }),
    );
    state.requestRef = created.request_ref;
  } catch (err) {
    const type = activityFailureType(err);
    if (
      type === FailureTypes.BadRequest ||
      type === FailureTypes.Unauthorized ||
      type === FailureTypes.InvalidRequest ||
      type === FailureTypes.NotFound
    ) {
      setStatus('rejected', `the service refused the request (${type}): ${activityFailureMessage(err)}`);
    } else {
      setStatus(
        'create_outcome_unknown',
        'E1 got no answer: a request may exist on the terminal; it is not re-created (E1 has no reference to check). Check the terminal; it expires in 5 minutes.',
      );
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
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '10s',
      nonRetryableErrorTypes: [FailureTypes.Unauthorized, FailureTypes.BadRequest, FailureTypes.InvalidRequest],
    },
  });
  const requestRef = state.requestRef;

  let outcome: PosRemotePollOutcome | undefined;
  if (!cancelRequested) {
    pollScope = new CancellationScope();
    try {
      outcome = await pollScope.run(() =>
        posRemotePollRequest({
          request_ref: requestRef,
          intervalMs: input.options?.pollIntervalMs,
          unobservedGapMs: input.options?.unobservedGapMs,
        }),
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
    const { posRemoteRequeryOnce } = proxyActivities<PosActivities>({
      startToCloseTimeout: '20s',
      retry: { maximumAttempts: 3, initialInterval: '1s' },
    });
    const last = await CancellationScope.nonCancellable(() =>
      posRemoteRequeryOnce({ request_ref: requestRef }).catch(() => undefined),
    );
    if (last && (last.status === 'success' || last.status === 'failed')) {
      setStatus(last.status, 'cancelled by the caller, but the terminal had already completed the payment');
      return finalResult(state, last, false);
    }
    setStatus(
      'cancelled',
      'polling cancelled by the caller; the request stays on the terminal until its 5-minute lifetime ends',
    );
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
  setStatus(
    outcome.status,
    outcome.status === 'expired' ? 'the request was not completed within its 5-minute lifetime' : undefined,
  );
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
