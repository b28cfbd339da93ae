// The terminal lock: one long-lived workflow per terminal (id `pos-terminal-lock-<terminal_id>`)
// that lets one POS remote request flow at a time hold the terminal. The device shows one request
// at a time, and a lost E1 answer can only be found again in the service's records if no other
// flow of ours sent to that terminal meanwhile.
//
// Flows queue with acquireTerminalLock (sent by an activity with signalWithStart, so the first
// one starts the lock) and are granted in FIFO order by a terminalLockGranted signal. The holder
// releases with releaseTerminalLock when its request can no longer be open. A holder that is gone
// (terminated, timed out, reset away) never releases: the lock signals it every checkIntervalMs,
// and a signal to a closed workflow fails, which releases the lock. A queued flow that is gone
// makes the grant signal fail, so it is skipped.
//
// The lock keeps the request refs of its recent holders and hands them to the next holder: a
// lost-E1 search never takes an earlier holder's request for its own.
import {
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  PosTerminalLockInputSchema,
  acquireTerminalLockSignal,
  releaseTerminalLockSignal,
  terminalLockCheckSignal,
  terminalLockGrantedSignal,
  terminalLockStateQuery,
  type PosTerminalLockInput,
  type TerminalLockHolder,
} from '../shared/pos';
import { paymentSearchAttributes } from '../shared/search-attributes';

const RECENT_KEPT = 20;
const same = (a: TerminalLockHolder, b: TerminalLockHolder) => a.workflowId === b.workflowId && a.runId === b.runId;

export async function posTerminalLockWorkflow(raw: PosTerminalLockInput): Promise<void> {
  const input = PosTerminalLockInputSchema.parse(raw);
  const queue: TerminalLockHolder[] = [...input.queue];
  const recent: string[] = [...input.recent];
  let holder: TerminalLockHolder | undefined;

  setHandler(acquireTerminalLockSignal, (h) => {
    if ((holder && same(holder, h)) || queue.some((q) => same(q, h))) return; // a retried acquire
    queue.push(h);
  });
  setHandler(releaseTerminalLockSignal, (h) => {
    if (h.requestRef && !recent.includes(h.requestRef)) {
      recent.push(h.requestRef);
      if (recent.length > RECENT_KEPT) recent.splice(0, recent.length - RECENT_KEPT);
    }
    if (holder && same(holder, h)) holder = undefined;
    const i = queue.findIndex((q) => same(q, h));
    if (i >= 0) queue.splice(i, 1);
  });
  setHandler(terminalLockStateQuery, () => ({
    terminalId: input.terminal_id,
    holder,
    queue: [...queue],
    recent: [...recent],
  }));
  upsertSearchAttributes(
    paymentSearchAttributes({ flow: 'pos-terminal-lock', reference: input.terminal_id, status: 'idle' }),
  );

  for (;;) {
    await condition(() => queue.length > 0 || workflowInfo().continueAsNewSuggested);
    if (queue.length === 0) {
      // Nothing held, nothing waiting: start a fresh history. Signals arriving meanwhile make the
      // server refuse the continue-as-new and they are handled first.
      await continueAsNew<typeof posTerminalLockWorkflow>({
        terminal_id: input.terminal_id,
        checkIntervalMs: input.checkIntervalMs,
        recent,
        queue,
      });
    }
    const next = queue.shift()!;
    try {
      await getExternalWorkflowHandle(next.workflowId, next.runId).signal(terminalLockGrantedSignal, {
        terminalId: input.terminal_id,
        recentRefs: [...recent],
      });
    } catch {
      continue; // the waiting flow is gone
    }
    holder = next;
    upsertSearchAttributes(paymentSearchAttributes({ status: 'held' }));
    while (holder) {
      if (await condition(() => holder === undefined, input.checkIntervalMs)) break;
      try {
        await getExternalWorkflowHandle(next.workflowId, next.runId).signal(terminalLockCheckSignal);
      } catch {
        holder = undefined; // the holder is closed without having released
      }
    }
    upsertSearchAttributes(paymentSearchAttributes({ status: 'idle' }));
  }
}
