// POS remote request (E1/E2): push a payment to a terminal, then follow it until the terminal
// completes it (success or failed) or its 5-minute lifetime ends (E2 404 after the lifetime).
//
//   terminal lock → baseline (A6) → E1 (announced) → [lost answer: search A6] → poll E2 → final look
//
// - One open request per terminal: the flow queues at the terminal's lock workflow
//   (src/workflows/pos-terminal-lock.ts, one per terminal and task queue) and holds it until its
//   request can no longer be open.
// - E1 carries no reference of ours and is never sent twice once it may have left: its activity
//   signals the workflow (acknowledged) right before the HTTP call. Without that mark, or when the
//   client proves nothing left, E1 may be sent again. With it, a lost answer is resolved from the
//   service's own records: A6 lists the terminal's requests; the one that is neither in the
//   baseline (read before E1) nor an earlier lock holder's is ours. More than one candidate:
//   outcome_unknown, visible, never a guess. After lifetime + grace, a successful search that
//   shows nothing proves E1 never arrived (not_sent); searches that keep failing end
//   outcome_unknown after another lifetime.
// - The lifetime counts from the latest time the request can have been created (E1's answer, or
//   the failure of a lost E1); an E2 404 before it ended is an error, and polling goes on.
// - Cancel cannot withdraw the request: the flow watches it until the lifetime ends and reports
//   success_after_cancel if the payer approves anyway. Expiry and cancel end with a final look at
//   the service's transaction record (A6 by reference).
// - outcome_unknown, poll_error and expired_unobserved are parked, not final: the terminal is given
//   back, the request's record is looked up again on a backoff (a lost E1's request searched for
//   first) and the flow ends with the service's answer or an operator's resolveOutcome.
// - A lost E1 answer whose request A6 never showed ends not_sent only where the deployment says A6
//   lists remote requests (options.lostCreateAbsentIs, set by the starter from the config).
// - Polling runs inside one heartbeating activity (E2 every 2-3 s): few history events, a dead
//   worker noticed within the heartbeat timeout, the retried attempt continuing from the details.
//
// The workflow id is `pos-remote-<reference>` and starters refuse duplicates.
import {
  ActivityCancellationType,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PosRemoteActivities } from '../activities/pos-remote';
import {
  PosRemoteInputSchema,
  cancelPosRemoteSignal,
  posRemoteCreateSendingSignal,
  posRemoteStateQuery,
  type PosRemoteInput,
  type PosRemoteParsedInput,
  type PosRemotePollOutcome,
  type PosRemoteRecord,
  type PosRemoteResult,
  POS_REMOTE_PARKED_STATUSES,
  POS_REMOTE_RECORDS_MAX_PAGES,
  POS_REMOTE_RESOLVE_OUTCOMES,
  posRemoteStartSearch,
  type PosRemoteRecordLookup,
  type PosRemoteSearchOutcome,
  type PosRemoteState,
  type PosRemoteStatus,
} from '../shared/pos-remote';
import {
  posTerminalLockWorkflowId,
  releaseTerminalLockSignal,
  terminalLockCheckSignal,
  terminalLockGrantedSignal,
} from '../shared/pos-terminal-lock';
import { paymentSearchAttributes } from '../shared/search-attributes';
import { FailureTypes, failureMessage, failureOf, isRefusalFailure } from '../shared/failures';
import { durationMs } from '../shared/duration';
import { UNKNOWN_OUTCOME_DEFAULTS, type OutcomeResolution } from '../shared/outcome';
import type { Presence } from './steps/send-once';
import { awaitFinal, listenForResolution } from './steps/unknown-outcome';
import { READ, READ_RETRY, moneySend, onQueue } from './steps/activity-options';
import { parseFlowInput } from './steps/flow-input';
import { MerchantEvents, type EventTypes } from './steps/merchant-events';

