// CLI: `npm run cli -- reconcile --from YYYY-MM-DD --to YYYY-MM-DD [--currency NGN,USD]
//        [--per-page 100] [--no-mark] [--json] [--csv FILE]`
//
// Runs a reconciliation of the range (UTC days, inclusive), prints its progress (to stderr with
// --json, so stdout is the report alone), then the report as a table (or JSON), and writes the
// findings as CSV with --csv. Exit code 0 when clean, 2 when there are findings or a window could
// not be read, 1 when the input is refused (nothing started).
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { WorkflowHandle } from '@temporalio/client';
import { reconciliationProgressQuery, type ReconciliationReport } from '../../shared/reconciliation';
import type { reconciliationWorkflow } from '../../workflows/reconciliation';
import {
  finishedProgress,
  startReconciliation,
  reconciliationCsv,
  renderReconciliationProgress,
  renderReconciliationReport,
} from '../reconciliation';
import type { ContextFactory } from './context';
import { printResult, progress, settle } from './output';
import { followFlow, startedFlow, startsFlow } from './run-options';

interface ReconcileOptions {
  from?: string;
  to?: string;
  previousDay?: boolean;
  currency?: string;
  perPage?: string;
  mark: boolean;
  json?: boolean;
  csv?: string;
}

const wholeNumber = (v: string | undefined): number | undefined =>
  v === undefined ? undefined : /^\d+$/.test(v) ? Number(v) : Number.NaN;

/** Prints its progress until the run ends (within --timeout), then the final progress line; answers its report. */
async function followReconciliation(
  handle: WorkflowHandle<typeof reconciliationWorkflow>,
): Promise<ReconciliationReport> {
  let last = '';
  const out = (line: string) => progress((last = line));
  const report = (await followFlow(handle, reconciliationProgressQuery, renderReconciliationProgress, {
    intervalMs: 500,
    out,
  })) as ReconciliationReport;
  const final = renderReconciliationProgress(finishedProgress(report));
  if (final !== last) out(final);
  return report;
}

export function registerReconciliationCommands(program: Command, context: ContextFactory): void {
  const command = program
    .command('reconcile')
    .description(
      "compare the service's transactions (A6) with our flows' outcomes over a date range; mark and report the differences",
    )
    .option('--from <date>', 'first day, YYYY-MM-DD (UTC)')
    .option('--to <date>', 'last day, YYYY-MM-DD (UTC), inclusive')
    .option('--previous-day', 'yesterday (UTC), as the daily Schedule does')
    .option('--currency <list>', 'currencies to read, e.g. NGN or NGN,USD (default both)')
    .option('--per-page <n>', 'transaction list page size (A6; default 100)')
    .option('--no-mark', 'report only: do not record marks (ReconciliationStatus)')
    .option('--json', 'print the report as JSON on stdout (progress goes to stderr)')
    .option('--csv <file>', 'also write the findings as CSV to this file');
  startsFlow(command).action(async (o: ReconcileOptions) => {
    const input = {
      ...(o.previousDay ? { previousDay: true as const } : { from: o.from, to: o.to }),
      ...(o.currency
        ? { currencies: o.currency.split(',').map((c) => c.trim().toUpperCase()) as ('NGN' | 'USD')[] }
        : {}),
      ...(o.perPage !== undefined ? { perPage: wholeNumber(o.perPage) } : {}),
      markFlows: o.mark,
    };
    const progressOut = progress;
    const ctx = await context();
    const handle = await startReconciliation(ctx, input);
    if (!startedFlow(handle)) return;
    const report = await followReconciliation(handle);
    if (o.csv) {
      writeFileSync(o.csv, reconciliationCsv(report));
      progressOut(`findings written to ${o.csv} (${report.findings.length} row(s))`);
    }
    printResult(report, renderReconciliationReport(report));
    // Findings need a person (exit 3): each is a mark an operator settles (ops resolve-finding).
    if (report.status !== 'clean') settle('needsPerson');
  });
}
