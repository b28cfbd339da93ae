// Activities of the POS remote request flow: the create, the polling (one heartbeating activity),
// the search of the service's transaction records after a lost create answer, and the queue at the
// terminal's lock.
//
// The create moves money: made once, its failures typed for the workflow (moneyCall, ./calls.ts), which
// searches the records first; the reads (requery, transaction records) are retried by their policies.
// Nothing here logs a request or response body: only references, attempts and outcomes.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { TransactionRecord } from '../api/schemas/checkout';
import { isDocumentedNotFound, NotFoundError, RequestAbortedError, type PaymentsClient } from '../api';
import { flowDeps, type ActivityDeps, type FlowDeps } from './deps';
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
import { bindActivities } from './bind';
import { attemptRequestId, moneyCall, read } from './calls';
import { heartbeatWhile } from './heartbeat';

/** UTC YYYY-MM-DD of a wall-clock time. */
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The transaction records' days around now: a remote request lives minutes, so yesterday to tomorrow holds it in any time zone. */
function aroundToday(): { start_date: string; end_date: string } {
  const now = Date.now();
  return { start_date: day(now - 86_400_000), end_date: day(now + 86_400_000) };
}

/** meta_data (a string holding JSON) or meta (arrays) of a transaction record → one key's value. */
export function metaValue(row: TransactionRecord, key: string): unknown {
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

/** A transaction record that is a POS remote request to this terminal for this amount and currency. */
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
  /** Wait between polls when the workflow does not say (spec: 2-3 s). */
  defaultPollIntervalMs?: number;
}

type PosRemoteDeps = FlowDeps & PosRemoteActivityOptions;

/** A requery answer that is final: success or failed, with the record. */
function finalAnswer(data: PosRemoteRecord, polls: number, attempt: number): PosRemotePollOutcome | undefined {
  return data.status === 'success' || data.status === 'failed'
    ? { status: data.status, record: data, polls, attempt }
    : undefined;
}

/** Tells the workflow (a signal the server acknowledges) that the create is about to leave. */
async function announceSending(ctx: Context): Promise<void> {
  const wf = ctx.info.workflowExecution!;
  try {
    await ctx.client.workflow
      .getHandle(wf.workflowId, wf.runId)
      .signal(posRemoteCreateSendingSignal, { activityId: ctx.info.activityId, attempt: ctx.info.attempt });
  } catch (err) {
    // Not announced: not sent either.
    throw ApplicationFailure.nonRetryable(
      `remote request not sent: the sending mark could not be recorded (${err instanceof Error ? err.message : String(err)})`,
      FailureTypes.Transient,
    );
  }
}

/**
 * Creates the remote request (E1). Money-moving (pushes a payment to the terminal); the request
 * carries no reference of ours. With announce, the workflow is told (signal, acknowledged by the
 * server) right before the HTTP call: a failure without that mark provably never sent it. Heartbeats while the call is
 * open, so a killed worker is noticed within the (short) heartbeat timeout.
 */
async function posRemoteCreateRequest(
  { api, log }: PosRemoteDeps,
  req: { terminal_id: string; amount: number; account_type?: string },
  o: { announce?: boolean } = {},
): Promise<{ request_ref: string }> {
  const ctx = Context.current();
  const wf = ctx.info.workflowExecution;
  if (o.announce && wf) await announceSending(ctx);
  return moneyCall('create remote request (E1)', async () => {
    const res = await heartbeatWhile(api.posRemote.create(req, { requestId: ctx.info.activityId }), {
      phase: 'sending',
    });
    log.info({ workflowId: wf?.workflowId, requestRef: res.data.request_ref }, 'POS remote request created');
    return { request_ref: String(res.data.request_ref) };
  });
}

/** Queues the calling flow at its terminal's lock, starting the lock when none runs (signalWithStart; idempotent). */
async function posTerminalLockAcquire(
  _deps: PosRemoteDeps,
  input: { terminal_id: string; lockWorkflowId?: string; checkIntervalMs?: number },
): Promise<void> {
  const ctx = Context.current();
  const wf = ctx.info.workflowExecution;
  if (!wf)
    throw ApplicationFailure.nonRetryable('the terminal lock is taken by a workflow', FailureTypes.InvalidRequest);
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
}

