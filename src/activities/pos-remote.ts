// Activities of the POS remote request flow: E1 create, E2 polling (one heartbeating activity),
// the search of the service's records (A6) after a lost E1 answer, and the queue at the
// terminal's lock.
//
// E1 is money-moving: made once per activity attempt, scheduled with maximumAttempts 1; every
// failure becomes an ApplicationFailure with a type from FailureTypes and nonRetryable set, so the
// workflow decides (search the records first). Read-only calls (E2, A6) may be retried by their
// retry policies. Nothing here logs a request or response body: only references, attempts and
// outcomes.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { TransactionRecord } from '../api/schemas/checkout';
import { isDocumentedNotFound, NotFoundError, RequestAbortedError } from '../api';
import type { ActivityDeps } from './deps';
import {
  POS_REMOTE_TXN_SOURCE,
  posRemoteCreateSendingSignal,
  POS_REMOTE_RECORDS_MAX_PAGES,
  type PosRemoteRecordLookup,
  type PosRemoteSearchOutcome,
  type PosRemotePollOutcome,
  type PosRemotePollProgress,
  type PosRemoteRecord,
} from '../shared/pos-remote';
import {
  acquireTerminalLockSignal,
  posTerminalLockWorkflowId,
  type PosTerminalLockInput,
} from '../shared/pos-terminal-lock';
import { FailureTypes } from '../shared/failures';
import { flowStartMetadata } from '../shared/flow-summary';
import { mainTaskQueueOf } from '../shared/task-queues';
import { toActivityFailure } from './failures';

/** UTC YYYY-MM-DD of a wall-clock time. */
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** meta_data (a string holding JSON) or meta (arrays) of an A6 row → one key's value. */
function metaValue(row: TransactionRecord, key: string): unknown {
  if (typeof row.meta_data === 'string') {
    try {
      const m = JSON.parse(row.meta_data) as Record<string, unknown>;
      if (m && typeof m === 'object' && m[key] !== undefined && m[key] !== null) return m[key];
    } catch {
      /* fall back to meta */
    }
  }
  const v = row.meta?.[key];
  return Array.isArray(v) ? v[0] : v;
}

/** An A6 row that is a POS remote request to this terminal for this amount and currency. */
export function isRemoteRequestFor(
  row: TransactionRecord,
  q: { terminal_id: string; amount: number; currency?: string },
): boolean {
  return (
    metaValue(row, 'source') === POS_REMOTE_TXN_SOURCE &&
    String(metaValue(row, 'device_id') ?? '') === q.terminal_id &&
    row.transaction_amount === q.amount &&
    (!q.currency || !row.transaction_currency_id || row.transaction_currency_id === q.currency)
  );
}

export interface PosRemoteActivityOptions {
  /** Wait between E2 polls when the workflow does not say (spec: 2-3 s). */
  defaultPollIntervalMs?: number;
}

