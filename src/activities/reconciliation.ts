// Reconciliation's activity: one (month window × currency) at a time.
//
//   1. The service's side: the transaction list's pages (A6) of the window (page 1, 2, … until an empty page), each page
//      retried here on transient errors before the activity itself is retried. A window wider
//      than one month is refused before anything is sent.
//   2. Our side, per page: the flows carrying those references, read from Temporal visibility
//      (PaymentReference / PaymentStatus / PaymentAmount / PaymentCurrency, open and closed runs,
//      this worker's task queue only), plus the holding runs of webhooks that came after a flow
//      closed, and earlier marks. Mandate debits (`<mandate>-D<n>`, `-K<hash>`) are read from
//      the debits their mandate flow keeps (./reconciliation-mandates.ts).
//   3. The other direction: our flows that say success and started in the window, and the
//      mandate debits our mandate flows record as success in it, must be listed by the service; a
//      reference the window did not list is looked up by reference before it is called missing.
//      (The window's steps, and our side's reading, are in ./reconciliation-window.ts.)
//   4. Each finding is recorded as a mark (a small workflow with ReconciliationStatus), and a
//      reference marked before that now agrees is marked `resolved`.
//
// The activity returns a summary (counts and at most `maxFindings` findings), never the rows.
// Nothing personal is read into it beyond the row itself: no e-mail or name is copied or logged.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { TransactionQueryRequest, TransactionRecord } from '../api';
import type { ActivityDeps } from './deps';
import { bindActivities } from './bind';
import { heartbeatWhile } from './heartbeat';
import { toActivityFailure } from './failures';
import { isWithinOneMonth, type ReconcileWindowInput, type WindowSummary } from '../shared/reconciliation';
import { WindowReconciliation, quote } from './reconciliation-window';

/** Attempts of one transaction-list page inside the activity (then the activity fails and Temporal retries the window). */
export const PAGE_ATTEMPTS = 3;

export interface ReconciliationActivityOptions {
  /** Pause between two attempts of one page (ms); tests shorten it. Default 1000, doubled each attempt. */
  pageRetryDelayMs?: number;
}

type ReconciliationDeps = ActivityDeps & { pageRetryDelayMs: number };

/** One page of the transaction list, retried here on transient failures (5xx, connection, timeout); refusals are not retried. */
async function readPage(
  { api, logger, pageRetryDelayMs }: ReconciliationDeps,
  req: TransactionQueryRequest,
  what: string,
): Promise<TransactionRecord[]> {
  const ctx = Context.current();
  const run = `${ctx.info.workflowExecution?.workflowId ?? 'reconcile'}-${ctx.info.activityId}-${ctx.info.attempt}`;
  for (let attempt = 1; ; attempt++) {
    try {
      return (await heartbeatWhile(api.transactions.query(req, { requestId: `${run}-${what}-${attempt}` }))).data;
    } catch (err) {
      const failure = toActivityFailure(err, { moneyMoving: false, what: `transaction list ${what} (A6)` });
      if (failure.nonRetryable || attempt >= PAGE_ATTEMPTS) throw failure;
      logger.warn({ what, attempt, error: failure.message }, 'a transaction list page failed; retrying');
      await ctx.sleep(pageRetryDelayMs * 2 ** (attempt - 1));
    }
  }
}

/** Reconciles one window and currency (see the file's header). Read-only at the service; retried by the workflow's policy. */
async function reconcileWindow(deps: ReconciliationDeps, input: ReconcileWindowInput): Promise<WindowSummary> {
  const label = `${input.start}..${input.end}`;
  // The service refuses wider windows (400); never send one.
  if (!isWithinOneMonth({ start: input.start, end: input.end }))
    throw ApplicationFailure.nonRetryable(
      `window ${label} is not within one month (end must be before the same day next month)`,
      'InvalidWindow',
    );
  const taskQueue = quote(Context.current().info.taskQueue);
  if (!taskQueue)
    throw ApplicationFailure.nonRetryable(
      'the task queue name cannot be used in a visibility query',
      'InvalidTaskQueue',
    );
  if (!deps.temporal)
    throw ApplicationFailure.nonRetryable(
      'reconciliation needs a Temporal client in the activity deps (ActivityDeps.temporal) to read our flows',
      'NoTemporalClient',
    );
  const readers = {
    readPage: (req: TransactionQueryRequest, what: string) => readPage(deps, req, what),
    client: deps.temporal,
    logger: deps.logger,
    taskQueue,
  };
  return new WindowReconciliation(input, readers).run();
}

export function createReconciliationActivities(deps: ActivityDeps, opts: ReconciliationActivityOptions = {}) {
  return bindActivities({ ...deps, pageRetryDelayMs: opts.pageRetryDelayMs ?? 1000 }, { reconcileWindow });
}
