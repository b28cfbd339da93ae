// The terminal lock: one long-lived workflow per terminal (id `pos-terminal-lock-<terminal_id>`)
// that lets one POS remote request flow at a time hold the terminal. The device shows one request
// at a time, and a lost request create (E1) answer can only be found again in the service's records if no other
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
// search for a lost request create (E1) never takes an earlier holder's request for its own.
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
} from '../shared/pos-terminal-lock';
import { paymentSearchAttributes } from '../shared/search-attributes';

const RECENT_KEPT = 20;
const same = (a: TerminalLockHolder, b: TerminalLockHolder) => a.workflowId === b.workflowId && a.runId === b.runId;

export async function posTerminalLockWorkflow(raw: PosTerminalLockInput): Promise<void> {
  const lock = new PosTerminalLock(raw);
  lock.listen();
  await lock.run();
}

/** One run of a terminal's lock (a continue-as-new carries its queue and recent refs to the next). */
class PosTerminalLock {
  // --- state ---

  private readonly input: ReturnType<typeof PosTerminalLockInputSchema.parse>;
  private readonly queue: TerminalLockHolder[];
  /** The request refs of recent holders, handed to the next holder. */
  private readonly recent: string[];
  private holder: TerminalLockHolder | undefined;

  constructor(raw: PosTerminalLockInput) {
    this.input = PosTerminalLockInputSchema.parse(raw);
    this.queue = [...this.input.queue];
    this.recent = [...this.input.recent];
  }

  // --- handlers ---

  listen(): void {
    setHandler(acquireTerminalLockSignal, (h) => this.acquire(h));
    setHandler(releaseTerminalLockSignal, (h) => this.release(h));
    setHandler(terminalLockStateQuery, () => ({
      terminalId: this.input.terminal_id,
      holder: this.holder,
      queue: [...this.queue],
      recent: [...this.recent],
    }));
  }

  private acquire(h: TerminalLockHolder): void {
    if ((this.holder && same(this.holder, h)) || this.queue.some((q) => same(q, h))) return; // a retried acquire
    this.queue.push(h);
  }

  private release(h: TerminalLockHolder & { requestRef?: string }): void {
    const { recent, queue } = this;
    if (h.requestRef && !recent.includes(h.requestRef)) {
      recent.push(h.requestRef);
      if (recent.length > RECENT_KEPT) recent.splice(0, recent.length - RECENT_KEPT);
    }
    if (this.holder && same(this.holder, h)) this.holder = undefined;
    const i = queue.findIndex((q) => same(q, h));
    if (i >= 0) queue.splice(i, 1);
  }

  // --- the main steps ---

  /** Grant the lock in FIFO order, one holder at a time; continue-as-new when idle and the history asks for it. */
  async run(): Promise<void> {
    const { input, queue } = this;
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
          recent: this.recent,
          queue,
        });
      }
      const next = queue.shift()!;
      if (!(await this.grant(next))) continue; // the waiting flow is gone
      upsertSearchAttributes(paymentSearchAttributes({ status: 'held' }));
      await this.whileHeld(next);
      upsertSearchAttributes(paymentSearchAttributes({ status: 'idle' }));
    }
  }

  // --- helpers ---

  private async grant(next: TerminalLockHolder): Promise<boolean> {
    try {
      await getExternalWorkflowHandle(next.workflowId, next.runId).signal(terminalLockGrantedSignal, {
        terminalId: this.input.terminal_id,
        recentRefs: [...this.recent],
      });
    } catch {
      return false;
    }
    this.holder = next;
    return true;
  }

  /** Until the holder releases, or a check signal to it fails (it is closed without having released). */
  private async whileHeld(next: TerminalLockHolder): Promise<void> {
    while (this.holder) {
      if (await condition(() => this.holder === undefined, this.input.checkIntervalMs)) break;
      try {
        await getExternalWorkflowHandle(next.workflowId, next.runId).signal(terminalLockCheckSignal);
      } catch {
        this.holder = undefined; // the holder is closed without having released
      }
    }
  }
}
