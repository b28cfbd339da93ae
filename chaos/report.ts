// The table the run prints, the replay's lines, and what fails the run.
import type { KindRow } from './check';
import type { RunReplay } from './replay';

/** What a run's verdict reads: money, stuck flows, replay, and the merchant's events. */
export interface VerdictInput {
  doubled: number;
  lost: number;
  stuck: number;
  nondeterministic: number;
  events?: { lost: number; tally: { idMismatches: number; refused: number } };
}

/** Why the run fails (empty: it passes). A nondeterministic history or a stuck flow fails it like a doubled payment. */
export function failureReasons(r: VerdictInput): string[] {
  const counts: [string, number][] = [
    ['doubled', r.doubled],
    ['lost', r.lost],
    ['stuck', r.stuck],
    ['nondeterministic', r.nondeterministic],
    ['events lost', r.events?.lost ?? 0],
    ['event ids reused for other bodies', r.events?.tally.idMismatches ?? 0],
    ['event signatures refused', r.events?.tally.refused ?? 0],
  ];
  return counts.filter(([, n]) => n > 0).map(([what, n]) => `${what} ${n}`);
}

/** The run's verdict line. */
export function resultLine(r: VerdictInput): string {
  const reasons = failureReasons(r);
  return reasons.length === 0
    ? 'RESULT: nothing doubled, nothing lost, nothing stuck, every history replayed'
    : `RESULT: FAIL (${reasons.join(', ')})`;
}

/** The replay step's summary, one line per nondeterministic history (workflow id, error's first line, file). */
export function replayLines(r: RunReplay): string[] {
  return [
    `replay: ${r.replayed} of ${r.workflows} workflow histories replayed against the run's workflow code, ${r.nondeterministic} nondeterministic`,
    ...r.histories.map(
      (h) => `NONDETERMINISTIC ${h.workflowId} (${h.workflowType}, run ${h.runId}): ${h.error}; saved to ${h.file}`,
    ),
    ...r.notDownloaded.map((n) => `NOT REPLAYED ${n.workflowId} (run ${n.runId}): ${n.error}`),
  ];
}

export function printTable(
  r: {
    byKind: Record<string, KindRow>;
    flows: number;
    kills: number;
    serverRestarts: number;
    doubled: number;
    lost: number;
    unknown: number;
    stuck: number;
    nondeterministic: number;
    unknownResolvedByRequery: number;
    durationMs: number;
  },
  out: (line: string) => void,
): void {
  const cols = ['kind', 'flows', 'succeeded', 'failed', 'unknown', 'doubled', 'lost', 'stuck', 'resolved'] as const;
  const rows = Object.entries(r.byKind).map(([kind, k]) =>
    [kind, k.flows, k.succeeded, k.failed, k.unknown, k.doubled, k.lost, k.stuck, k.resolvedByRequery].map(String),
  );
  const total = [
    'TOTAL',
    ...(['flows', 'succeeded', 'failed', 'unknown', 'doubled', 'lost', 'stuck', 'resolvedByRequery'] as const).map(
      (c) => String(Object.values(r.byKind).reduce((n, k) => n + k[c], 0)),
    ),
  ];
  const all = [[...cols], ...rows, total];
  const width = cols.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  const line = (row: string[]) => row.map((c, i) => (i === 0 ? c.padEnd(width[i]) : c.padStart(width[i]))).join('  ');
  out(line(all[0]));
  out(width.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) out(line(row));
  out(width.map((w) => '-'.repeat(w)).join('  '));
  out(line(total));
  out(
    `kills ${r.kills}, server restarts ${r.serverRestarts}, duration ${(r.durationMs / 1000).toFixed(0)} s; doubled ${r.doubled}, lost ${r.lost}, stuck ${r.stuck}, unknown ${r.unknown} (resolved by the flows' own requeries: ${r.unknownResolvedByRequery}), nondeterministic histories ${r.nondeterministic}`,
  );
}
