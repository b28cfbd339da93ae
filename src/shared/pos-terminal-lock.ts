// The POS terminal lock's contract: one open remote request per terminal. The lock is a workflow
// of its own (src/workflows/pos-terminal-lock.ts); remote request flows queue at it by signal.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { z } from 'zod';
import { requiredText } from './pos-card-fields';
import { lazy } from './lazy';

/** The lock's workflow id: per terminal, and per task queue (one deployment's flows share a lock; separate deployments or test runs on one server do not). */
export const posTerminalLockWorkflowId = (terminalId: string, taskQueue?: string): string =>
  taskQueue === undefined ? `pos-terminal-lock-${terminalId}` : `pos-terminal-lock-${taskQueue}-${terminalId}`;

export const PosTerminalLockInputSchema = lazy('pos-terminal-lock.PosTerminalLockInputSchema', (z) =>
  z.strictObject({
    terminal_id: requiredText(z, 'the terminal id'),
    /** How often the holder is checked (a signal to it fails once it is closed). */
    checkIntervalMs: z.number().int().min(100).max(3_600_000).default(60_000),
    /** Request refs of recent holders (carried over continue-as-new). */
    recent: z.array(z.string()).max(50).default([]),
    /** Waiting holders (carried over continue-as-new). */
    queue: z.array(z.strictObject({ workflowId: z.string().min(1), runId: z.string().min(1) })).default([]),
  }),
);
export type PosTerminalLockInput = z.input<typeof PosTerminalLockInputSchema>;

export interface TerminalLockHolder {
  workflowId: string;
  runId: string;
}
/** To the lock: queue me (idempotent). */
export const acquireTerminalLockSignal = defineSignal<[TerminalLockHolder]>('acquireTerminalLock');
/** To the lock: I am done (or gave up waiting); request_ref is what my request was, if known. */
export const releaseTerminalLockSignal =
  defineSignal<[TerminalLockHolder & { requestRef?: string }]>('releaseTerminalLock');
/** To the holder: the terminal is yours. recentRefs: requests of earlier holders (never ours). */
export const terminalLockGrantedSignal =
  defineSignal<[{ terminalId: string; recentRefs: string[] }]>('terminalLockGranted');
/** To the holder: a liveness check; a closed holder makes the signal fail and the lock moves on. */
export const terminalLockCheckSignal = defineSignal('terminalLockCheck');
export interface TerminalLockState {
  terminalId: string;
  holder?: TerminalLockHolder;
  queue: TerminalLockHolder[];
  recent: string[];
}
export const terminalLockStateQuery = defineQuery<TerminalLockState>('terminalLockState');
