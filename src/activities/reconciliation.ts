// Reconciliation's activity: one (month window × currency) at a time.
//
//   1. The service's side: A6 pages of the window (page 1, 2, … until an empty page), each page
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
//   4. Each finding is recorded as a mark (a small workflow with ReconciliationStatus), and a
//      reference marked before that now agrees is marked `resolved`.
//
// The activity returns a summary (counts and at most `maxFindings` findings), never the rows.
// Nothing personal is read into it beyond the row itself: no e-mail or name is copied or logged.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import type { TransactionQueryRequest, TransactionRecord } from '../api';
import type { ActivityDeps } from './deps';
import { heartbeatWhile } from './heartbeat';
import type { MandateDebit } from '../shared/mandate';
import {
  MANDATE_DEBIT_REF,
  debitSide,
  debitsToFind,
  readMandateDebits,
  ObservedDebitPool,
  type KeptDebits,
} from './reconciliation-mandates';
import { flowStartMetadata } from '../shared/flow-summary';
import {
  PaymentAmount,
  PaymentCurrency,
  PaymentFlow,
  PaymentReference,
  PaymentServiceReference,
  PaymentStatus,
  ReconciliationStatus,
} from '../shared/search-attributes';
import {
  RECONCILIATION_MARK_FLOW,
  compareTransaction,
  emptyWindowSummary,
  addDays,
  isWithinOneMonth,
  lookupWindowAround,
  moneyStatusesByFlow,
  ourOutcome,
  reconciliationMarkWorkflowId,
  type FindingKind,
  type OurTransaction,
  type ReconcileWindowInput,
  type ReconciliationFinding,
  type ReconciliationMark,
  type ReconciliationMarkStatus,
  type ServiceTransaction,
  type WindowSummary,
} from '../shared/reconciliation';
import { toActivityFailure } from './failures';

/** Attempts of one A6 page inside the activity (then the activity fails and Temporal retries the window). */
export const PAGE_ATTEMPTS = 3;
/** Safety stop: a service that never returns an empty page cannot keep a window reading forever. */
export const MAX_PAGES_PER_WINDOW = 10_000;
/** References per visibility query (keeps the query short). */
const REFS_PER_QUERY = 100;

export interface ReconciliationActivityOptions {
  /** Pause between two attempts of one page (ms); tests shorten it. Default 1000, doubled each attempt. */
  pageRetryDelayMs?: number;
}

