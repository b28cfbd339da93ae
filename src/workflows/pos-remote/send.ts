// The request create (E1), never sent twice once it may have left. The request create carries no reference of ours: its
// activity signals the workflow (acknowledged) right before the HTTP call. Without that mark, or when the client
// proves nothing left, the request create may be sent again. With it, a lost answer is resolved from the service's
// own records: the transaction list (A6) lists the terminal's requests; the one that is neither in the baseline (read
// before the request create) nor an earlier lock holder's is ours. More than one candidate: outcome_unknown, never a
// guess. After lifetime + grace, a successful search that shows nothing proves the request create never arrived
// (not_sent, where the deployment says the transaction list lists remote requests); searches that keep failing end
// outcome_unknown after another lifetime.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { PosRemoteActivities } from '../../activities/pos-remote';
import { POS_REMOTE_RECORDS_MAX_PAGES, type PosRemoteSearchOutcome } from '../../shared/pos-remote';
import { FailureTypes, failureMessage, failureOf, isRefusalFailure } from '../../shared/failures';
import { durationMs } from '../../shared/duration';
import { moneySendWithHeartbeat } from '../steps/activity-options';
import { UNSENT_RESEND_BACKOFF } from '../steps/durations';
import {
  DEFAULT_CREATE_HEARTBEAT_TIMEOUT,
  DEFAULT_SEARCH_GRACE,
  DEFAULT_SEARCH_INTERVAL,
  reads,
  type RemoteRequest,
} from './request';
import type { TerminalLock } from './terminal-lock';

/** The request create (E1) proven unsent is sent again at most this many times in all. */
const MAX_UNSENT_REQUEST_ATTEMPTS = 3;
/** The pause before an unsent request create (E1) goes again, times the attempt. */
const UNSENT_REQUEST_BACKOFF_MS = durationMs(UNSENT_RESEND_BACKOFF);

export class RequestSend {
  /** The activity of the request create (E1) signalled that its call is about to leave. */
  private announced = false;
  /** The requests that are not ours (baseline and earlier holders'), for a search after a lost request create (E1). */
  exclude: string[] | undefined;

  constructor(
    private readonly request: RemoteRequest,
    private readonly lock: TerminalLock,
  ) {}

  /** The announce signal. */
  onAnnounced(): void {
    this.announced = true;
  }

  /**
   * Baseline, the request create (E1), the search for a lost answer: true when the request is ours to follow
   * (requestRef set).
   */
  async send(): Promise<boolean> {
    const exclude = await this.baseline();
    if (!exclude) return false;
    this.exclude = exclude;
    const sent = await this.create();
    if (sent === 'ended') return false;
    return sent === 'created' || this.searchLost(sent.lostAt, exclude);
  }

  /** The terminal's requests that exist before ours (A6), plus earlier holders': never taken for ours. */
  private async baseline(): Promise<string[] | undefined> {
    const { request } = this;
    try {
      const before = await reads.posRemoteFindRequest({ ...request.requestShape(), exclude: [] });
      // A merchant with more rows than the read covers gets a partial baseline: enough to send the request create (E1)
      // (the lock keeps our own flows apart), but a lost request create answer then cannot be searched for and
      // ends outcome_unknown, never not_sent and never a guessed request.
      return [...before.refs, ...this.lock.earlierHolders()];
    } catch (err) {
      request.setStatus(
        'not_sent',
        `the service's transaction records could not be read, so the lost answer to the request create (E1) could not be found again; nothing was sent: ${failureMessage(err)}`,
      );
      return undefined;
    }
  }

