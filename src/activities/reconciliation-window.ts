// One reconciliation window (month × currency) being read: the summary it builds, and its steps in
// reading order; first, our side: the flows that carry a reference, read from Temporal visibility,
// and what they say about it. The activity that runs it, and the whole walk, are in ./reconciliation.ts.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import type { Logger } from 'pino';
import type { TransactionQueryRequest, TransactionRecord } from '../api';
import { flowStartMetadata } from '../shared/flow-summary';
import type { MandateDebit } from '../shared/mandate';
import { POS_REMOTE_TXN_SOURCE } from '../shared/pos-remote';
import { metaValue } from './pos-remote';
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
  addDays,
  compareTransaction,
  emptyWindowSummary,
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
import {
  MANDATE_DEBIT_REF,
  debitSide,
  debitsToFind,
  readMandateDebits,
  ObservedDebitPool,
  type KeptDebits,
} from './reconciliation-mandates';

/** References per visibility query (keeps the query short). */
export const REFS_PER_QUERY = 100;

/** A string value inside a visibility query, or undefined when it cannot be quoted safely. */
export function quote(v: string): string | undefined {
  return /^[\x20-\x7e]+$/.test(v) && !/["'\\]/.test(v) ? `"${v}"` : undefined;
}

/** Every execution the service may list under one of `quoted`: by our reference, or a POS remote request by its request_ref. */
export const underReferences = (quoted: string): string =>
  `(PaymentReference IN (${quoted}) OR PaymentServiceReference IN (${quoted}))`;

export const chunks = <T>(xs: T[], n: number): T[][] =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

export interface Execution {
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

/** The executions a visibility query lists. */
export async function listExecutions(client: Client, query: string): Promise<Execution[]> {
  const out: Execution[] = [];
  for await (const info of client.workflow.list({ query, pageSize: 1000 })) out.push(execution(info));
  return out;
}

export const startMs = (e: Execution) => e.info.startTime.getTime();

/** One execution as our side of a comparison. */
export function ourTransaction(e: Execution): OurTransaction {
  return {
    flow: e.flow!,
    workflowType: e.info.type,
    workflowId: e.info.workflowId,
    runId: e.info.runId,
    status: e.status,
    amount: e.amount,
    currency: e.currency,
    closed: e.closed,
  };
}

/** What we know about one reference on our side. */
export interface OurSide {
  /** The flow to compare with (undefined: no flow of ours carries the reference). */
  flow?: OurTransaction;
  /** Only holding runs of webhooks carry it (a payment announced to us that no flow owns). */
  onlyWebhook: boolean;
  /** The latest mark's ReconciliationStatus. */
  lastMark?: string;
}

/** Our side of a set of references: flows, webhook holding runs and marks. */
export function ourSideOf(executions: Execution[]): OurSide {
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
    flow = { ...ourTransaction(chosen), closeTime, webhookAfterCloseAt: webhookAfter?.info.startTime.toISOString() };
  }
  return { flow, onlyWebhook: !chosen && holding.length > 0, lastMark: marks[0]?.reconciliationStatus };
}

/** One mandate debit as our side of a comparison: the debit in its mandate flow's execution. */
export function debitTransaction(m: Execution, d: MandateDebit): OurTransaction {
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

/** Safety stop: a service that never returns an empty page cannot keep a window reading forever. */
export const MAX_PAGES_PER_WINDOW = 10_000;

/** What a window reads with: the service's transaction pages (retried inside the activity) and our flows. */
export interface WindowReaders {
  readPage(req: TransactionQueryRequest, what: string): Promise<TransactionRecord[]>;
  client: Client;
  logger: Logger;
  /** The task queue's name, quoted for a visibility query: only this worker's flows are ours. */
  taskQueue: string;
}

/** Our side of a debit-shaped reference that no flow carries. */
type DebitLookup = OurTransaction | { notComparable: string } | { neverMade: string };

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

export class WindowReconciliation {
  readonly summary: WindowSummary;
  private readonly ctx = Context.current();
  private readonly label: string;
  /** The window as visibility times: from its first day to the day after its last. */
  private readonly from: string;
  private readonly until: string;
  /** References the window listed: compared there, never looked up again. */
  private readonly seen = new Set<string>();
  private mandates: { m: Execution; kept: KeptDebits }[] = [];
  private observedPool = new ObservedDebitPool([]);

  constructor(
    private readonly input: ReconcileWindowInput,
    private readonly io: WindowReaders,
  ) {
    this.summary = emptyWindowSummary(input);
    this.label = `${input.start}..${input.end}`;
    this.from = `${input.start}T00:00:00Z`;
    this.until = `${addDays(input.end, 1)}T00:00:00Z`;
  }

  async run(): Promise<WindowSummary> {
    this.mandates = await this.mandatesOfWindow();
    this.observedPool = new ObservedDebitPool(this.mandates.flatMap(({ kept }) => kept.debits));
    await this.readServiceRows();
    await this.checkOurSuccesses();
    await this.checkMandateDebits();
    const { pages, rows, matched, findings, notComparable } = this.summary;
    this.io.logger.info(
      { window: this.label, currency: this.input.currency, pages, rows, matched, findings, notComparable },
      'reconciliation window read',
    );
    return this.summary;
  }

  /** 1 + 2: the service's rows, page by page until an empty page, each compared with our side. */
  private async readServiceRows(): Promise<void> {
    const { input, summary } = this;
    for (let page = 1; page <= MAX_PAGES_PER_WINDOW; page++) {
      const rows = await this.io.readPage(
        { start_date: input.start, end_date: input.end, currency: input.currency, page, perpage: input.perPage },
        `${this.label} ${input.currency} page ${page}`,
      );
      summary.pages = page;
      this.ctx.heartbeat({ page, rows: summary.rows });
      if (rows.length === 0) return;
      // Rows already read on an earlier page (the list shifted while we read) are compared once.
      const fresh = rows.filter((r) => !this.seen.has(r.transaction_ref));
      if (fresh.length === 0) {
        const where = { window: this.label, currency: input.currency, page };
        this.io.logger.warn(where, 'a page of the transaction list repeated earlier rows only; the window ends here');
        return;
      }
      for (const r of fresh) this.seen.add(r.transaction_ref);
      await this.comparePage(fresh);
    }
    throw ApplicationFailure.nonRetryable(
      `the transaction list (A6) returned ${MAX_PAGES_PER_WINDOW} pages for ${this.label} ${input.currency} without an empty page`,
      'TooManyPages',
    );
  }

  private async comparePage(fresh: TransactionRecord[]): Promise<void> {
    // A row in another currency (a service that ignored `currency`) is compared in that currency's pass.
    const currency = this.input.currency;
    const mine = fresh.filter(
      (r) => !r.transaction_currency_id || r.transaction_currency_id.toUpperCase() === currency,
    );
    this.summary.rows += mine.length;
    const toLookUp: TransactionRecord[] = [];
    for (const r of mine) {
      if (r.is_refund === true) this.notComparable('refund');
      else if (!quote(r.transaction_ref)) this.notComparable('reference cannot be searched');
      else toLookUp.push(r);
    }
    const byRef = new Map<string, Execution[]>();
    for (const part of chunks(toLookUp, REFS_PER_QUERY)) {
      for (const e of await this.list(underReferences(part.map((r) => quote(r.transaction_ref)).join(', '))))
        if (e.reference) byRef.set(e.reference, [...(byRef.get(e.reference) ?? []), e]);
    }
    const sides = new Map(toLookUp.map((r) => [r.transaction_ref, ourSideOf(byRef.get(r.transaction_ref) ?? [])]));
    const withoutFlow = toLookUp.filter((r) => !sides.get(r.transaction_ref)!.flow).map((r) => r.transaction_ref);
    const debits = await this.mandateDebits(withoutFlow);
    for (const r of toLookUp) await this.compareRow(r, sides.get(r.transaction_ref)!, debits.get(r.transaction_ref));
  }

  /** One row of the service against our side: a flow, a mandate's debit, an observed FIXED debit, or nothing. */
  private async compareRow(r: TransactionRecord, side: OurSide, debit: DebitLookup | undefined): Promise<void> {
    const s = compact(r);
    let ours = side.flow;
    let neverMade: string | undefined;
    if (!ours && debit) {
      if ('notComparable' in debit) return this.notComparable(debit.notComparable);
      // A debit-shaped reference its mandate never made: no flow of ours tracks that money.
      if ('neverMade' in debit) neverMade = debit.neverMade;
      else ours = debit;
    }
    // The service's own debit of a FIXED mandate, which the flow observed in the mandate lookup (no reference of ours).
    if (!ours && !neverMade && this.observedPool.take(s)) {
      this.summary.matched += 1;
      return;
    }
    // Started by another system, or by a flow from before flows published request_ref: not guessed.
    if (!ours && metaValue(r, 'source') === POS_REMOTE_TXN_SOURCE)
      return this.notComparable('POS remote request that no flow of ours published (PaymentServiceReference)');
    const c = compareTransaction(s, ours);
    switch (c.result) {
      case 'matched':
      case 'no_money_both':
        if (c.result === 'matched') this.summary.matched += 1;
        else this.summary.noMoneyBoth += 1;
        return this.resolveMark(r.transaction_ref, side.lastMark);
      case 'open':
        this.summary.open += 1;
        return;
      case 'not_comparable':
        return this.notComparable(c.reason);
      case 'finding': {
        const detail = neverMade
          ? `${c.detail} (${neverMade})`
          : !ours && side.onlyWebhook
            ? `${c.detail} (only a webhook's holding workflow has the reference)`
            : c.detail;
        return this.report(this.finding(c.kind, detail, s, ours, r.transaction_ref, c.paidEvidenceAt), side.lastMark);
      }
    }
  }

  /** 3: our successes started in the window must be at the service. */
  private async checkOurSuccesses(): Promise<void> {
    const moneyByFlow = Object.entries(moneyStatusesByFlow()).filter(([flow]) => flow !== 'mandate-debit');
    const flows = moneyByFlow.map(([f]) => quote(f)).join(', ');
    const statuses = [...new Set(moneyByFlow.flatMap(([, s]) => s))].map((s) => quote(s)).join(', ');
    const successes = await this.list(
      `PaymentFlow IN (${flows}) AND PaymentStatus IN (${statuses}) AND PaymentCurrency = ${quote(this.input.currency)} AND StartTime >= "${this.from}" AND StartTime < "${this.until}"`,
    );
    const checked = new Set<string>();
    for (const e of successes) {
      const reference = e.reference;
      if (!reference || checked.has(reference) || ourOutcome(e.flow, e.status, e.info.type).outcome !== 'money')
        continue;
      checked.add(reference);
      await this.checkAtService(reference, startMs(e), 'the flow says success', async () => {
        const quoted = quote(reference);
        const side = quoted ? ourSideOf(await this.list(underReferences(quoted))) : undefined;
        return { ours: side?.flow ?? ourTransaction(e), lastMark: side?.lastMark };
      });
    }
  }

  /**
   * 3, mandate debits: every debit a mandate flow (running in the window) records as success in
   * it must be listed by the service, in the window or by its reference. An observed FIXED debit
   * that no row of the window stood for is not comparable.
   */
  private async checkMandateDebits(): Promise<void> {
    for (const { m, kept } of this.mandates) {
      const { sent, observed } = debitsToFind(kept.debits, Date.parse(this.from), Date.parse(this.until));
      for (const _ of observed.filter((d) => this.observedPool.has(d)))
        this.notComparable(
          'observed FIXED debit that no row without a flow stood for (same amount, from its date to the day it was seen)',
        );
      for (const d of sent) {
        const says = `the mandate flow records debit ${d.reference} as success`;
        await this.checkAtService(d.reference, Date.parse(d.at), says, async () => {
          const quoted = quote(d.reference);
          const lastMark = quoted ? ourSideOf(await this.list(`PaymentReference = ${quoted}`)).lastMark : undefined;
          return { ours: debitTransaction(m, d), lastMark };
        });
      }
    }
  }

  /**
   * A success of ours must be listed by the service: in this window (compared there), or by its
   * reference around its date (compared in its own window). Otherwise it is a finding.
   */
  private async checkAtService(
    reference: string,
    atMs: number,
    says: string,
    ourSide: () => Promise<{ ours: OurTransaction; lastMark?: string }>,
  ): Promise<void> {
    this.ctx.heartbeat({ checking: reference });
    this.summary.ourSuccessesChecked += 1;
    if (this.seen.has(reference)) return;
    const around = lookupWindowAround(atMs);
    const rows = await this.io.readPage(
      { start_date: around.start, end_date: around.end, reference },
      `reference ${reference}`,
    );
    if (rows.some((r) => r.transaction_ref === reference)) return;
    const { ours, lastMark } = await ourSide();
    const detail = `${says}; the service lists no transaction with this reference (transaction list (A6) for ${this.label}, and by reference ${around.start}..${around.end})`;
    await this.report(this.finding('mismatch_success_without_money', detail, undefined, ours, reference), lastMark);
  }

  /** The mandate flows that ran in the window (NGN pass only), each with the debits it keeps. */
  private async mandatesOfWindow(): Promise<{ m: Execution; kept: KeptDebits }[]> {
    if (this.input.currency !== 'NGN') return [];
    const mandates = new Map<string, Execution>();
    const running = `StartTime < "${this.until}" AND (ExecutionStatus = "Running" OR CloseTime >= "${this.from}")`;
    for (const e of await this.list(`PaymentFlow = "mandate" AND ${running}`)) mandates.set(e.info.workflowId, e); // any run: the handle reads the latest
    const out: { m: Execution; kept: KeptDebits }[] = [];
    for (const m of mandates.values()) {
      this.ctx.heartbeat({ reading: m.info.workflowId });
      const kept = await this.keptDebits(m);
      if (kept) out.push({ m, kept });
      else this.notComparable('mandate state unreadable');
    }
    return out;
  }

  /** Mandate debits that no flow carries by reference: the mandate flow's state names them. */
  private async mandateDebits(refs: string[]): Promise<Map<string, DebitLookup>> {
    const found = new Map<string, DebitLookup>();
    const parentOf = new Map<string, string>();
    for (const r of refs) {
      const m = MANDATE_DEBIT_REF.exec(r);
      if (m && quote(m[1])) parentOf.set(r, m[1]);
    }
    const mandates = await this.latestMandates([...new Set(parentOf.values())]);
    const states = new Map<string, Promise<KeptDebits | undefined>>();
    for (const [ref, parent] of parentOf) {
      const m = mandates.get(parent);
      if (!m) continue;
      if (!states.has(parent)) states.set(parent, this.keptDebits(m));
      const kept = await states.get(parent)!;
      if (!kept) {
        found.set(ref, { notComparable: 'mandate state unreadable' });
        continue;
      }
      const side = debitSide(ref, kept);
      found.set(ref, 'debit' in side ? debitTransaction(m, side.debit) : side);
    }
    return found;
  }

  /** The latest run of each mandate flow, by its reference. */
  private async latestMandates(refs: string[]): Promise<Map<string, Execution>> {
    const mandates = new Map<string, Execution>();
    for (const part of chunks(refs, REFS_PER_QUERY)) {
      for (const e of await this.list(
        `PaymentFlow = "mandate" AND PaymentReference IN (${part.map(quote).join(', ')})`,
      )) {
        const prev = e.reference ? mandates.get(e.reference) : undefined;
        if (e.reference && (!prev || startMs(e) > startMs(prev))) mandates.set(e.reference, e);
      }
    }
    return mandates;
  }

  /** What a mandate flow keeps; undefined when its state cannot be read. */
  private keptDebits(m: Execution): Promise<KeptDebits | undefined> {
    return readMandateDebits(this.io.client.workflow.getHandle(m.info.workflowId)).catch(() => undefined);
  }

  /** This worker's executions a visibility query lists. */
  private list(query: string): Promise<Execution[]> {
    return listExecutions(this.io.client, `TaskQueue = ${this.io.taskQueue} AND ${query}`);
  }

  private notComparable(reason: string): void {
    this.summary.notComparable += 1;
    this.summary.notComparableReasons[reason] = (this.summary.notComparableReasons[reason] ?? 0) + 1;
  }

  /** A reference marked before that now agrees is marked `resolved`. */
  private async resolveMark(reference: string, lastMark: string | undefined): Promise<void> {
    if (!this.input.markFlows || !lastMark || lastMark === 'resolved') return;
    if (await this.mark(reference, 'resolved', undefined, lastMark)) this.summary.resolved += 1;
  }

  private async report(f: ReconciliationFinding, lastMark: string | undefined): Promise<void> {
    const { summary, input } = this;
    summary.findings += 1;
    summary.byKind[f.kind] = (summary.byKind[f.kind] ?? 0) + 1;
    if (summary.findingList.length < input.maxFindings) summary.findingList.push(f);
    else summary.findingsOmitted += 1;
    if (input.markFlows && lastMark !== f.kind && (await this.mark(f.reference, f.kind, f))) summary.marked += 1;
  }

  /** Records a mark (a small workflow with ReconciliationStatus); false when one is being written right now. */
  private async mark(
    reference: string,
    status: ReconciliationMarkStatus,
    finding?: ReconciliationFinding,
    previous?: string,
  ): Promise<boolean> {
    const mark: ReconciliationMark = {
      status,
      reference,
      reconciliationId: this.input.reconciliationId,
      ...(finding ? { finding } : {}),
      ...(previous ? { previous } : {}),
    };
    try {
      await this.io.client.workflow.start('reconciliationMarkWorkflow', {
        workflowId: reconciliationMarkWorkflowId(reference),
        taskQueue: this.ctx.info.taskQueue,
        args: [mark],
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

  private finding(
    kind: FindingKind,
    detail: string,
    s: ServiceTransaction | undefined,
    ours: OurTransaction | undefined,
    reference: string,
    paidEvidenceAt?: string,
  ): ReconciliationFinding {
    const window = `${this.label} ${this.input.currency}`;
    const our = ours && {
      flow: ours.flow,
      workflowId: ours.workflowId,
      runId: ours.runId,
      ourStatus: ours.status,
      ourAmount: ours.amount,
      ourCurrency: ours.currency,
      flowClosedAt: ours.closeTime,
    };
    const service = s && {
      serviceStatus: s.status,
      serviceAmount: s.amount,
      serviceMerchantAmount: s.merchantAmount,
      serviceCurrency: s.currency,
      serviceCreatedAt: s.createdAt,
    };
    return { kind, reference, detail, window, ...our, ...service, ...(paidEvidenceAt ? { paidEvidenceAt } : {}) };
  }
}