/** The references of remote requests to this terminal for this amount, over at most POS_REMOTE_RECORDS_MAX_PAGES pages. */
async function remoteRequestRefs(
  api: PaymentsClient,
  q: { terminal_id: string; amount: number; currency?: 'NGN' | 'USD' },
): Promise<{ refs: string[]; scanned: number; complete: boolean }> {
  const refs: string[] = [];
  let scanned = 0;
  for (let page = 1; page <= POS_REMOTE_RECORDS_MAX_PAGES; page++) {
    Context.current().heartbeat({ page });
    const query = { ...aroundToday(), ...(q.currency ? { currency: q.currency } : {}), page, perpage: 100 };
    const rows = await read('query transactions (A6)', async () => {
      return (await api.transactions.query(query, { requestId: attemptRequestId(`-p${page}`) })).data;
    });
    scanned += rows.length;
    for (const row of rows)
      if (isRemoteRequestFor(row, q) && !refs.includes(row.transaction_ref)) refs.push(row.transaction_ref);
    if (rows.length < 100) return { refs, scanned, complete: true };
  }
  return { refs, scanned, complete: false };
}

/**
 * The service's transaction records over the days around now (A6): the POS remote requests of this
 * terminal for this amount. Before the create they give the baseline (what existed already); after a lost create answer, the one
 * request not in the baseline nor held by an earlier lock holder is ours. At most
 * POS_REMOTE_RECORDS_MAX_PAGES pages of 100 are read; a longer list is `incomplete`.
 */
async function posRemoteFindRequest(
  { api }: PosRemoteDeps,
  q: { terminal_id: string; amount: number; currency?: 'NGN' | 'USD'; exclude: string[] },
): Promise<PosRemoteSearchOutcome & { refs: string[] }> {
  const { refs, scanned, complete } = await remoteRequestRefs(api, q);
  // A list this long is read no further. What was read is a partial baseline (enough to send
  // the create), never proof of which request is new or that one is absent: the flow decides.
  if (!complete) return { kind: 'incomplete', scanned, refs };
  const fresh = refs.filter((r) => !q.exclude.includes(r));
  if (fresh.length === 0) return { kind: 'none', scanned, refs };
  if (fresh.length > 1) return { kind: 'many', request_refs: fresh, refs };
  const row = await api.transactions
    .query({ ...aroundToday(), reference: fresh[0] }, { requestId: attemptRequestId('-ref') })
    .catch(() => undefined);
  const status = row?.data.find((r) => r.transaction_ref === fresh[0])?.transaction_status ?? 'pending';
  return { kind: 'one', request_ref: fresh[0], status: status.toLowerCase(), refs };
}

/** The service's transaction record of a remote request, by reference (A6): the final look after a 404 or a cancel. */
function posRemoteLookupRecord({ api }: PosRemoteDeps, input: { request_ref: string }): Promise<PosRemoteRecordLookup> {
  return read('look up remote request record (A6)', async (): Promise<PosRemoteRecordLookup> => {
    const query = { ...aroundToday(), reference: input.request_ref };
    const res = await api.transactions.query(query, { requestId: attemptRequestId() });
    const row = res.data.find((r) => r.transaction_ref === input.request_ref);
    if (!row) return { found: false };
    const status = row.transaction_status.toLowerCase();
    const { transaction_ref, transaction_amount: amount, created_at } = row;
    return { found: true, status, record: { status, transaction_ref, amount, ...(created_at ? { created_at } : {}) } };
  });
}

/** Polling one request: the progress a retried attempt continues from, and what each answer means. */
class RemotePolling {
  private readonly ctx = Context.current();
  private readonly attempt = this.ctx.info.attempt;
  private readonly progress: PosRemotePollProgress;
  /** A resumed attempt did not watch the request while no worker was alive. */
  private watchedThisAttempt = false;
  private consecutiveErrors = 0;

  constructor(
    private readonly d: PosRemoteDeps,
    private readonly input: { request_ref: string; unobservedGapMs?: number; expiresNotBefore?: number },
  ) {
    const prev = this.ctx.info.heartbeatDetails as PosRemotePollProgress | undefined;
    this.progress = {
      polls: prev?.polls ?? 0,
      startedAt: prev?.startedAt ?? Date.now(),
      lastStatus: prev?.lastStatus,
      lastObservedAt: prev?.lastObservedAt,
    };
    if (prev) {
      const where = { requestRef: input.request_ref, attempt: this.attempt, polls: this.progress.polls };
      d.log.info(where, 'POS remote polling resumed from heartbeat');
    }
  }

  async run(intervalMs: number): Promise<PosRemotePollOutcome> {
    for (;;) {
      this.ctx.heartbeat(this.progress);
      const outcome = await this.poll().catch((err: unknown) => this.afterError(err));
      if (outcome) return outcome;
      this.ctx.heartbeat(this.progress);
      await this.ctx.sleep(intervalMs); // throws CancelledFailure when cancelled
    }
  }

