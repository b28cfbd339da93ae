// Reconciliation's reading of our side: the flows that carry a reference, read from Temporal
// visibility (PaymentReference / PaymentStatus / PaymentAmount / PaymentCurrency, open and closed
// runs), and what they say about it (./reconciliation.ts has the whole walk).
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { MandateDebit } from '../shared/mandate';
import {
  PaymentAmount,
  PaymentCurrency,
  PaymentFlow,
  PaymentReference,
  PaymentServiceReference,
  PaymentStatus,
  ReconciliationStatus,
} from '../shared/search-attributes';
import { RECONCILIATION_MARK_FLOW, ourOutcome, type OurTransaction } from '../shared/reconciliation';

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