/** A remote request's merchant events (docs/events.md): the parked statuses need a person. */
const POS_REMOTE_EVENT_TYPES: EventTypes = {
  success: 'pos.remote.succeeded',
  success_after_cancel: 'pos.remote.succeeded',
  failed: 'pos.remote.failed',
  cancelled: 'pos.remote.failed',
  expired: 'pos.remote.failed',
  rejected: 'pos.remote.failed',
  not_sent: 'pos.remote.failed',
  outcome_unknown: 'pos.remote.needs_attention',
  poll_error: 'pos.remote.needs_attention',
  expired_unobserved: 'pos.remote.needs_attention',
};

const DEFAULT_POLL_TIMEOUT = '7 minutes'; // lifetime 5 minutes + margin
const DEFAULT_HEARTBEAT_TIMEOUT = '10s'; // cancellation arrives with a heartbeat: within ~8 s
const DEFAULT_CREATE_HEARTBEAT_TIMEOUT = '5s';
export const DEFAULT_LIFETIME = '5 minutes'; // spec, Limits
const DEFAULT_SEARCH_GRACE = '2 minutes';
const DEFAULT_SEARCH_INTERVAL = '5s';
const DEFAULT_LOCK_TIMEOUT = '15 minutes';
const MAX_UNSENT_E1_ATTEMPTS = 3;

// The lock's acquire and the A6 searches heartbeat (a page at a time): a lost worker is noticed mid-read.
const reads = proxyActivities<PosRemoteActivities>({ ...READ, heartbeatTimeout: '30s' });

export async function posRemoteRequestWorkflow(raw: PosRemoteInput): Promise<PosRemoteResult> {
  const flow = new PosRemoteRequestFlow(parseFlowInput(PosRemoteInputSchema, raw, 'POS remote request'));
  flow.listen();
  return flow.run();
}

type Options = NonNullable<PosRemoteParsedInput['options']>;
type Expired = Extract<PosRemotePollOutcome, { status: 'expired' }>;
type PosRemoteRecordFound = Extract<PosRemoteRecordLookup, { found: true }>;

/** One remote request. */
class PosRemoteRequestFlow {
  // --- state ---

  private readonly o: Options;
  private readonly lifetimeMs: number;
  private readonly state: PosRemoteState;
  private readonly me = { workflowId: workflowInfo().workflowId, runId: workflowInfo().runId };
  private readonly lockId: string;
  private cancelRequested = false;
  /** The active polling, cancelled by a cancel request. */
  private pollScope: CancellationScope | undefined;
  /** The lock's grant, with the request refs of its earlier holders. */
  private granted: { recentRefs: string[] } | undefined;
  /** E1's activity signalled that its call is about to leave. */
  private e1Announced = false;
  /** The requests that are not ours (baseline and earlier holders'), for a search after a lost E1. */
  private exclude: string[] | undefined;
  /** Where the outcome is told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;
  /** The operator's resolveOutcome, once accepted (only while parked). */
  private resolution: () => OutcomeResolution | undefined = () => undefined;

  constructor(private readonly input: PosRemoteParsedInput) {
    this.o = input.options ?? {};
    this.events = new MerchantEvents(input.notify, 'pos-remote', input.reference);
    this.lifetimeMs = durationMs(this.o.requestLifetime ?? DEFAULT_LIFETIME);
    this.state = { reference: input.reference, status: 'locking', amount: input.amount };
    this.lockId = posTerminalLockWorkflowId(input.terminal_id, workflowInfo().taskQueue);
  }

  // --- handlers ---

  listen(): void {
    setHandler(posRemoteStateQuery, () => ({ ...this.state }));
    setHandler(cancelPosRemoteSignal, () => this.onCancel());
    setHandler(terminalLockGrantedSignal, (g) => {
      this.granted = { recentRefs: g.recentRefs };
    });
    setHandler(terminalLockCheckSignal, () => undefined); // its delivery is the answer
    setHandler(posRemoteCreateSendingSignal, () => {
      this.e1Announced = true;
    });
    // Registered from the start: the parked status shows (query, PaymentStatus) while the lock is
    // still being released, and an operator who resolves then must not meet a missing handler.
    this.resolution = listenForResolution(POS_REMOTE_RESOLVE_OUTCOMES, () =>
      (POS_REMOTE_PARKED_STATUSES as readonly string[]).includes(this.state.status),
    );
    // A cancelled workflow is a cancel request: the steps run non-cancellable, as the request
    // (once sent) lives on whatever the caller wants.
    CancellationScope.current().cancelRequested.catch(() => this.onCancel());
  }