  private async poll(): Promise<PosRemotePollOutcome | undefined> {
    const { progress, ctx } = this;
    const res = await this.d.api.posRemote.requery(
      { request_ref: this.input.request_ref },
      { signal: ctx.cancellationSignal, requestId: `${ctx.info.activityId}-${progress.polls + 1}` },
    );
    progress.polls += 1;
    this.consecutiveErrors = 0;
    progress.lastStatus = res.data.status;
    progress.lastObservedAt = Date.now();
    this.watchedThisAttempt = true;
    return finalAnswer(res.data as PosRemoteRecord, progress.polls, this.attempt);
  }

  /** A failed poll: cancelled, a 404 (early, or expiry), or an error that polling outlasts. */
  private afterError(err: unknown): PosRemotePollOutcome | undefined {
    const { ctx, progress, input, attempt } = this;
    const requestRef = input.request_ref;
    if (ctx.cancellationSignal.aborted || err instanceof RequestAbortedError)
      throw new CancelledFailure(String(ctx.cancellationSignal.reason ?? 'cancelled'));
    if (err instanceof NotFoundError && input.expiresNotBefore !== undefined && Date.now() < input.expiresNotBefore) {
      // A 404 while the lifetime runs is not expiry: something else is wrong (a replica
      // that has not seen the request, a wrong path). Keep polling; never conclude.
      progress.polls += 1;
      progress.earlyNotFound = (progress.earlyNotFound ?? 0) + 1;
      const where = { requestRef, earlyNotFound: progress.earlyNotFound, msLeft: input.expiresNotBefore - Date.now() };
      this.d.log.warn(where, 'POS remote requery answered 404 before the lifetime ended; polling continues');
      return undefined;
    }
    if (isDocumentedNotFound('posRemoteRequery', err)) {
      // 'Request not found or expired'. Watched up to now: the lifetime ended without a
      // completion. Not watched (first answer after a lost worker, or a long outage): it
      // may have completed and been deleted meanwhile, so it is not reported as plain expired.
      progress.polls += 1;
      const gap = Date.now() - (progress.lastObservedAt ?? progress.startedAt);
      if ((attempt > 1 && !this.watchedThisAttempt) || gap > (input.unobservedGapMs ?? 30_000)) {
        this.d.log.warn({ requestRef, attempt, gapMs: gap }, 'POS remote request gone after an unobserved stretch');
        return { status: 'expired', polls: progress.polls, attempt, unobserved: true, unobservedMs: gap };
      }
      return { status: 'expired', polls: progress.polls, attempt };
    }
    const failure = toActivityFailure(err, { moneyMoving: false, what: 'requery remote request (E2)' });
    if (failure.nonRetryable) throw failure;
    this.consecutiveErrors += 1;
    const where = { requestRef, type: failure.type, consecutiveErrors: this.consecutiveErrors };
    this.d.log.warn(where, 'POS remote requery failed; polling continues');
    return undefined;
  }
}

/**
 * Polls the remote request (E2) until success, failed or 404 (expired). Heartbeats its progress, so a worker
 * that dies is noticed within the heartbeat timeout and the retried attempt continues from
 * the heartbeat details; cancellation (a cancel signal, a cancelled workflow) arrives with
 * the heartbeat and stops the loop at once.
 */
function posRemotePollRequest(
  d: PosRemoteDeps,
  input: { request_ref: string; intervalMs?: number; unobservedGapMs?: number; expiresNotBefore?: number },
): Promise<PosRemotePollOutcome> {
  return new RemotePolling(d, input).run(input.intervalMs ?? d.defaultPollIntervalMs ?? 2500);
}

/** One requery (after a cancel): pending, success/failed with the record, or expired (404). */
function posRemoteRequeryOnce(
  { api }: PosRemoteDeps,
  input: { request_ref: string },
): Promise<PosRemotePollOutcome | { status: 'pending'; polls: number; attempt: number }> {
  const { attempt } = Context.current().info;
  const expired = { status: 'expired' as const, polls: 1, attempt };
  const absent = { notFound: 'posRemoteRequery' as const, answer: expired };
  return read(
    'requery remote request (E2)',
    async () => {
      const res = await api.posRemote.requery({ request_ref: input.request_ref }, { requestId: attemptRequestId() });
      return finalAnswer(res.data as PosRemoteRecord, 1, attempt) ?? { status: 'pending' as const, polls: 1, attempt };
    },
    absent,
  );
}

export function createPosRemoteActivities(deps: ActivityDeps, opts: PosRemoteActivityOptions = {}) {
  const d: PosRemoteDeps = { ...flowDeps(deps, 'pos'), ...opts };
  return bindActivities(d, {
    posRemoteCreateRequest,
    posTerminalLockAcquire,
    posRemoteFindRequest,
    posRemoteLookupRecord,
    posRemotePollRequest,
    posRemoteRequeryOnce,
  });
}

export type PosRemoteActivities = ReturnType<typeof createPosRemoteActivities>;
