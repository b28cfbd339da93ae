// The webhook error log sweep (C10/C11), run by a Temporal Schedule (src/workers/schedules.ts).
//
// The service keeps every credit notification we did not acknowledge in its error log until the
// merchant deletes the entry "after the merchant's record is updated". Each row starts — or finds —
// the credit workflow for its reference, and the row is deleted only once the durable record
// (va_credit_records) holds the credit. A crash between the two leaves the row for the next sweep,
// which finds the credit workflow (or the record) and deletes it then: never lost, never doubled.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, proxyActivities, sleep, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import type { VirtualAccountCreditActivities } from '../activities/virtual-account-credit';
import type { VirtualAccountErrorLogSweepActivities } from '../activities/virtual-account-error-log-sweep';
import { virtualAccountCreditWorkflowId, type VirtualAccountCredit } from '../shared/virtual-account-credit';
import type { ErrorLogSweepSummary } from '../shared/virtual-account-error-log-sweep';
import { READ } from './steps/activity-options';
import { virtualAccountCreditWorkflow } from './virtual-account-credit';

/** The error log (C10), the durable record check and the error-log delete (C11): a few attempts with backoff. */
const { readWebhookErrorLog, deleteWebhookErrorLogEntry } =
  proxyActivities<VirtualAccountErrorLogSweepActivities>(READ);
const { isVirtualAccountCreditRecorded } = proxyActivities<VirtualAccountCreditActivities>(READ);

export interface ErrorLogSweepInput {
  /** Rows read per error-log (C10) call (the service returns at most 100). */
  perPage?: number;
  /** Error-log (C10) reads per sweep: a long log is worked off over several sweeps (history stays bounded). */
  maxRounds?: number;
  /** How long to wait for a just-started credit to be recorded before leaving its row for the next sweep. */
  recordWaitMs?: number;
}

const ROWS_AT_ONCE = 10;
/** How long a just-started credit may take to be recorded before its row is left for the next sweep. */
const RECORD_WAIT_MS = 10_000;
/** How often the durable record is checked meanwhile. */
const RECORD_CHECK_EVERY_MS = 2_000;

export async function virtualAccountErrorLogSweepWorkflow(
  input: ErrorLogSweepInput = {},
): Promise<ErrorLogSweepSummary> {
  const perPage = input.perPage ?? 100;
  const summary: ErrorLogSweepSummary = { rows: 0, started: 0, known: 0, deleted: 0, left: 0, invalid: [] };
  for (let round = 0; round < (input.maxRounds ?? 3); round++) {
    const page = await readWebhookErrorLog({ perPage });
    summary.rows += page.credits.length + page.invalid.length;
    summary.invalid.push(
      ...page.invalid.filter((i) => !summary.invalid.some((s) => s.transactionRef === i.transactionRef)),
    );
    const before = summary.deleted;
    for (let i = 0; i < page.credits.length; i += ROWS_AT_ONCE) {
      await Promise.all(
        page.credits
          .slice(i, i + ROWS_AT_ONCE)
          .map((credit) => sweepRow(credit, summary, input.recordWaitMs ?? RECORD_WAIT_MS)),
      );
    }
    // Another read only when this one was full and made progress (a stuck row must not spin).
    if (page.credits.length + page.invalid.length < perPage || summary.deleted === before) break;
  }
  return summary;
}

async function sweepRow(
  credit: VirtualAccountCredit,
  summary: ErrorLogSweepSummary,
  recordWaitMs: number,
): Promise<void> {
  const ref = credit.transactionReference;
  try {
    await startChild(virtualAccountCreditWorkflow, {
      workflowId: virtualAccountCreditWorkflowId(ref),
      args: [credit],
      // The credit lives on after the sweep (it may wait for a freeze or the hand-over).
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
    });
    summary.started += 1;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    summary.known += 1; // delivered before, or swept before: its record decides
  }
  // The error-log delete (C11) only after the credit is durably recorded.
  let recorded = await isVirtualAccountCreditRecorded(ref);
  for (let waited = 0; !recorded && waited < recordWaitMs; waited += RECORD_CHECK_EVERY_MS) {
    await sleep(RECORD_CHECK_EVERY_MS);
    recorded = await isVirtualAccountCreditRecorded(ref);
  }
  if (!recorded) {
    summary.left += 1;
    return;
  }
  try {
    await deleteWebhookErrorLogEntry(ref);
    summary.deleted += 1;
  } catch {
    summary.left += 1; // recorded; the next sweep deletes it
  }
}