  private onCancel(): void {
    this.cancelRequested = true;
    this.state.cancelRequested = true;
    this.pollScope?.cancel();
  }

  // --- the main steps ---

  /** The request decided, then its outcome told (docs/events.md). */
  async run(): Promise<PosRemoteResult> {
    const { input } = this;
    upsertSearchAttributes(paymentSearchAttributes({ ...posRemoteStartSearch(input), status: 'locking' }));
    return CancellationScope.nonCancellable(async () => {
      const result = await this.decide();
      await this.emitOutcome();
      return result;
    });
  }

  /** The lock, then (holding it) baseline, E1, the search for a lost answer, polling; the lock released. */
  private async decide(): Promise<PosRemoteResult> {
    if (!(await this.takeLock())) {
      await this.release();
      return this.result();
    }
    let result: PosRemoteResult;
    try {
      result = await this.holding();
    } finally {
      await this.release();
    }
    // Parked after the terminal is given back: the look-ups need no terminal.
    return this.parkIfUnknown(result);
  }

  /** The event for the flow's status now (one local activity with a target, nothing without). */
  private emitOutcome(): Promise<void> {
    const { input, state } = this;
    return this.events.emitFor(POS_REMOTE_EVENT_TYPES, {
      status: state.status,
      reason: state.message,
      amount: input.amount,
      currency: input.currency,
    });
  }

  /**
   * outcome_unknown, poll_error and expired_unobserved are not final (docs/money-decisions.md): the
   * flow stays open, looks the request up again on a backoff (its record in A6 by request_ref; a
   * lost E1's request is searched for first), ends with the service's answer (success, failed, or
   * abandoned: expired) or with an operator's resolveOutcome (`cli ops resolve`), and after the
   * requery period waits for the operator only.
   */
  private async parkIfUnknown(result: PosRemoteResult): Promise<PosRemoteResult> {
    const parkedAs = this.state.status;
    if (!(POS_REMOTE_PARKED_STATUSES as readonly string[]).includes(parkedAs)) return result;
    const { o } = this;
    const why = this.state.message ?? parkedAs;
    const settled = await awaitFinal<{ status: string; record: PosRemoteRecordFound['record'] }>({
      requery: () => this.lookUpParked(),
      isFinal: (r) => ['success', 'failed', 'abandoned'].includes(r.status),
      absentIsFinal: () => false, // absence proves nothing here: only a record or an operator ends it
      startAs: 'outcome_unknown',
      setStatus: () => undefined, // the parked status (and PaymentStatus) says why it is parked
      onParked: () => this.emitOutcome(),
      resolution: this.resolution,
      pendingForMs: 0,
      requeryForMs: durationMs(o.unknownRequeryFor ?? UNKNOWN_OUTCOME_DEFAULTS.requeryFor),
      firstBackoffMs: durationMs(o.requeryBackoff ?? UNKNOWN_OUTCOME_DEFAULTS.firstBackoff),
      maxBackoffMs: durationMs(o.requeryMaxBackoff ?? UNKNOWN_OUTCOME_DEFAULTS.maxBackoff),
    });
    if (settled.kind === 'resolved') {
      const r = settled.resolution;
      this.state.resolution = r;
      this.setStatus(
        r.outcome as PosRemoteStatus,
        `resolved by ${r.operator}: ${r.reason} (parked as ${parkedAs}: ${why})`,
      );
      return { ...result, ...this.result() };
    }
    if (settled.kind === 'absent') return result; // not reached: absentIsFinal is false
    const { status, record } = settled.record;
    const approved = status === 'success';
    const final: PosRemoteStatus =
      status === 'abandoned'
        ? this.cancelRequested
          ? 'cancelled'
          : 'expired'
        : approved
          ? this.cancelRequested
            ? 'success_after_cancel'
            : 'success'
          : this.cancelRequested
            ? 'cancelled'
            : 'failed';
    this.setStatus(final, `the service's transaction record shows it ${status} (looked up again after: ${why})`);
    return { ...result, ...this.result(), record: record as PosRemoteRecord };
  }

