// A remote request's state and how it shows (query, PaymentStatus, the result), shared by the flow's
// parts (../pos-remote.ts): the terminal lock, the send (E1), the follow (E2), the parked look-ups.
import { proxyActivities, upsertSearchAttributes, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { PosRemoteActivities } from '../../activities/pos-remote';
import {
  POS_REMOTE_PARKED_STATUSES,
  type PosRemoteParsedInput,
  type PosRemotePollOutcome,
  type PosRemoteResult,
  type PosRemoteState,
} from '../../shared/pos-remote';
import { paymentSearchAttributes } from '../../shared/search-attributes';
import { durationMs } from '../../shared/duration';
import { HEARTBEATING_READ } from '../steps/activity-options';

/** A request's lifetime on the terminal (spec, Limits): the request requery (E2) answers 404 after it. */
export const DEFAULT_LIFETIME = '5 minutes';
/** One poll's bound: the lifetime plus a margin. */
export const DEFAULT_POLL_TIMEOUT = '7 minutes';
/** The poll's heartbeat: a cancellation arrives with a heartbeat, so within about 8 s. */
export const DEFAULT_HEARTBEAT_TIMEOUT = '10s';
/**
 * The heartbeat of the request create (E1) from its announce on: shorter than a send's usual, so a lost worker's
 * request create is searched for sooner.
 */
export const DEFAULT_CREATE_HEARTBEAT_TIMEOUT = '5s';
/**
 * How long after the lifetime the request of a lost request create (E1) is still searched for before absence counts.
 */
export const DEFAULT_SEARCH_GRACE = '2 minutes';
/** The pause between searches for the request of a lost request create (E1). */
export const DEFAULT_SEARCH_INTERVAL = '5s';
/** How long a request waits for a terminal busy with another before it gives up (nothing sent). */
export const DEFAULT_LOCK_TIMEOUT = '15 minutes';

// The lock's acquire and the transaction list (A6) searches heartbeat (a page at a time): a lost worker is noticed
// mid-read.
export const reads: ActivityInterfaceFor<PosRemoteActivities> = proxyActivities<PosRemoteActivities>(HEARTBEATING_READ);

export type Options = NonNullable<PosRemoteParsedInput['options']>;

/** The request's input, options and state, with the status it shows and the result it gives. */
export class RemoteRequest {
  readonly o: Options;
  readonly lifetimeMs: number;
  readonly state: PosRemoteState;
  cancelRequested = false;

  constructor(readonly input: PosRemoteParsedInput) {
    this.o = input.options ?? {};
    this.lifetimeMs = durationMs(this.o.requestLifetime ?? DEFAULT_LIFETIME);
    this.state = { reference: input.reference, status: 'locking', amount: input.amount };
  }

  /** outcome_unknown, poll_error and expired_unobserved: looked up again, not final. */
  isParked(): boolean {
    return (POS_REMOTE_PARKED_STATUSES as readonly string[]).includes(this.state.status);
  }

  requestShape() {
    const { input } = this;
    return { terminal_id: input.terminal_id, amount: input.amount, currency: input.currency };
  }

  /**
   * Our request's request_ref, kept and published (PaymentServiceReference): the transaction list (A6) lists the
   * request under it, and reconciliation finds this flow by it (docs/flows-reconciliation.md).
   */
  published(requestRef: string, recovered = false): string {
    this.state.requestRef = requestRef;
    if (recovered) this.state.recovered = true;
    upsertSearchAttributes(paymentSearchAttributes({ serviceReference: requestRef }));
    return requestRef;
  }

  setStatus(status: PosRemoteState['status'], message?: string): void {
    this.state.status = status;
    if (message !== undefined) this.state.message = message;
    upsertSearchAttributes(paymentSearchAttributes({ status }));
  }

  result(outcome?: PosRemotePollOutcome, fromPolling = true): PosRemoteResult {
    return {
      ...this.state,
      status: this.state.status as PosRemoteResult['status'],
      ...(outcome && outcome.status !== 'expired' ? { record: outcome.record } : {}),
      ...(outcome && fromPolling ? { polls: outcome.polls, pollAttempts: outcome.attempt } : {}),
    };
  }
}
