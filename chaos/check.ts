// Compares the sandbox ledger with what the flows said.
//   doubled — a reference with more than one money movement at the service;
//   lost    — a flow whose result disagrees with the ledger (success without money,
//             failure/expiry with money, never closed), or money under a reference no flow claims;
//   unknown — flows parked as unknown / outcome_unknown (not counted as lost);
//   stuck   — flows whose workflow could not go on (query or workflow task failing, chaos/stuck.ts):
//             reported with the reason, not counted as lost (their money is still checked).
import type { LedgerEntry, LedgerKind } from '../src/sandbox';
import type { FlowRecord, KindDriver } from './kinds';

export interface Finding {
  kind: string;
  ref: string;
  reference?: string;
  problem: 'doubled' | 'lost' | 'stuck';
  detail: string;
  workflowId?: string;
}

export interface KindRow {
  flows: number;
  succeeded: number;
  failed: number;
  unknown: number;
  doubled: number;
  lost: number;
  stuck: number;
  /** Flows that met a lost answer and settled it by requery/verify/search before the end. */
  resolvedByRequery: number;
  statuses: Record<string, number>;
}

export interface CheckResult {
  byKind: Record<string, KindRow>;
  findings: Finding[];
  doubled: number;
  lost: number;
  unknown: number;
  stuck: number;
  orphanEntries: LedgerEntry[];
}

/** A flow's overall class: money if any of its references moved money per the flow, unknown if any is unknown. */
function flowClass(f: FlowRecord): 'succeeded' | 'failed' | 'unknown' {
  if (f.expectations.some((e) => e.outcome === 'unknown')) return 'unknown';
  if (f.expectations.some((e) => e.outcome === 'money')) return 'succeeded';
  return 'failed';
}

export function check(flows: FlowRecord[], ledger: LedgerEntry[], drivers: readonly KindDriver[]): CheckResult {
  const byRef = new Map<string, LedgerEntry[]>();
  for (const e of ledger) byRef.set(`${e.kind}|${e.reference}`, [...(byRef.get(`${e.kind}|${e.reference}`) ?? []), e]);
  const claimed = new Set<string>();
  const byKind: Record<string, KindRow> = {};
  const findings: Finding[] = [];
  const row = (kind: string) =>
    (byKind[kind] ??= {
      flows: 0,
      succeeded: 0,
      failed: 0,
      unknown: 0,
      doubled: 0,
      lost: 0,
      stuck: 0,
      resolvedByRequery: 0,
      statuses: {},
    });

  for (const f of flows) {
    const r = row(f.kind);
    r.flows++;
    const status = f.status ?? 'none';
    r.statuses[status] = (r.statuses[status] ?? 0) + 1;
    if (f.resolvedByRequery) r.resolvedByRequery++;
    let doubled = false;
    let lost = false;
    const note = (problem: Finding['problem'], detail: string, reference?: string) => {
      findings.push({ kind: f.kind, ref: f.ref, reference, problem, detail, workflowId: f.workflowId });
      if (problem === 'doubled') doubled = true;
      else if (problem === 'lost') lost = true;
    };
    const unknown = f.expectations.some((e) => e.outcome === 'unknown');
    if (f.stuck) {
      note('stuck', f.stuck);
      r.stuck++;
    } else if (!f.closed && !unknown)
      note('lost', `never closed (last status ${status}${f.error ? `; ${f.error}` : ''})`);
    if (f.closed && f.status === 'workflow_failed') note('lost', `workflow failed: ${f.error ?? ''}`);
    for (const e of f.expectations) {
      if (e.reference === undefined) continue;
      const key = `${e.ledgerKind}|${e.reference}`;
      claimed.add(key);
      const entries = byRef.get(key) ?? [];
      if (entries.length > 1) note('doubled', `${entries.length} ${e.ledgerKind} entries`, e.reference);
      if (e.outcome === 'money' && entries.length === 0)
        note('lost', `flow says ${e.status} but the ledger has no ${e.ledgerKind}`, e.reference);
      if (e.outcome === 'no-money' && entries.length > 0)
        note('lost', `flow says ${e.status} but the ledger has ${entries.length} ${e.ledgerKind}`, e.reference);
    }
    if (doubled) r.doubled++;
    if (lost) r.lost++;
    r[flowClass(f)]++;
  }

  // Money no flow knows about (e.g. a lost E1 whose request the flow never found, while it said not_sent).
  const kindOf = new Map<LedgerKind, string>();
  for (const d of drivers) for (const k of d.ledgerKinds) kindOf.set(k, d.kind);
  const orphanEntries = ledger.filter(
    (e) => !claimed.has(`${e.kind}|${e.reference}`) && kindOf.has(e.kind) && byKind[kindOf.get(e.kind)!],
  );
  // A flow parked as unknown that never learned its reference (e.g. POS remote whose E1 answer was
  // lost) may own one such entry: it stays unknown, not lost.
  const unknownWithoutRef = new Map<string, number>();
  for (const f of flows)
    if (f.expectations.some((x) => x.outcome === 'unknown' && x.reference === undefined))
      unknownWithoutRef.set(f.kind, (unknownWithoutRef.get(f.kind) ?? 0) + 1);
  for (const e of orphanEntries) {
    const kind = kindOf.get(e.kind)!;
    const spare = unknownWithoutRef.get(kind) ?? 0;
    if (spare > 0) {
      unknownWithoutRef.set(kind, spare - 1);
      continue;
    }
    findings.push({
      kind,
      ref: '(none)',
      reference: e.reference,
      problem: 'lost',
      detail: `${e.kind} ${e.amount} ${e.currency} at ${e.at} claimed by no flow`,
    });
    row(kind).lost++;
  }
  const sum = (k: 'doubled' | 'lost' | 'unknown' | 'stuck') => Object.values(byKind).reduce((n, r) => n + r[k], 0);
  return {
    byKind,
    findings,
    doubled: sum('doubled'),
    lost: sum('lost'),
    unknown: sum('unknown'),
    stuck: sum('stuck'),
    orphanEntries,
  };
}