  /** A parked request's record (A6 by request_ref); a lost E1's request is searched for first. */
  private async lookUpParked(): Promise<Presence<{ status: string; record: PosRemoteRecordFound['record'] }>> {
    let requestRef = this.state.requestRef;
    if (!requestRef) {
      if (!this.exclude) return { found: false };
      const found = await reads.posRemoteFindRequest({ ...this.requestShape(), exclude: this.exclude });
      if (found.kind !== 'one') return { found: false };
      requestRef = this.published(found.request_ref, true);
    }
    const look = await reads.posRemoteLookupRecord({ request_ref: requestRef });
    return look.found ? { found: true, record: { status: look.status, record: look.record } } : { found: false };
  }

  /** Queue at the terminal's lock until granted; false (status set, nothing sent) if not granted. */
  private async takeLock(): Promise<boolean> {
    const { input, o } = this;
    try {
      await reads.posTerminalLockAcquire({
        terminal_id: input.terminal_id,
        lockWorkflowId: this.lockId,
        ...(o.lockCheckInterval !== undefined ? { checkIntervalMs: durationMs(o.lockCheckInterval) } : {}),
      });
    } catch (err) {
      this.setStatus('not_sent', `the terminal lock could not be taken; nothing was sent: ${failureMessage(err)}`);
      return false;
    }
    await condition(
      () => this.granted !== undefined || this.cancelRequested,
      durationMs(o.lockTimeout ?? DEFAULT_LOCK_TIMEOUT),
    );
    if (this.granted && !this.cancelRequested) return true;
    if (this.cancelRequested) this.setStatus('cancelled', 'cancelled while waiting for the terminal; nothing was sent');
    else this.setStatus('not_sent', 'the terminal stayed busy with another request; nothing was sent');
    return false;
  }

  /** Holding the lock: the request made (or found again), then followed to its end. */
  private async holding(): Promise<PosRemoteResult> {
    this.setStatus('creating');
    const exclude = await this.baseline();
    if (!exclude) return this.result();
    this.exclude = exclude;
    const sent = await this.create();
    if (sent === 'ended') return this.result();
    if (sent !== 'created' && !(await this.searchLost(sent.lostAt, exclude))) return this.result();
    this.setStatus(
      'pending',
      this.state.recovered ? "found in the service's transaction records after E1's answer was lost" : undefined,
    );
    return this.follow(this.state.requestRef!);
  }

  /** The terminal's requests that exist before ours (A6), plus earlier holders': never taken for ours. */
  private async baseline(): Promise<string[] | undefined> {
    try {
      const before = await reads.posRemoteFindRequest({ ...this.requestShape(), exclude: [] });
      // A merchant with more rows than the read covers gets a partial baseline: enough to send E1
      // (the lock keeps our own flows apart), but a lost E1 answer then cannot be searched for and
      // ends outcome_unknown, never not_sent and never a guessed request.
      return [...before.refs, ...(this.granted?.recentRefs ?? [])];
    } catch (err) {
      this.setStatus(
        'not_sent',
        `the service's transaction records could not be read, so a lost E1 answer could not be found again; nothing was sent: ${failureMessage(err)}`,
      );
      return undefined;
    }
  }