/** A string value inside a visibility query, or undefined when it cannot be quoted safely. */
function quote(v: string): string | undefined {
  return /^[\x20-\x7e]+$/.test(v) && !/["'\\]/.test(v) ? `"${v}"` : undefined;
}

/** Every execution the service may list under one of `quoted`: by our reference, or a POS remote request by its request_ref. */
const underReferences = (quoted: string): string =>
  `(PaymentReference IN (${quoted}) OR PaymentServiceReference IN (${quoted}))`;

const chunks = <T>(xs: T[], n: number): T[][] =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

interface Execution {
  info: WorkflowExecutionInfo;
  flow?: string;
  /**
   * The reference the service lists it under: a POS remote request's request_ref
   * (PaymentServiceReference), every other flow's PaymentReference.
   */
  reference?: string;
  status?: string;
  amount?: number;
  currency?: string;
  reconciliationStatus?: string;
  closed: boolean;
}

function execution(info: WorkflowExecutionInfo): Execution {
  const sa = info.typedSearchAttributes;
  return {
    info,
    flow: sa.get(PaymentFlow),
    reference: sa.get(PaymentFlow) === 'pos-remote' ? sa.get(PaymentServiceReference) : sa.get(PaymentReference),
    status: sa.get(PaymentStatus),
    amount: sa.get(PaymentAmount),
    currency: sa.get(PaymentCurrency),
    reconciliationStatus: sa.get(ReconciliationStatus),
    closed: info.status.name !== 'RUNNING',
  };
}

const startMs = (e: Execution) => e.info.startTime.getTime();

/** What we know about one reference on our side. */
interface OurSide {
  /** The flow to compare with (undefined: no flow of ours carries the reference). */
  flow?: OurTransaction;
  /** Only holding runs of webhooks carry it (a payment announced to us that no flow owns). */
  onlyWebhook: boolean;
  /** The latest mark's ReconciliationStatus. */
  lastMark?: string;
}

/** Our side of a set of references: flows, webhook holding runs and marks. */
function ourSideOf(executions: Execution[]): OurSide {
  const marks = executions.filter((e) => e.flow === RECONCILIATION_MARK_FLOW).sort((a, b) => startMs(b) - startMs(a));
  const holding = executions.filter((e) => e.flow === 'unmatched-webhook').sort((a, b) => startMs(a) - startMs(b));
  const flows = executions
    .filter((e) => ourOutcome(e.flow, e.status, e.info.type).outcome !== 'not_a_transaction')
    .sort((a, b) => startMs(b) - startMs(a));
  // The latest run that recorded money wins (a later run under the same reference cannot undo it); otherwise the latest run.
  const chosen = flows.find((e) => ourOutcome(e.flow, e.status, e.info.type).outcome === 'money') ?? flows[0];
  let flow: OurTransaction | undefined;
  if (chosen) {
    const closeTime = chosen.closed ? chosen.info.closeTime?.toISOString() : undefined;
    const closedAt = closeTime ? Date.parse(closeTime) : undefined;
    const webhookAfter = closedAt === undefined ? undefined : holding.find((h) => startMs(h) > closedAt);
    flow = {
      flow: chosen.flow!,
      workflowType: chosen.info.type,
      workflowId: chosen.info.workflowId,
      runId: chosen.info.runId,
      status: chosen.status,
      amount: chosen.amount,
      currency: chosen.currency,
      closed: chosen.closed,
      closeTime,
      webhookAfterCloseAt: webhookAfter?.info.startTime.toISOString(),
    };
  }
  return { flow, onlyWebhook: !chosen && holding.length > 0, lastMark: marks[0]?.reconciliationStatus };
}

/** One mandate debit as our side of a comparison: the debit in its mandate flow's execution. */
function debitTransaction(m: Execution, d: MandateDebit): OurTransaction {
  return {
    flow: 'mandate-debit',
    workflowId: m.info.workflowId,
    runId: m.info.runId,
    status: d.status,
    amount: d.amount,
    currency: 'NGN',
    closed: m.closed,
    closeTime: m.closed ? m.info.closeTime?.toISOString() : undefined,
  };
}

function metaSource(row: TransactionRecord): string | undefined {
  if (!row.meta_data) return undefined;
  try {
    const meta = JSON.parse(row.meta_data) as { source?: unknown };
    return typeof meta.source === 'string' ? meta.source : undefined;
  } catch {
    return undefined;
  }
}

function compact(row: TransactionRecord): ServiceTransaction {
  return {
    reference: row.transaction_ref,
    status: row.transaction_status,
    amount: row.transaction_amount,
    merchantAmount: row.merchant_amount ?? undefined,
    currency: row.transaction_currency_id ?? undefined,
    createdAt: row.created_at ?? undefined,
  };
}

export function createReconciliationActivities(deps: ActivityDeps, opts: ReconciliationActivityOptions = {}) {
  const { api, logger } = deps;
  const retryDelayMs = opts.pageRetryDelayMs ?? 1000;

  function temporalClient(): Client {
    if (!deps.temporal) {
      throw ApplicationFailure.create({
        type: 'NoTemporalClient',
        message:
          'reconciliation needs a Temporal client in the activity deps (ActivityDeps.temporal) to read our flows',
        nonRetryable: true,
      });
    }
    return deps.temporal;
  }

  async function list(query: string): Promise<Execution[]> {
    const out: Execution[] = [];
    for await (const info of temporalClient().workflow.list({ query, pageSize: 1000 })) out.push(execution(info));
    return out;
  }

  /** A6, one page, retried here on transient failures (5xx, connection, timeout); refusals are not retried. */
  async function readPage(req: TransactionQueryRequest, what: string): Promise<TransactionRecord[]> {
    const ctx = Context.current();
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await heartbeatWhile(
          api.transactions.query(req, {
            requestId: `${ctx.info.workflowExecution?.workflowId ?? 'reconcile'}-${ctx.info.activityId}-${ctx.info.attempt}-${what}-${attempt}`,
          }),
        );
        return res.data;
      } catch (err) {
        const failure = toActivityFailure(err, { moneyMoving: false, what: `A6 ${what}` });
        if (failure.nonRetryable || attempt >= PAGE_ATTEMPTS) throw failure;
        logger.warn({ what, attempt, error: failure.message }, 'A6 page failed; retrying');
        await ctx.sleep(retryDelayMs * 2 ** (attempt - 1));
      }
    }
  }

  return {
    /** Reconciles one window and currency (see the file's header). Read-only at the service; retried by the workflow's policy. */
    async reconcileWindow(input: ReconcileWindowInput): Promise<WindowSummary> {
      const ctx = Context.current();
      const window = { start: input.start, end: input.end };
      const label = `${input.start}..${input.end}`;
      if (!isWithinOneMonth(window)) {
        // The service refuses wider windows (400); never send one.
        throw ApplicationFailure.create({
          type: 'InvalidWindow',
          message: `window ${label} is not within one month (end must be before the same day next month)`,
          nonRetryable: true,
        });
      }
      const taskQueue = quote(ctx.info.taskQueue);
      if (!taskQueue)
        throw ApplicationFailure.create({
          type: 'InvalidTaskQueue',
          message: 'the task queue name cannot be used in a visibility query',
          nonRetryable: true,
        });
      const client = temporalClient();

      const summary: WindowSummary = emptyWindowSummary(input);
      const notComparable = (reason: string) => {
        summary.notComparable += 1;
        summary.notComparableReasons[reason] = (summary.notComparableReasons[reason] ?? 0) + 1;
      };

      async function mark(
        reference: string,
        status: ReconciliationMarkStatus,
        finding?: ReconciliationFinding,
        previous?: string,
      ): Promise<boolean> {
        const m: ReconciliationMark = {
          status,
          reference,
          reconciliationId: input.reconciliationId,
          ...(finding ? { finding } : {}),
          ...(previous ? { previous } : {}),
        };
        try {
          await client.workflow.start('reconciliationMarkWorkflow', {
            workflowId: reconciliationMarkWorkflowId(reference),
            taskQueue: ctx.info.taskQueue,
            args: [m],
            workflowIdReusePolicy: 'ALLOW_DUPLICATE',
            typedSearchAttributes: [
              { key: PaymentFlow, value: RECONCILIATION_MARK_FLOW },
              { key: PaymentReference, value: reference },
              { key: ReconciliationStatus, value: status },
            ],
            ...flowStartMetadata('reconciliationMarkWorkflow', { flow: RECONCILIATION_MARK_FLOW, reference }),
          });
          return true;
        } catch (err) {
          // A mark of this reference is being written right now (a retried attempt): it stands.
          if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
          throw err;
        }
      }

      async function report(f: ReconciliationFinding, lastMark: string | undefined): Promise<void> {
        summary.findings += 1;
        summary.byKind[f.kind] = (summary.byKind[f.kind] ?? 0) + 1;
        if (summary.findingList.length < input.maxFindings) summary.findingList.push(f);
        else summary.findingsOmitted += 1;
        if (input.markFlows && lastMark !== f.kind && (await mark(f.reference, f.kind, f))) summary.marked += 1;
      }

      function finding(
        kind: FindingKind,
        detail: string,
        s: ServiceTransaction | undefined,
        ours: OurTransaction | undefined,
        reference: string,
        paidEvidenceAt?: string,
      ): ReconciliationFinding {
        return {
          kind,
          reference,
          detail,
          window: `${label} ${input.currency}`,
          ...(ours
            ? {
                flow: ours.flow,
                workflowId: ours.workflowId,
                runId: ours.runId,
                ourStatus: ours.status,
                ourAmount: ours.amount,
                ourCurrency: ours.currency,
                flowClosedAt: ours.closeTime,
              }
            : {}),
          ...(s
            ? {
                serviceStatus: s.status,
                serviceAmount: s.amount,
                serviceMerchantAmount: s.merchantAmount,
                serviceCurrency: s.currency,
                serviceCreatedAt: s.createdAt,
              }
            : {}),
          ...(paidEvidenceAt ? { paidEvidenceAt } : {}),
        };
      }

      /** Mandate debits that no flow carries by reference: the mandate flow's state names them. */
      async function mandateDebits(
        refs: string[],
      ): Promise<Map<string, OurTransaction | { notComparable: string } | { neverMade: string }>> {
        const found = new Map<string, OurTransaction | { notComparable: string } | { neverMade: string }>();
        const parentOf = new Map<string, string>();
        for (const r of refs) {
          const m = MANDATE_DEBIT_REF.exec(r);
          if (m && quote(m[1])) parentOf.set(r, m[1]);
        }
        const parents = [...new Set(parentOf.values())];
        if (parents.length === 0) return found;
        const mandates = new Map<string, Execution>();
        for (const part of chunks(parents, REFS_PER_QUERY)) {
          for (const e of await list(
            `TaskQueue = ${taskQueue} AND PaymentFlow = "mandate" AND PaymentReference IN (${part.map((p) => quote(p)).join(', ')})`,
          )) {
            const prev = e.reference ? mandates.get(e.reference) : undefined;
            if (e.reference && (!prev || startMs(e) > startMs(prev))) mandates.set(e.reference, e);
          }
        }
        const states = new Map<string, Promise<KeptDebits | string>>();
        for (const [ref, parent] of parentOf) {
          const m = mandates.get(parent);
          if (!m) continue;
          let debits = states.get(parent);
          if (!debits) {
            debits = readMandateDebits(client.workflow.getHandle(m.info.workflowId)).catch(
              (err: unknown) => `mandate ${parent} state unreadable: ${(err as Error).message}`,
            );
            states.set(parent, debits);
          }
          const list = await debits;
          if (typeof list === 'string') {
            found.set(ref, { notComparable: 'mandate state unreadable' });
            continue;
          }
          const side = debitSide(ref, list);
          if (!('debit' in side)) found.set(ref, side);
          else {
            found.set(ref, debitTransaction(m, side.debit));
          }
        }
        return found;
      }

      /** The mandate flows that ran in the window (NGN pass only), each with the debits it keeps. */
      async function mandatesOfWindow(): Promise<{ m: Execution; kept: KeptDebits }[]> {
        if (input.currency !== 'NGN') return [];
        const [since, before] = [window.start, addDays(window.end, 1)].map((d) => `${d}T00:00:00Z`);
        const mandates = new Map<string, Execution>();
        for (const e of await list(
          `TaskQueue = ${taskQueue} AND PaymentFlow = "mandate" AND StartTime < "${before}" AND (ExecutionStatus = "Running" OR CloseTime >= "${since}")`,
        ))
          mandates.set(e.info.workflowId, e); // any run: the handle reads the latest
        const out: { m: Execution; kept: KeptDebits }[] = [];
        for (const m of mandates.values()) {
          ctx.heartbeat({ reading: m.info.workflowId });
          const kept = await readMandateDebits(client.workflow.getHandle(m.info.workflowId)).catch(() => undefined);
          if (kept) out.push({ m, kept });
          else notComparable('mandate state unreadable');
        }
        return out;
      }
      const mandates = await mandatesOfWindow();
      const observedPool = new ObservedDebitPool(mandates.flatMap(({ kept }) => kept.debits));

      /**
       * 3, mandate debits: every debit a mandate flow (running in the window) records as success in
       * it must be listed by the service, in the window or by its reference. An observed FIXED debit
       * that no row of the window stood for is not comparable.
       */
      async function checkMandateDebits(fromMs: number, untilMs: number): Promise<void> {
        for (const { m, kept } of mandates) {
          const { sent, observed } = debitsToFind(kept.debits, fromMs, untilMs);
          for (const _ of observed.filter((d) => observedPool.has(d)))
            notComparable(
              'observed FIXED debit that no row without a flow stood for (same amount, from its date to the day it was seen)',
            );
          for (const d of sent) {
            ctx.heartbeat({ checking: d.reference });
            summary.ourSuccessesChecked += 1;
            if (seen.has(d.reference)) continue; // listed in this window: compared above
            const around = lookupWindowAround(Date.parse(d.at));
            const rows = await readPage(
              { start_date: around.start, end_date: around.end, reference: d.reference },
              `reference ${d.reference}`,
            );
            if (rows.some((r) => r.transaction_ref === d.reference)) continue; // compared in its own window
            const quoted = quote(d.reference);
            const lastMark = quoted
              ? ourSideOf(await list(`TaskQueue = ${taskQueue} AND PaymentReference = ${quoted}`)).lastMark
              : undefined;
            const detail = `the mandate flow records debit ${d.reference} as success; the service lists no transaction with this reference (A6 ${label}, and by reference ${around.start}..${around.end})`;
            await report(
              finding('mismatch_success_without_money', detail, undefined, debitTransaction(m, d), d.reference),
              lastMark,
            );
          }
        }
      }

      // ---- 1 + 2: the service's rows, page by page, each compared with our side ----
      const seen = new Set<string>();
      for (let page = 1; page <= MAX_PAGES_PER_WINDOW; page++) {
        const rows = await readPage(
          { start_date: input.start, end_date: input.end, currency: input.currency, page, perpage: input.perPage },
          `${label} ${input.currency} page ${page}`,
        );
        summary.pages = page;
        ctx.heartbeat({ page, rows: summary.rows });
        if (rows.length === 0) break;
        // Rows already read on an earlier page (the list shifted while we read) are compared once.
        const fresh = rows.filter((r) => !seen.has(r.transaction_ref));
        if (fresh.length === 0) {
          logger.warn(
            { window: label, currency: input.currency, page },
            'A6 page repeated earlier rows only; the window ends here',
          );
          break;
        }
        for (const r of fresh) seen.add(r.transaction_ref);
        // A row in another currency (a service that ignored `currency`) is compared in that currency's pass.
        const mine = fresh.filter(
          (r) => !r.transaction_currency_id || r.transaction_currency_id.toUpperCase() === input.currency,
        );
        summary.rows += mine.length;

        const toLookUp: TransactionRecord[] = [];
        for (const r of mine) {
          if (r.is_refund === true) notComparable('refund');
          else if (!quote(r.transaction_ref)) notComparable('reference cannot be searched');
          else toLookUp.push(r);
        }
        const byRef = new Map<string, Execution[]>();
        for (const part of chunks(toLookUp, REFS_PER_QUERY)) {
          const q = `TaskQueue = ${taskQueue} AND ${underReferences(part.map((r) => quote(r.transaction_ref)).join(', '))}`;
          for (const e of await list(q))
            if (e.reference) byRef.set(e.reference, [...(byRef.get(e.reference) ?? []), e]);
        }
        const sides = new Map(toLookUp.map((r) => [r.transaction_ref, ourSideOf(byRef.get(r.transaction_ref) ?? [])]));
        const debits = await mandateDebits(
          toLookUp.filter((r) => !sides.get(r.transaction_ref)!.flow).map((r) => r.transaction_ref),
        );

        for (const r of toLookUp) {
          const s = compact(r);
          const side = sides.get(r.transaction_ref)!;
          let ours = side.flow;
          let neverMade: string | undefined;
          if (!ours) {
            const debit = debits.get(r.transaction_ref);
            if (debit && 'notComparable' in debit) {
              notComparable(debit.notComparable);
              continue;
            }
            // A debit-shaped reference its mandate never made: no flow of ours tracks that money.
            if (debit && 'neverMade' in debit) neverMade = debit.neverMade;
            else ours = debit;
          }
          // The service's own debit of a FIXED mandate, which the flow observed in D5 (no reference of ours).
          if (!ours && !neverMade && observedPool.take(s)) {
            summary.matched += 1;
            continue;
          }
          if (!ours && metaSource(r) === 'pos_remote') {
            // Started by another system, or by a flow from before flows published request_ref: not guessed.
            notComparable('POS remote request that no flow of ours published (PaymentServiceReference)');
            continue;
          }
          const c = compareTransaction(s, ours);
          switch (c.result) {
            case 'matched':
            case 'no_money_both':
              if (c.result === 'matched') summary.matched += 1;
              else summary.noMoneyBoth += 1;
              if (
                input.markFlows &&
                side.lastMark &&
                side.lastMark !== 'resolved' &&
                (await mark(r.transaction_ref, 'resolved', undefined, side.lastMark))
              )
                summary.resolved += 1;
              break;
            case 'open':
              summary.open += 1;
              break;
            case 'not_comparable':
              notComparable(c.reason);
              break;
            case 'finding': {
              const detail = neverMade
                ? `${c.detail} (${neverMade})`
                : !ours && side.onlyWebhook
                  ? `${c.detail} (only a webhook's holding workflow has the reference)`
                  : c.detail;
              await report(finding(c.kind, detail, s, ours, r.transaction_ref, c.paidEvidenceAt), side.lastMark);
              break;
            }
          }
        }
        if (page === MAX_PAGES_PER_WINDOW) {
          throw ApplicationFailure.create({
            type: 'TooManyPages',
            message: `A6 returned ${MAX_PAGES_PER_WINDOW} pages for ${label} ${input.currency} without an empty page`,
            nonRetryable: true,
          });
        }
      }

      // ---- 3: our successes started in the window must be at the service ----
      const moneyByFlow = Object.entries(moneyStatusesByFlow()).filter(([flow]) => flow !== 'mandate-debit');
      const flows = moneyByFlow.map(([f]) => quote(f)).join(', ');
      const statuses = [...new Set(moneyByFlow.flatMap(([, s]) => s))].map((s) => quote(s)).join(', ');
      const from = `${input.start}T00:00:00Z`;
      const until = new Date(Date.parse(`${input.end}T00:00:00Z`) + 24 * 3600 * 1000)
        .toISOString()
        .replace('.000Z', 'Z');
      const successes = await list(
        `TaskQueue = ${taskQueue} AND PaymentFlow IN (${flows}) AND PaymentStatus IN (${statuses}) AND PaymentCurrency = ${quote(input.currency)} AND StartTime >= "${from}" AND StartTime < "${until}"`,
      );
      const checked = new Set<string>();
      for (const e of successes) {
        if (!e.reference || checked.has(e.reference)) continue;
        if (ourOutcome(e.flow, e.status, e.info.type).outcome !== 'money') continue;
        checked.add(e.reference);
        summary.ourSuccessesChecked += 1;
        if (seen.has(e.reference)) continue; // listed in this window: compared above
        ctx.heartbeat({ checking: e.reference });
        const around = lookupWindowAround(startMs(e));
        const rows = await readPage(
          { start_date: around.start, end_date: around.end, reference: e.reference },
          `reference ${e.reference}`,
        );
        if (rows.some((r) => r.transaction_ref === e.reference)) continue; // created in another window: compared there
        const quoted = quote(e.reference);
        const side = quoted
          ? ourSideOf(await list(`TaskQueue = ${taskQueue} AND ${underReferences(quoted)}`))
          : { flow: undefined, lastMark: undefined };
        const ours = side.flow ?? {
          flow: e.flow!,
          workflowType: e.info.type,
          workflowId: e.info.workflowId,
          runId: e.info.runId,
          status: e.status,
          amount: e.amount,
          currency: e.currency,
          closed: e.closed,
        };
        await report(
          finding(
            'mismatch_success_without_money',
            `the flow says success; the service lists no transaction with this reference (A6 ${label}, and by reference ${around.start}..${around.end})`,
            undefined,
            ours,
            e.reference,
          ),
          side.lastMark,
        );
      }

      await checkMandateDebits(Date.parse(from), Date.parse(until));

      logger.info(
        {
          window: label,
          currency: input.currency,
          pages: summary.pages,
          rows: summary.rows,
          matched: summary.matched,
          findings: summary.findings,
          notComparable: summary.notComparable,
        },
        'reconciliation window read',
      );
      return summary;
    },
  };
}
