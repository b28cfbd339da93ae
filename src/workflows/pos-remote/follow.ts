// The request requery (E2): the request followed until the terminal completes it or its lifetime ends. Polling runs
// inside one heartbeating activity (the request requery every 2-3 s): few history events, a dead worker noticed within
// the heartbeat timeout, the retried attempt continuing from the details. The lifetime counts from the
// latest time the request can have been created (the answer of the request create (E1), or the failure of a lost one).
// Cancel cannot withdraw the request: it is watched until the lifetime ends (success_after_cancel if the
// payer approves anyway). Expiry and cancel end with a final look at the service's transaction
// record (the transaction list (A6) by reference).
import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { PosRemoteActivities } from '../../activities/pos-remote';
import type { PosRemotePollOutcome, PosRemoteRecord, PosRemoteResult } from '../../shared/pos-remote';
import { failureMessage } from '../../shared/failures';
import { durationMs } from '../../shared/duration';
import { longPoll } from '../steps/activity-options';
import { DEFAULT_HEARTBEAT_TIMEOUT, DEFAULT_POLL_TIMEOUT, reads, type RemoteRequest } from './request';

type Expired = Extract<PosRemotePollOutcome, { status: 'expired' }>;

export class RequestFollow {
  /** The active polling, cancelled by a cancel request. */
  private pollScope: CancellationScope | undefined;

  constructor(private readonly request: RemoteRequest) {}

  /** A cancel request stops the polling (the request is then watched). */
  cancel(): void {
    this.pollScope?.cancel();
  }

  /** The request requery (E2): poll until a final state, an expiry after the lifetime, or a cancel (then watched). */
  async follow(requestRef: string): Promise<PosRemoteResult> {
    const { request } = this;
    const poll = this.poller(requestRef);
    let outcome: PosRemotePollOutcome | undefined;
    if (!request.cancelRequested) {
      this.pollScope = new CancellationScope();
      try {
        outcome = await this.pollScope.run(poll);
      } catch (err) {
        if (!isCancellation(err)) {
          request.setStatus('poll_error', `polling stopped without a final state: ${failureMessage(err)}`);
          return request.result();
        }
      }
      this.pollScope = undefined;
    }
    if (!outcome) return this.watchAfterCancel(requestRef, poll);
    if (outcome.status === 'expired') return this.afterNotFound(outcome, false);
    request.setStatus(outcome.status);
    return request.result(outcome);
  }

  /**
   * Cancelled: the request cannot be withdrawn (no such call). One look now; then it is watched until its lifetime
   * ends.
   */
  private async watchAfterCancel(
    requestRef: string,
    poll: () => Promise<PosRemotePollOutcome>,
  ): Promise<PosRemoteResult> {
    const { request } = this;
    request.setStatus(
      'cancelling',
      'cancelled by the caller; the request stays on the terminal until its lifetime ends and is watched until then',
    );
    const last = await reads.posRemoteRequeryOnce({ request_ref: requestRef }).catch(() => undefined);
    if (last && (last.status === 'success' || last.status === 'failed')) {
      request.setStatus(last.status, 'cancelled by the caller, but the terminal had already completed the payment');
      return request.result(last, false);
    }
    let watched: PosRemotePollOutcome;
    try {
      watched = await poll();
    } catch (err) {
      request.setStatus(
        'poll_error',
        `cancelled; watching for a late approval stopped without a final state: ${failureMessage(err)}`,
      );
      return request.result();
    }
    if (watched.status === 'expired') return this.afterNotFound(watched, true);
    if (watched.status === 'success')
      request.setStatus(
        'success_after_cancel',
        'the payer approved on the terminal after the cancel: money moved (honour or refund the order)',
      );
    else request.setStatus('cancelled', 'cancelled by the caller; the terminal then declined the request');
    return request.result(watched);
  }

  /** The request requery (E2) answered 404 after the lifetime: the final look at the service's transaction record. */
  private async afterNotFound(outcome: Expired, afterCancel: boolean): Promise<PosRemoteResult> {
    const { request } = this;
    const found = await reads.posRemoteLookupRecord({ request_ref: request.state.requestRef! }).catch(() => undefined);
    // Only a completed or abandoned record is conclusive; a record still 'pending' after the 404 of the request requery
    // (E2) is not.
    const look = found?.found && ['success', 'failed', 'abandoned'].includes(found.status) ? found : undefined;
    const base = request.result(outcome);
    if (look?.found && (look.status === 'success' || look.status === 'failed')) {
      const approved = look.status === 'success';
      const status = approved
        ? afterCancel
          ? 'success_after_cancel'
          : 'success'
        : afterCancel
          ? 'cancelled'
          : 'failed';
      request.setStatus(
        status,
        `the request requery (E2) answered 404 (the request is gone), and the service's transaction record shows it ${approved ? 'approved' : 'declined'}`,
      );
      return { ...base, status, message: request.state.message, record: look.record as PosRemoteRecord };
    }
    if (look?.found) {
      request.setStatus(
        afterCancel ? 'cancelled' : 'expired',
        `the request's lifetime ended without completion (a 404 from the request requery (E2); transaction record: ${look.status})`,
      );
    } else if (outcome.unobserved) {
      // The service's record could not confirm it: a watched 404 after the lifetime is expiry, an unwatched one is not.
      request.setStatus(
        'expired_unobserved',
        `the request requery (E2) answered 404 after ${Math.round((outcome.unobservedMs ?? 0) / 1000)} s without observation (lost worker or outage), and no transaction record confirmed it: the request either expired or completed and was deleted. Check the terminal before asking the payer again.`,
      );
    } else {
      request.setStatus(
        afterCancel ? 'cancelled' : 'expired',
        'the request was not completed within its lifetime (a 404 from the request requery (E2); no transaction record to confirm)',
      );
    }
    return { ...base, status: request.state.status as PosRemoteResult['status'], message: request.state.message };
  }

  /**
   * One polling activity (the request requery (E2) every few seconds, heartbeating) until a final state or a 404 after
   * the lifetime.
   */
  private poller(requestRef: string): () => Promise<PosRemotePollOutcome> {
    const { o, state, lifetimeMs } = this.request;
    // A read: on the reads queue, whose slots are sized for these polls (docs/deployment.md, "Task queues").
    const { posRemotePollRequest } = proxyActivities<PosRemoteActivities>(
      longPoll(
        durationMs(o.pollTimeout ?? DEFAULT_POLL_TIMEOUT),
        durationMs(o.heartbeatTimeout ?? DEFAULT_HEARTBEAT_TIMEOUT),
      ),
    );
    const args = {
      request_ref: requestRef,
      intervalMs: o.pollIntervalMs,
      unobservedGapMs: o.unobservedGapMs,
      expiresNotBefore: state.createdAt! + lifetimeMs,
    };
    return () => posRemotePollRequest(args);
  }
}
