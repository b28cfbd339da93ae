// One open request per terminal: the flow queues at the terminal's lock workflow
// (../pos-terminal-lock.ts, one per terminal and task queue) and holds it until its request can no
// longer be open.
import { condition, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { posTerminalLockWorkflowId, releaseTerminalLockSignal } from '../../shared/pos-terminal-lock';
import { failureMessage } from '../../shared/failures';
import { durationMs } from '../../shared/duration';
import { DEFAULT_LOCK_TIMEOUT, reads, type RemoteRequest } from './request';

export class TerminalLock {
  private readonly me = { workflowId: workflowInfo().workflowId, runId: workflowInfo().runId };
  private readonly lockId: string;
  /** The lock's grant, with the request refs of its earlier holders. */
  private granted: { recentRefs: string[] } | undefined;

  constructor(private readonly request: RemoteRequest) {
    this.lockId = posTerminalLockWorkflowId(request.input.terminal_id, workflowInfo().taskQueue);
  }

  /** The grant signal. */
  onGranted(recentRefs: string[]): void {
    this.granted = { recentRefs };
  }

  /** The requests of the lock's earlier holders: never taken for ours. */
  earlierHolders(): string[] {
    return this.granted?.recentRefs ?? [];
  }

  /** Queue at the terminal's lock until granted; false (status set, nothing sent) if not granted. */
  async take(): Promise<boolean> {
    const { request } = this;
    const { input, o } = request;
    try {
      await reads.posTerminalLockAcquire({
        terminal_id: input.terminal_id,
        lockWorkflowId: this.lockId,
        ...(o.lockCheckInterval !== undefined ? { checkIntervalMs: durationMs(o.lockCheckInterval) } : {}),
      });
    } catch (err) {
      request.setStatus('not_sent', `the terminal lock could not be taken; nothing was sent: ${failureMessage(err)}`);
      return false;
    }
    await condition(
      () => this.granted !== undefined || request.cancelRequested,
      durationMs(o.lockTimeout ?? DEFAULT_LOCK_TIMEOUT),
    );
    if (this.granted && !request.cancelRequested) return true;
    if (request.cancelRequested)
      request.setStatus('cancelled', 'cancelled while waiting for the terminal; nothing was sent');
    else request.setStatus('not_sent', 'the terminal stayed busy with another request; nothing was sent');
    return false;
  }

  /** Gives the terminal back (with our request's ref, never to be taken for another holder's). */
  async release(): Promise<void> {
    const { state } = this.request;
    await getExternalWorkflowHandle(this.lockId)
      .signal(releaseTerminalLockSignal, { ...this.me, ...(state.requestRef ? { requestRef: state.requestRef } : {}) })
      .catch(() => undefined); // no lock running: nothing to release
  }
}
