// The table the run prints.
import type { KindRow } from './check';

export function printTable(
  r: {
    byKind: Record<string, KindRow>;
    flows: number;
    kills: number;
    serverRestarts: number;
    doubled: number;
    lost: number;
    unknown: number;
    unknownResolvedByRequery: number;
    durationMs: number;
  },
  out: (line: string) => void,
): void {
  const cols = ['kind', 'flows', 'succeeded', 'failed', 'unknown', 'doubled', 'lost', 'resolved'] as const;
  const rows = Object.entries(r.byKind).map(([kind, k]) =>
    [kind, k.flows, k.succeeded, k.failed, k.unknown, k.doubled, k.lost, k.resolvedByRequery].map(String),
  );
  const total = [
    'TOTAL',
    ...(['flows', 'succeeded', 'failed', 'unknown', 'doubled', 'lost', 'resolvedByRequery'] as const).map((c) =>
      String(Object.values(r.byKind).reduce((n, k) => n + k[c], 0)),
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
    `kills ${r.kills}, server restarts ${r.serverRestarts}, duration ${(r.durationMs / 1000).toFixed(0)} s; doubled ${r.doubled}, lost ${r.lost}, unknown ${r.unknown} (resolved by the flows' own requeries: ${r.unknownResolvedByRequery})`,
  );
  out(r.doubled === 0 && r.lost === 0 ? 'RESULT: nothing doubled, nothing lost' : 'RESULT: FAIL');
}