export function createPosRemoteActivities(deps: ActivityDeps, opts: PosRemoteActivityOptions = {}) {
  const { api, logger } = deps;
  const log = logger.child({ flow: 'pos' });

  return {
    /**
     * E1. Money-moving (pushes a payment to the terminal); E1 carries no reference of ours.
     * With announce, the workflow is told (signal, acknowledged by the server) right before the
     * HTTP call: a failure without that mark provably never sent E1. Heartbeats while the call is
     * open, so a killed worker is noticed within the (short) heartbeat timeout.
     */
    async posRemoteCreateRequest(
      req: { terminal_id: string; amount: number; account_type?: string },
      o: { announce?: boolean } = {},
    ): Promise<{ request_ref: string }> {
      const ctx = Context.current();
      const wf = ctx.info.workflowExecution;
      if (o.announce && wf) {
        try {
          await ctx.client.workflow
            .getHandle(wf.workflowId, wf.runId)
            .signal(posRemoteCreateSendingSignal, { activityId: ctx.info.activityId, attempt: ctx.info.attempt });
        } catch (err) {
          // Not announced: not sent either.
          throw ApplicationFailure.create({
            type: FailureTypes.Transient,
            message: `E1 not sent: the sending mark could not be recorded (${err instanceof Error ? err.message : String(err)})`,
            nonRetryable: true,
          });
        }
      }
      const beat = setInterval(
        () => ctx.heartbeat({ phase: 'sending' }),
        Math.max(100, Math.floor((ctx.info.heartbeatTimeoutMs ?? 10_000) / 3)),
      );
      ctx.heartbeat({ phase: 'sending' });
      try {
        const res = await api.posRemote.create(req, { requestId: ctx.info.activityId });
        log.info({ workflowId: wf?.workflowId, requestRef: res.data.request_ref }, 'POS remote request created');
        return { request_ref: String(res.data.request_ref) };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: true, what: 'E1 create remote request' });
      } finally {
        clearInterval(beat);
      }
    },

    /** Queues the calling flow at its terminal's lock, starting the lock when none runs (signalWithStart; idempotent). */
    async posTerminalLockAcquire(input: {
      terminal_id: string;
      lockWorkflowId?: string;
      checkIntervalMs?: number;
    }): Promise<void> {
      const ctx = Context.current();
      const wf = ctx.info.workflowExecution;
      if (!wf)
        throw ApplicationFailure.create({
          type: FailureTypes.InvalidRequest,
          message: 'the terminal lock is taken by a workflow',
          nonRetryable: true,
        });
      const args: PosTerminalLockInput = {
        terminal_id: input.terminal_id,
        ...(input.checkIntervalMs ? { checkIntervalMs: input.checkIntervalMs } : {}),
      };
      await ctx.client.workflow.signalWithStart('posTerminalLockWorkflow', {
        workflowId: input.lockWorkflowId ?? posTerminalLockWorkflowId(input.terminal_id),
        // The main queue of the calling flow's deployment, where workflow tasks are polled: this
        // activity itself runs on the reads queue (src/shared/task-queues.ts), which has no workflow worker.
        taskQueue: mainTaskQueueOf(ctx.info.taskQueue),
        args: [args],
        signal: acquireTerminalLockSignal,
        signalArgs: [{ workflowId: wf.workflowId, runId: wf.runId }],
        ...flowStartMetadata('posTerminalLockWorkflow', { flow: 'pos-terminal-lock', reference: input.terminal_id }),
      });
    },

    /**
     * A6 over the days around now: the POS remote requests of this terminal for this amount.
     * Before E1 it gives the baseline (what existed already); after a lost E1 answer, the one
     * request not in the baseline nor held by an earlier lock holder is ours. At most
     * POS_REMOTE_RECORDS_MAX_PAGES pages of 100 are read; a longer list is `incomplete`.
     */
    async posRemoteFindRequest(q: {
      terminal_id: string;
      amount: number;
      currency?: 'NGN' | 'USD';
      exclude: string[];
    }): Promise<PosRemoteSearchOutcome & { refs: string[] }> {
      const ctx = Context.current();
      const now = Date.now();
      const window = { start_date: day(now - 86_400_000), end_date: day(now + 86_400_000) };
      const refs: string[] = [];
      let scanned = 0;
      const maxPages = POS_REMOTE_RECORDS_MAX_PAGES;
      for (let page = 1; page <= maxPages; page++) {
        ctx.heartbeat({ page });
        let rows: TransactionRecord[];
        try {
          rows = (
            await api.transactions.query(
              { ...window, ...(q.currency ? { currency: q.currency } : {}), page, perpage: 100 },
              { requestId: `${ctx.info.activityId}-${ctx.info.attempt}-p${page}` },
            )
          ).data;
        } catch (err) {
          throw toActivityFailure(err, { moneyMoving: false, what: 'A6 query transactions' });
        }
        scanned += rows.length;
        for (const row of rows)
          if (isRemoteRequestFor(row, q) && !refs.includes(row.transaction_ref)) refs.push(row.transaction_ref);
        if (rows.length < 100) break;
        // A list this long is read no further. What was read is a partial baseline (enough to send
        // E1), never proof of which request is new or that one is absent: the flow decides.
        if (page === maxPages) return { kind: 'incomplete', scanned, refs };
      }
      const fresh = refs.filter((r) => !q.exclude.includes(r));
      if (fresh.length === 0) return { kind: 'none', scanned, refs };
      if (fresh.length > 1) return { kind: 'many', request_refs: fresh, refs };
      const row = await api.transactions
        .query({ ...window, reference: fresh[0] }, { requestId: `${ctx.info.activityId}-${ctx.info.attempt}-ref` })
        .catch(() => undefined);
      const status = row?.data.find((r) => r.transaction_ref === fresh[0])?.transaction_status ?? 'pending';
      return { kind: 'one', request_ref: fresh[0], status: status.toLowerCase(), refs };
    },

    /** The service's transaction record of a remote request (A6 by reference): the final look after a 404 or a cancel. */
    async posRemoteLookupRecord(input: { request_ref: string }): Promise<PosRemoteRecordLookup> {
      const ctx = Context.current();
      const now = Date.now();
      try {
        const res = await api.transactions.query(
          { start_date: day(now - 86_400_000), end_date: day(now + 86_400_000), reference: input.request_ref },
          { requestId: `${ctx.info.activityId}-${ctx.info.attempt}` },
        );
        const row = res.data.find((r) => r.transaction_ref === input.request_ref);
        if (!row) return { found: false };
        const status = row.transaction_status.toLowerCase();
        return {
          found: true,
          status,
          record: {
            status,
            transaction_ref: row.transaction_ref,
            amount: row.transaction_amount,
            ...(row.created_at ? { created_at: row.created_at } : {}),
          },
        };
      } catch (err) {
        throw toActivityFailure(err, { moneyMoving: false, what: 'A6 look up remote request' });
      }
    },

    /**
     * E2 polling until success, failed or 404 (expired). Heartbeats its progress, so a worker
     * that dies is noticed within the heartbeat timeout and the retried attempt continues from
     * the heartbeat details; cancellation (a cancel signal, a cancelled workflow) arrives with
     * the heartbeat and stops the loop at once.
     */
    async posRemotePollRequest(input: {
      request_ref: string;
      intervalMs?: number;
      unobservedGapMs?: number;
      expiresNotBefore?: number;
    }): Promise<PosRemotePollOutcome> {
      const ctx = Context.current();
      const intervalMs = input.intervalMs ?? opts.defaultPollIntervalMs ?? 2500;
      const prev = ctx.info.heartbeatDetails as PosRemotePollProgress | undefined;
      const progress: PosRemotePollProgress = {
        polls: prev?.polls ?? 0,
        startedAt: prev?.startedAt ?? Date.now(),
        lastStatus: prev?.lastStatus,
        lastObservedAt: prev?.lastObservedAt,
      };
      const attempt = ctx.info.attempt;
      const gapLimit = input.unobservedGapMs ?? 30_000;
      // A resumed attempt did not watch the request while no worker was alive.
      let watchedThisAttempt = false;
      if (prev)
        log.info(
          { requestRef: input.request_ref, attempt, polls: progress.polls },
          'POS remote polling resumed from heartbeat',
        );
      let consecutiveErrors = 0;
      for (;;) {
        ctx.heartbeat(progress);
        try {
          const res = await api.posRemote.requery(
            { request_ref: input.request_ref },
            { signal: ctx.cancellationSignal, requestId: `${ctx.info.activityId}-${progress.polls + 1}` },
          );
          progress.polls += 1;
          consecutiveErrors = 0;
          progress.lastStatus = res.data.status;
          progress.lastObservedAt = Date.now();
          watchedThisAttempt = true;
          if (res.data.status === 'success' || res.data.status === 'failed') {
            return { status: res.data.status, record: res.data as PosRemoteRecord, polls: progress.polls, attempt };
          }
        } catch (err) {
          if (ctx.cancellationSignal.aborted || err instanceof RequestAbortedError) {
            throw new CancelledFailure(String(ctx.cancellationSignal.reason ?? 'cancelled'));
          }
          if (
            err instanceof NotFoundError &&
            input.expiresNotBefore !== undefined &&
            Date.now() < input.expiresNotBefore
          ) {
            // A 404 while the lifetime runs is not expiry: something else is wrong (a replica
            // that has not seen the request, a wrong path). Keep polling; never conclude.
            progress.polls += 1;
            progress.earlyNotFound = (progress.earlyNotFound ?? 0) + 1;
            log.warn(
              {
                requestRef: input.request_ref,
                earlyNotFound: progress.earlyNotFound,
                msLeft: input.expiresNotBefore - Date.now(),
              },
              'POS remote E2 404 before the lifetime ended; polling continues',
            );
            ctx.heartbeat(progress);
            await ctx.sleep(intervalMs);
            continue;
          }
          if (isDocumentedNotFound('posRemoteRequery', err)) {
            // 'Request not found or expired'. Watched up to now: the lifetime ended without a
            // completion. Not watched (first answer after a lost worker, or a long outage): it
            // may have completed and been deleted meanwhile, so it is not reported as plain expired.
            progress.polls += 1;
            const gap = Date.now() - (progress.lastObservedAt ?? progress.startedAt);
            const resumedBlind = attempt > 1 && !watchedThisAttempt;
            if (resumedBlind || gap > gapLimit) {
              log.warn(
                { requestRef: input.request_ref, attempt, gapMs: gap },
                'POS remote request gone after an unobserved stretch',
              );
              return { status: 'expired', polls: progress.polls, attempt, unobserved: true, unobservedMs: gap };
            }
            return { status: 'expired', polls: progress.polls, attempt };
          }
          const failure = toActivityFailure(err, { moneyMoving: false, what: 'E2 requery remote request' });
          if (failure.nonRetryable) throw failure;
          consecutiveErrors += 1;
          log.warn(
            { requestRef: input.request_ref, type: failure.type, consecutiveErrors },
            'POS remote requery failed; polling continues',
          );
        }
        ctx.heartbeat(progress);
        await ctx.sleep(intervalMs); // throws CancelledFailure when cancelled
      }
    },

    /** One E2 look (after a cancel): pending, success/failed with the record, or expired (404). */
    async posRemoteRequeryOnce(input: {
      request_ref: string;
    }): Promise<PosRemotePollOutcome | { status: 'pending'; polls: number; attempt: number }> {
      const ctx = Context.current();
      try {
        const res = await api.posRemote.requery(
          { request_ref: input.request_ref },
          { requestId: `${ctx.info.activityId}-${ctx.info.attempt}` },
        );
        if (res.data.status === 'success' || res.data.status === 'failed') {
          return { status: res.data.status, record: res.data as PosRemoteRecord, polls: 1, attempt: ctx.info.attempt };
        }
        return { status: 'pending', polls: 1, attempt: ctx.info.attempt };
      } catch (err) {
        if (isDocumentedNotFound('posRemoteRequery', err))
          return { status: 'expired', polls: 1, attempt: ctx.info.attempt };
        throw toActivityFailure(err, { moneyMoving: false, what: 'E2 requery remote request' });
      }
    },
  };
}

export type PosRemoteActivities = ReturnType<typeof createPosRemoteActivities>;