  /**
   * The request create (E1), sent again only when it provably never left: 'created' (requestRef set), lost after it may
   * have left (`lostAt`), or 'ended' (status set: nothing to follow).
   */
  private async create(): Promise<'created' | 'ended' | { lostAt: number }> {
    const { request } = this;
    const { input, o, state } = request;
    // Shorter than a send's usual (default 5 s, the caller's option): the activity of the request create (E1)
    // heartbeats from its announce on, and a lost worker's request create is settled (searched for) sooner.
    const { posRemoteCreateRequest } = proxyActivities<PosRemoteActivities>(
      moneySendWithHeartbeat(durationMs(o.createHeartbeatTimeout ?? DEFAULT_CREATE_HEARTBEAT_TIMEOUT)),
    );
    for (let attempt = 1; ; attempt++) {
      if (request.cancelRequested) {
        request.setStatus('cancelled', 'cancelled before the request create (E1) was sent; nothing was sent');
        return 'ended';
      }
      this.announced = false;
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
        request.published(created.request_ref);
        state.createdAt = Date.now();
        return 'created';
      } catch (err) {
        if (isRefusalFailure(err)) {
          const type = failureOf(err)?.type ?? undefined;
          request.setStatus('rejected', `the service refused the request (${type}): ${failureMessage(err)}`);
          return 'ended';
        }
        // Announced and not proven unsent (a lost answer, a killed worker): it may have left.
        const neverSent = !this.announced || failureOf(err)?.type === FailureTypes.Transient;
        if (!neverSent) return { lostAt: Date.now() };
        if (attempt >= MAX_UNSENT_REQUEST_ATTEMPTS) {
          request.setStatus(
            'not_sent',
            `the request create (E1) could not be sent (${attempt} attempts, none left): ${failureMessage(err)}`,
          );
          return 'ended';
        }
        await sleep(UNSENT_REQUEST_BACKOFF_MS * attempt);
      }
    }
  }

  /**
   * A lost request create (E1) answer: find the request in the service's records (the transaction list, A6). True when
   * found (requestRef set).
   */
  private async searchLost(lostAt: number, exclude: string[]): Promise<boolean> {
    const { request } = this;
    const { o, state, lifetimeMs } = request;
    state.createdAt = lostAt; // the latest it can have been created
    const deadline = lostAt + lifetimeMs + durationMs(o.searchGrace ?? DEFAULT_SEARCH_GRACE);
    request.setStatus(
      'searching',
      "the answer to the request create (E1) was lost after it may have reached the service; looking for the request in the service's transaction records",
    );
    let lastProblem = '';
    for (;;) {
      let found: PosRemoteSearchOutcome | undefined;
      try {
        found = await reads.posRemoteFindRequest({ ...request.requestShape(), exclude });
      } catch (err) {
        lastProblem = ` (last search failed: ${failureMessage(err)})`;
      }
      if (found?.kind === 'incomplete') {
        // Part of a list proves neither which request is ours nor that none is: a failed read.
        lastProblem = ` (the transaction list around today is longer than ${POS_REMOTE_RECORDS_MAX_PAGES * 100} rows, too long to search)`;
        found = undefined;
      }
      if (found?.kind === 'one') {
        request.published(found.request_ref, true);
        return true;
      }
      if (found?.kind === 'many') {
        request.setStatus(
          'outcome_unknown',
          `the answer to the request create (E1) was lost and the terminal has several new requests for this amount (${found.request_refs.join(', ')}): which is ours cannot be told. Check the terminal and the transaction list.`,
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
   * means the request create (E1) never arrived (the transaction list (A6) lists every request from its creation).
   * Failed reads keep searching for another lifetime; then it is outcome_unknown. True when the search ended (status
   * set).
   */
  private searchEnded(found: PosRemoteSearchOutcome | undefined, deadline: number, lastProblem: string): boolean {
    const { request } = this;
    // Absence proves the request create (E1) never arrived only where the transaction list (A6) lists remote requests
    // (the deployment says so).
    if (found?.kind === 'none' && (request.o.lostCreateAbsentIs ?? 'outcome_unknown') === 'not_sent') {
      request.setStatus(
        'not_sent',
        `the answer to the request create (E1) was lost, and the service's transaction records show no request for this terminal and amount through its lifetime + grace: the request never reached the service, nobody could pay it`,
      );
      return true;
    }
    if (found?.kind === 'none' || Date.now() >= deadline + request.lifetimeMs) {
      request.setStatus(
        'outcome_unknown',
        `the answer to the request create (E1) was lost and no request was found in the service's records within its lifetime + grace${lastProblem}. The terminal may have charged the payer: check the transaction list before asking again.`,
      );
      return true;
    }
    return false;
  }
}