  /**
   * E1, sent again only when it provably never left: 'created' (requestRef set), lost after it may
   * have left (`lostAt`), or 'ended' (status set: nothing to follow).
   */
  private async create(): Promise<'created' | 'ended' | { lostAt: number }> {
    const { input, o, state } = this;
    const { posRemoteCreateRequest } = proxyActivities<PosRemoteActivities>({
      ...moneySend(),
      // Shorter than a send's usual (default 5 s, the caller's option): E1's activity heartbeats
      // from its announce on, and a lost worker's E1 is settled (searched for) sooner.
      heartbeatTimeout: durationMs(o.createHeartbeatTimeout ?? DEFAULT_CREATE_HEARTBEAT_TIMEOUT),
    });
    for (let attempt = 1; ; attempt++) {
      if (this.cancelRequested) {
        this.setStatus('cancelled', 'cancelled before E1 was sent; nothing was sent');
        return 'ended';
      }
      this.e1Announced = false;
      state.createAttempts = attempt;
      try {
        const created = await posRemoteCreateRequest(
          {
            terminal_id: input.terminal_id,
            amount: input.amount,
            ...(input.account_type ? { account_type: input.account_type } : {}),
          },
          { announce: true },
        );
        this.published(created.request_ref);
        state.createdAt = Date.now();
        return 'created';
      } catch (err) {
        if (isRefusalFailure(err)) {
          const type = failureOf(err)?.type ?? undefined;
          this.setStatus('rejected', `the service refused the request (${type}): ${failureMessage(err)}`);
          return 'ended';
        }
        // Announced and not proven unsent (a lost answer, a killed worker): it may have left.
        const neverSent = !this.e1Announced || failureOf(err)?.type === FailureTypes.Transient;
        if (!neverSent) return { lostAt: Date.now() };
        if (attempt >= MAX_UNSENT_E1_ATTEMPTS) {
          this.setStatus('not_sent', `E1 could not be sent (${attempt} attempts, none left): ${failureMessage(err)}`);
          return 'ended';
        }
        await sleep(2000 * attempt);
      }
    }
  }

  /** A lost E1 answer: find the request in the service's records (A6). True when found (requestRef set). */
  private async searchLost(lostAt: number, exclude: string[]): Promise<boolean> {
    const { o, state, lifetimeMs } = this;
    state.createdAt = lostAt; // the latest it can have been created
    const deadline = lostAt + lifetimeMs + durationMs(o.searchGrace ?? DEFAULT_SEARCH_GRACE);
    this.setStatus(
      'searching',
      "E1's answer was lost after it may have reached the service; looking for the request in the service's transaction records",
    );
    let lastProblem = '';
    for (;;) {
      let found: PosRemoteSearchOutcome | undefined;
      try {
        found = await reads.posRemoteFindRequest({ ...this.requestShape(), exclude });
      } catch (err) {
        lastProblem = ` (last search failed: ${failureMessage(err)})`;
      }
      if (found?.kind === 'incomplete') {
        // Part of a list proves neither which request is ours nor that none is: a failed read.
        lastProblem = ` (the transaction list around today is longer than ${POS_REMOTE_RECORDS_MAX_PAGES * 100} rows, too long to search)`;
        found = undefined;
      }
      if (found?.kind === 'one') {
        this.published(found.request_ref, true);
        return true;
      }
      if (found?.kind === 'many') {
        this.setStatus(
          'outcome_unknown',
          `E1's answer was lost and the terminal has several new requests for this amount (${found.request_refs.join(', ')}): which is ours cannot be told. Check the terminal and the transaction list.`,
        );
        return false;
      }
      if (Date.now() >= deadline && this.searchEnded(found, deadline, lastProblem)) return false;
      const searchEveryMs = durationMs(o.searchInterval ?? DEFAULT_SEARCH_INTERVAL);
      await sleep(Math.max(1, deadline > Date.now() ? Math.min(searchEveryMs, deadline - Date.now()) : searchEveryMs));
    }
  }

