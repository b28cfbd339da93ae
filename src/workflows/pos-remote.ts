// POS remote request (E1/E2): push a payment to a terminal, then follow it until the terminal
// completes it (success or failed) or its 5-minute lifetime ends (the request requery 404 after the lifetime).
//
//   terminal lock → baseline (A6) → create (E1, announced) → [lost: search the list (A6)] → poll (E2) → final look
//
// - One open request per terminal: the flow queues at the terminal's lock workflow
//   (src/workflows/pos-terminal-lock.ts, one per terminal and task queue) and holds it until its
//   request can no longer be open.
// - the request create carries no reference of ours and is never sent twice once it may have left: its activity
//   signals the workflow (acknowledged) right before the HTTP call. Without that mark, or when the
//   client proves nothing left, the request create may be sent again. With it, a lost answer is resolved from the
//   service's own records: the transaction list lists the terminal's requests; the one that is neither in the
//   baseline (read before the request create) nor an earlier lock holder's is ours. More than one candidate:
//   outcome_unknown, visible, never a guess. After lifetime + grace, a successful search that
//   shows nothing proves the request create never arrived (not_sent); searches that keep failing end
//   outcome_unknown after another lifetime.
// - The lifetime counts from the latest time the request can have been created (the request create's answer, or
//   the failure of a lost one); a request requery 404 before it ended is an error, and polling goes on.
// - Cancel cannot withdraw the request: the flow watches it until the lifetime ends and reports
//   success_after_cancel if the payer approves anyway. Expiry and cancel end with a final look at
//   the service's transaction record (the transaction list by reference).
// - outcome_unknown, poll_error and expired_unobserved are parked, not final: the terminal is given
//   back, the request's record is looked up again on a backoff (a lost request create's request searched for
//   first) and the flow ends with the service's answer or an operator's resolveOutcome.
// - A lost request create answer whose request the transaction list never showed ends not_sent only where the
//   deployment says the transaction list lists remote requests (options.lostCreateAbsentIs, set by the starter from the
//   config).
// - Polling runs inside one heartbeating activity (the request requery every 2-3 s): few history events, a dead
//   worker noticed within the heartbeat timeout, the retried attempt continuing from the details.
//
// The workflow id is `pos-remote-<reference>` and starters refuse duplicates.
//
// Layout: `posRemoteRequestWorkflow` (a thin wrapper), then `PosRemoteRequestFlow`: its parts, its
// handlers (`listen`), the main steps (`run`); the parts, in the order they run, under ./pos-remote/:
// the request's state (request.ts), the terminal lock (terminal-lock.ts), the request create (send.ts), the request
// requery (follow.ts), the parked look-ups (parked.ts).
import { CancellationScope, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import {
  PosRemoteInputSchema,
  cancelPosRemoteSignal,
  posRemoteCreateSendingSignal,
  posRemoteStateQuery,
  type PosRemoteInput,
  type PosRemoteParsedInput,
  type PosRemoteResult,
  POS_REMOTE_RESOLVE_OUTCOMES,
  posRemoteStartSearch,
} from '../shared/pos-remote';
import { terminalLockCheckSignal, terminalLockGrantedSignal } from '../shared/pos-terminal-lock';
import { paymentSearchAttributes } from '../shared/search-attributes';
import type { OutcomeResolution } from '../shared/outcome';
import { listenForResolution } from './steps/unknown-outcome';
import { parseFlowInput } from './steps/flow-input';
import { MerchantEvents, type EventTypes } from './steps/merchant-events';
import { RemoteRequest } from './pos-remote/request';
import { TerminalLock } from './pos-remote/terminal-lock';
import { RequestSend } from './pos-remote/send';
import { RequestFollow } from './pos-remote/follow';
import { ParkedRequest } from './pos-remote/parked';

export { DEFAULT_LIFETIME } from './pos-remote/request';

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

export async function posRemoteRequestWorkflow(raw: PosRemoteInput): Promise<PosRemoteResult> {
  const flow = new PosRemoteRequestFlow(parseFlowInput(PosRemoteInputSchema, raw, 'POS remote request'));
  flow.listen();
  return flow.run();
}

/** One remote request. */
class PosRemoteRequestFlow {
  // --- state: the request, and the parts that move it ---

  private readonly request: RemoteRequest;
  private readonly lock: TerminalLock;
  private readonly send: RequestSend;
  private readonly follower: RequestFollow;
  /** Where the outcome is told (nothing without the input's `notify`). */
  private readonly events: MerchantEvents;
  /** The operator's resolveOutcome, once accepted (only while parked). */
  private resolution: () => OutcomeResolution | undefined = () => undefined;

  constructor(input: PosRemoteParsedInput) {
    this.events = new MerchantEvents(input.notify, 'pos-remote', input.reference);
    this.request = new RemoteRequest(input);
    this.lock = new TerminalLock(this.request);
    this.send = new RequestSend(this.request, this.lock);
    this.follower = new RequestFollow(this.request);
  }

  // --- handlers ---

  listen(): void {
    setHandler(posRemoteStateQuery, () => ({ ...this.request.state }));
    setHandler(cancelPosRemoteSignal, () => this.onCancel());
    setHandler(terminalLockGrantedSignal, (g) => this.lock.onGranted(g.recentRefs));
    setHandler(terminalLockCheckSignal, () => undefined); // its delivery is the answer
    setHandler(posRemoteCreateSendingSignal, () => this.send.onAnnounced());
    // Registered from the start: the parked status shows (query, PaymentStatus) while the lock is
    // still being released, and an operator who resolves then must not meet a missing handler.
    this.resolution = listenForResolution(POS_REMOTE_RESOLVE_OUTCOMES, () => this.request.isParked());
    // A cancelled workflow is a cancel request: the steps run non-cancellable, as the request
    // (once sent) lives on whatever the caller wants.
    CancellationScope.current().cancelRequested.catch(() => this.onCancel());
  }

  private onCancel(): void {
    this.request.cancelRequested = true;
    this.request.state.cancelRequested = true;
    this.follower.cancel();
  }

  // --- the main steps ---

  /** The request decided, then its outcome told (docs/events.md). */
  async run(): Promise<PosRemoteResult> {
    const { input } = this.request;
    upsertSearchAttributes(paymentSearchAttributes({ ...posRemoteStartSearch(input), status: 'locking' }));
    return CancellationScope.nonCancellable(async () => {
      const result = await this.decide();
      await this.emitOutcome();
      return result;
    });
  }

  /**
   * The lock, then (holding it) baseline, the request create (E1), the search for a lost answer, polling; the lock
   * released.
   */
  private async decide(): Promise<PosRemoteResult> {
    if (!(await this.lock.take())) {
      await this.lock.release();
      return this.request.result();
    }
    let result: PosRemoteResult;
    try {
      result = await this.holding();
    } finally {
      await this.lock.release();
    }
    // Parked after the terminal is given back: the look-ups need no terminal.
    return new ParkedRequest(this.request, this.send, this.resolution, () => this.emitOutcome()).settle(result);
  }

  /** Holding the lock: the request made (or found again), then followed to its end. */
  private async holding(): Promise<PosRemoteResult> {
    const { request } = this;
    request.setStatus('creating');
    if (!(await this.send.send())) return request.result();
    request.setStatus(
      'pending',
      request.state.recovered
        ? "found in the service's transaction records after the answer to the request create (E1) was lost"
        : undefined,
    );
    return this.follower.follow(request.state.requestRef!);
  }

  /** The event for the flow's status now (one local activity with a target, nothing without). */
  private emitOutcome(): Promise<void> {
    const { input, state } = this.request;
    return this.events.emitFor(POS_REMOTE_EVENT_TYPES, {
      status: state.status,
      reason: state.message,
      amount: input.amount,
      currency: input.currency,
    });
  }
}
