// What every per-kind driver gets and gives back. A driver runs one flow end to end through the
// project's starters (the way a backend and a payer would) and reports what the flow said about
// each money reference it owns; the harness compares that with the sandbox ledger.
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { PaymentsClient } from '../../src/api';
import type { LedgerKind } from '../../src/sandbox';
import { StarterInputError, type PosTerminalSession, type StarterContext } from '../../src/starters';
import type { SandboxAdmin } from '../admin';
import { beforeDeadline, retry, sleep, type Rng } from '../util';
import { QueryFailureStreak, StuckError, type ProgressProbe } from '../stuck';

/** What a flow's final status says about money at the service for one reference. */
export type Outcome = 'money' | 'no-money' | 'unknown';

export interface Expectation {
  /** The reference the sandbox ledger records the movement under (undefined: the flow never learned it). */
  reference?: string;
  ledgerKind: LedgerKind;
  outcome: Outcome;
  /** The flow's own status string for this reference. */
  status: string;
}

export interface FlowRecord {
  kind: string;
  /** The harness's reference of the flow (order / plan / mandate reference). */
  ref: string;
  variant: string;
  workflowId?: string;
  /** The flow closed (or, for long-lived flows, reached a final state and was ended by the harness). */
  closed: boolean;
  /** Final status (or, when not closed, the PaymentStatus search attribute at the end). */
  status?: string;
  expectations: Expectation[];
  /** The flow met an unknown outcome (lost answer) and settled it itself by requery before the end. */
  resolvedByRequery: boolean;
  error?: string;
  /** Why the flow could not finish (its query or workflow task kept failing): reported, not waited for (chaos/stuck.ts). */
  stuck?: string;
  ms?: number;
}

export interface DriverContext {
  starters: StarterContext;
  api: PaymentsClient;
  admin: SandboxAdmin;
  rng: Rng;
  /** Unique per run: part of every reference. */
  runId: string;
  /** Epoch ms by which the flow must be done. */
  deadline: number;
  /** Open F1/F2 sessions of the active test terminals (POS terminal sales). */
  posSessions: PosTerminalSession[];
  /** Watches the flow's workflow while the harness waits on it: a workflow task that keeps failing ends the wait (chaos/stuck.ts). */
  progress?: ProgressProbe;
}

export interface KindDriver {
  kind: string;
  /** Ledger kinds whose entries belong to this driver's flows (for the orphan check). */
  ledgerKinds: LedgerKind[];
  run(ctx: DriverContext, flow: FlowRecord, index: number): Promise<void>;
}

/** Starts a flow; a refusal because it exists already (a retried start that had reached the server) counts as started. */
/**
 * The run of `workflowType` under `workflowId`. A payment flow's id can get a later run of another
 * type (a webhook released after the flow closed starts the holding workflow under the same id),
 * so the flow's own result is read from its own run, not the latest.
 */
export async function ownRunHandle(
  ctx: DriverContext,
  workflowId: string,
  workflowType: string,
): Promise<WorkflowHandle> {
  const client = ctx.starters.client;
  for await (const wf of client.workflow.list({
    query: `WorkflowId = '${workflowId}' AND WorkflowType = '${workflowType}'`,
  })) {
    return client.workflow.getHandle(workflowId, wf.runId);
  }
  return client.workflow.getHandle(workflowId);
}

export async function startOnce(
  ctx: DriverContext,
  what: string,
  start: () => Promise<unknown>,
  alreadyStarted: (err: unknown) => boolean,
): Promise<void> {
  await retry(
    what,
    ctx.deadline,
    async () => {
      try {
        await start();
      } catch (err) {
        if (alreadyStarted(err)) return;
        throw err;
      }
    },
    {
      intervalMs: 1000,
      fatal: (err) => err instanceof StarterInputError,
    },
  );
}

/** The workflow's result, waiting through worker kills and server restarts. A failed workflow answers undefined with the error. */
export async function awaitResult<T>(
  ctx: DriverContext,
  handle: () => WorkflowHandle | Promise<WorkflowHandle>,
  flow: FlowRecord,
): Promise<T | undefined> {
  try {
    return (await retry('result', ctx.deadline, async () => watched(ctx, (await handle()).result() as Promise<T>), {
      intervalMs: 1000,
      fatal: (err) => err instanceof WorkflowFailedError || err instanceof StuckError,
    })) as T;
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      flow.closed = true;
      flow.status = 'workflow_failed';
      flow.error = `${err.message}: ${(err.cause as Error | undefined)?.message ?? ''}`;
      return undefined;
    }
    throw err;
  }
}

/** `p`, ended early with StuckError when the flow's workflow task keeps failing. */
function watched<T>(ctx: DriverContext, p: Promise<T>): Promise<T> {
  return ctx.progress ? ctx.progress.watch(p) : p;
}

/**
 * Polls `read` and lets `act` drive the flow until `done` holds or the deadline passes. A read that
 * keeps failing for a reason of the flow's own (not a worker or server restart), or a workflow task
 * that keeps failing, throws StuckError (chaos/stuck.ts) instead of waiting out the deadline.
 */
export async function drive<S>(
  ctx: DriverContext,
  read: () => Promise<S>,
  done: (s: S) => boolean,
  act: (s: S) => Promise<void>,
  intervalMs = 400,
): Promise<S | undefined> {
  let last: S | undefined;
  const streak = new QueryFailureStreak(ctx.progress?.policy);
  while (Date.now() < ctx.deadline) {
    await ctx.progress?.check();
    try {
      last = await beforeDeadline('read', Math.min(ctx.deadline, Date.now() + 30_000), read());
      streak.succeeded();
    } catch (err) {
      const stuck = streak.failed(err);
      if (stuck) throw new StuckError(stuck);
      await sleep(intervalMs * 2); // worker down, server restarting, or the flow between runs
      continue;
    }
    if (done(last)) return last;
    try {
      await beforeDeadline('act', ctx.deadline, watched(ctx, act(last)));
    } catch (err) {
      if (err instanceof StuckError) throw err;
      // a refused or lost step: read the state again and decide anew
    }
    await sleep(intervalMs);
  }
  return last;
}