  /**
   * Past lifetime + grace. Absence is proof only when read: a successful search that shows nothing
   * means E1 never arrived (A6 lists every request from its creation). Failed reads keep searching
   * for another lifetime; then it is outcome_unknown. True when the search ended (status set).
   */
  private searchEnded(found: PosRemoteSearchOutcome | undefined, deadline: number, lastProblem: string): boolean {
    // Absence proves E1 never arrived only where A6 lists remote requests (the deployment says so).
    if (found?.kind === 'none' && (this.o.lostCreateAbsentIs ?? 'outcome_unknown') === 'not_sent') {
      this.setStatus(
        'not_sent',
        `E1's answer was lost, and the service's transaction records show no request for this terminal and amount through its lifetime + grace: E1 never reached the service, nobody could pay it`,
      );
      return true;
    }
    if (found?.kind === 'none' || Date.now() >= deadline + this.lifetimeMs) {
      this.setStatus(
        'outcome_unknown',
        `E1's answer was lost and no request was found in the service's records within its lifetime + grace${lastProblem}. The terminal may have charged the payer: check the transaction list before asking again.`,
      );
      return true;
    }
    return false;
  }

  /** E2: poll until a final state, an expiry after the lifetime, or a cancel (then watched). */
  private async follow(requestRef: string): Promise<PosRemoteResult> {
    const poll = this.poller(requestRef);
    let outcome: PosRemotePollOutcome | undefined;
    if (!this.cancelRequested) {
      this.pollScope = new CancellationScope();
      try {
        outcome = await this.pollScope.run(poll);
      } catch (err) {
        if (!isCancellation(err)) {
          this.setStatus('poll_error', `polling stopped without a final state: ${failureMessage(err)}`);
          return this.result();
        }
      }
      this.pollScope = undefined;
    }
    if (!outcome) return this.watchAfterCancel(requestRef, poll);
    if (outcome.status === 'expired') return this.afterNotFound(outcome, false);
    this.setStatus(outcome.status);
    return this.result(outcome);
  }

  /** Cancelled: the request cannot be withdrawn (no such call). One look now; then it is watched until its lifetime ends. */
  private async watchAfterCancel(
    requestRef: string,
    poll: () => Promise<PosRemotePollOutcome>,
  ): Promise<PosRemoteResult> {
    this.setStatus(
      'cancelling',
      'cancelled by the caller; the request stays on the terminal until its lifetime ends and is watched until then',
    );
    const last = await reads.posRemoteRequeryOnce({ request_ref: requestRef }).catch(() => undefined);
    if (last && (last.status === 'success' || last.status === 'failed')) {
      this.setStatus(last.status, 'cancelled by the caller, but the terminal had already completed the payment');
      return this.result(last, false);
    }
    let watched: PosRemotePollOutcome;
    try {
      watched = await poll();
    } catch (err) {
      this.setStatus(
        'poll_error',
        `cancelled; watching for a late approval stopped without a final state: ${failureMessage(err)}`,
      );
      return this.result();
    }
    if (watched.status === 'expired') return this.afterNotFound(watched, true);
    if (watched.status === 'success')
      this.setStatus(
        'success_after_cancel',
        'the payer approved on the terminal after the cancel: money moved (honour or refund the order)',
      );
    else this.setStatus('cancelled', 'cancelled by the caller; the terminal then declined the request');
    return this.result(watched);
  }

  /** E2 answered 404 after the lifetime: the final look at the service's transaction record. */
  private async afterNotFound(outcome: Expired, afterCancel: boolean): Promise<PosRemoteResult> {
    const found = await reads.posRemoteLookupRecord({ request_ref: this.state.requestRef! }).catch(() => undefined);
    // Only a completed or abandoned record is conclusive; a record still 'pending' after E2's 404 is not.
    const look = found?.found && ['success', 'failed', 'abandoned'].includes(found.status) ? found : undefined;
    const base = this.result(outcome);
    if (look?.found && (look.status === 'success' || look.status === 'failed')) {
      const approved = look.status === 'success';
      const status = approved
        ? afterCancel
          ? 'success_after_cancel'
          : 'success'
        : afterCancel
          ? 'cancelled'
          : 'failed';
      this.setStatus(
        status,
        `E2 answered 404 (the request is gone), and the service's transaction record shows it ${approved ? 'approved' : 'declined'}`,
      );
      return { ...base, status, message: this.state.message, record: look.record as PosRemoteRecord };
    }
    if (look?.found) {
      this.setStatus(
        afterCancel ? 'cancelled' : 'expired',
        `the request's lifetime ended without completion (E2 404; transaction record: ${look.status})`,
      );
    } else if (outcome.unobserved) {
      // The service's record could not confirm it: a watched 404 after the lifetime is expiry, an unwatched one is not.
      this.setStatus(
        'expired_unobserved',
        `E2 answered 404 after ${Math.round((outcome.unobservedMs ?? 0) / 1000)} s without observation (lost worker or outage), and no transaction record confirmed it: the request either expired or completed and was deleted. Check the terminal before asking the payer again.`,
      );
    } else {
      this.setStatus(
        afterCancel ? 'cancelled' : 'expired',
        'the request was not completed within its lifetime (E2 404; no transaction record to confirm)',
      );
    }
    return { ...base, status: this.state.status as PosRemoteResult['status'], message: this.state.message };
  }

  // --- helpers ---

  /** One polling activity (E2 every few seconds, heartbeating) until a final state or a 404 after the lifetime. */
  private poller(requestRef: string): () => Promise<PosRemotePollOutcome> {
    const { o } = this;
    // A read: on the reads queue, whose slots are sized for these polls (docs/deployment.md, "Task queues").
    const { posRemotePollRequest } = proxyActivities<PosRemoteActivities>(
      onQueue('reads', {
        // One attempt runs for the whole lifetime; retried (resuming from its heartbeat) until the deadline.
        scheduleToCloseTimeout: durationMs(o.pollTimeout ?? DEFAULT_POLL_TIMEOUT),
        heartbeatTimeout: durationMs(o.heartbeatTimeout ?? DEFAULT_HEARTBEAT_TIMEOUT),
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        retry: { ...READ_RETRY, maximumAttempts: Infinity },
      }),
    );
    const args = {
      request_ref: requestRef,
      intervalMs: o.pollIntervalMs,
      unobservedGapMs: o.unobservedGapMs,
      expiresNotBefore: this.state.createdAt! + this.lifetimeMs,
    };
    return () => posRemotePollRequest(args);
  }

  private requestShape() {
    const { input } = this;
    return { terminal_id: input.terminal_id, amount: input.amount, currency: input.currency };
  }

  /** Gives the terminal back (with our request's ref, never to be taken for another holder's). */
  private async release(): Promise<void> {
    const { state } = this;
    await getExternalWorkflowHandle(this.lockId)
      .signal(releaseTerminalLockSignal, { ...this.me, ...(state.requestRef ? { requestRef: state.requestRef } : {}) })
      .catch(() => undefined); // no lock running: nothing to release
  }

  /**
   * Our request's request_ref, kept and published (PaymentServiceReference): A6 lists the request
   * under it, and reconciliation finds this flow by it (docs/flows-reconciliation.md).
   */
  private published(requestRef: string, recovered = false): string {
    this.state.requestRef = requestRef;
    if (recovered) this.state.recovered = true;
    upsertSearchAttributes(paymentSearchAttributes({ serviceReference: requestRef }));
    return requestRef;
  }

  private setStatus(status: PosRemoteState['status'], message?: string): void {
    this.state.status = status;
    if (message !== undefined) this.state.message = message;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  }

  private result(outcome?: PosRemotePollOutcome, fromPolling = true): PosRemoteResult {
    return {
      ...this.state,
      status: this.state.status as PosRemoteResult['status'],
      ...(outcome && outcome.status !== 'expired' ? { record: outcome.record } : {}),
      ...(outcome && fromPolling ? { polls: outcome.polls, pollAttempts: outcome.attempt } : {}),
    };
  }
}
