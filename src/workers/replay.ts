// Replay safety before a deploy (docs/operations.md, "Change a workflow"): histories of every workflow
// type — the recorded fixtures in the repository, or recent executions downloaded from a namespace —
// replayed against the current workflow bundle. A change that would break executions already open
// fails here with the history that shows it, before any worker runs the new code.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createDataConverter, type EncryptionSettings } from '../codec/data-converter';
import { bundleWorkflows, METRICS_INTERCEPTOR_PATH, WORKFLOWS_PATH } from './worker';

type History = temporal.api.history.v1.IHistory;

/** Where the repository keeps recorded histories (each written by the flow's own e2e test or a record script), from its root. */
export const FIXTURE_DIRS = ['test/replay/histories', 'test/pos/histories', 'test/vending/histories'];

export interface ReplayTarget {
  /** A fixture's name, or workflowId/runId of a downloaded execution. */
  name: string;
  workflowType: string;
  history: History;
}

export interface ReplayOutcome {
  name: string;
  workflowType: string;
  /** Why it did not replay (non-determinism, or another replay failure); undefined when it did. */
  error?: string;
}

/** Every workflow type the worker registers: each function exported by src/workflows/index.ts. */
export function exportedWorkflowTypes(): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const workflows = require(WORKFLOWS_PATH) as Record<string, unknown>;
  return Object.entries(workflows)
    .filter(([, v]) => typeof v === 'function')
    .map(([k]) => k)
    .sort();
}

/** The workflow type an execution's history starts. */
export function workflowTypeOf(history: History): string {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
}

/** Reads a history saved as protobufjs JSON (test/support/replay.ts's format). */
export function readHistoryFile(file: string): History {
  return temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(file, 'utf8')));
}

/** Saves a history as protobufjs JSON, the fixtures' format (readHistoryFile reads it back). */
export function writeHistoryFile(file: string, history: History): void {
  writeFileSync(file, JSON.stringify(temporal.api.history.v1.History.fromObject(history).toJSON(), null, 1));
}

/** The recorded fixtures in `dirs`, sorted by directory and name. */
export function loadFixtures(
  dirs: string[] = FIXTURE_DIRS,
  root: string = resolve(__dirname, '..', '..'),
): ReplayTarget[] {
  return dirs
    .map((d) => resolve(root, d))
    .flatMap((dir) =>
      existsSync(dir)
        ? readdirSync(dir)
            .filter((f) => f.endsWith('.json'))
            .sort()
            .map((f) => {
              const history = readHistoryFile(join(dir, f));
              return { name: f.slice(0, -5), workflowType: workflowTypeOf(history), history };
            })
        : [],
    );
}

/** The current workflow code, bundled as the worker bundles it (with the workflow interceptor modules). */
export function bundleCurrentWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflows([METRICS_INTERCEPTOR_PATH]);
}

/** Replays every target against `bundle` in one replay worker; one outcome per target, in order. */
export async function replayAll(
  targets: Iterable<ReplayTarget> | AsyncIterable<ReplayTarget>,
  opts: { encryption: EncryptionSettings; workflowBundle: WorkflowBundleWithSourceMap },
): Promise<ReplayOutcome[]> {
  const byId = new Map<string, ReplayTarget>();
  async function* histories() {
    let i = 0;
    for await (const t of targets) {
      // The replay's workflow id is a label here: unique per target, naming it in the outcome.
      const workflowId = `${i++}:${t.name}`;
      byId.set(workflowId, t);
      yield { workflowId, history: t.history };
    }
  }
  const outcomes: ReplayOutcome[] = [];
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: opts.workflowBundle, dataConverter: createDataConverter(opts.encryption) },
    histories(),
  )) {
    const target = byId.get(result.workflowId);
    outcomes.push({
      name: target?.name ?? result.workflowId,
      workflowType: target?.workflowType ?? 'unknown',
      ...(result.error ? { error: `${result.error.name}: ${result.error.message}` } : {}),
    });
  }
  return outcomes;
}

/** A replay's outcome with the target it replayed (to save the history of one that failed). */
export interface ReplayResult extends ReplayOutcome {
  target: ReplayTarget;
}

/** Replays `targets` (distinct names) in one replay worker, like replayAll, keeping each outcome's target. */
export async function replayTargets(
  targets: readonly ReplayTarget[],
  opts: { encryption: EncryptionSettings; workflowBundle: WorkflowBundleWithSourceMap },
): Promise<ReplayResult[]> {
  const byName = new Map(targets.map((t) => [t.name, t]));
  const outcomes = await replayAll(targets, opts);
  return outcomes.map((o) => ({ ...o, target: byName.get(o.name)! }));
}

export interface DownloadOptions {
  workflowTypes: string[];
  /** Most executions per workflow type (newest first). */
  perType: number;
  /** Only executions started after this instant. */
  since?: Date;
  /** Saves each downloaded history as <dir>/<type>-<runId>.json (to add it to the fixtures). */
  saveDir?: string;
}

/** Recent executions of each workflow type in the client's namespace (open and closed), with their histories. */
export async function* downloadHistories(client: Client, opts: DownloadOptions): AsyncIterable<ReplayTarget> {
  if (opts.saveDir) mkdirSync(opts.saveDir, { recursive: true });
  for (const type of opts.workflowTypes) {
    const query = [
      `WorkflowType = '${type}'`,
      ...(opts.since ? [`StartTime > '${opts.since.toISOString()}'`] : []),
    ].join(' AND ');
    let taken = 0;
    for await (const execution of client.workflow.list({ query, pageSize: Math.min(opts.perType, 100) })) {
      if (taken++ >= opts.perType) break;
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      if (opts.saveDir) writeHistoryFile(join(opts.saveDir, `${type}-${execution.runId}.json`), history);
      yield { name: `${execution.workflowId}/${execution.runId}`, workflowType: type, history };
    }
  }
}

/** Per workflow type: how many histories replayed, how many failed. */
export function summarise(
  outcomes: ReplayOutcome[],
  workflowTypes: string[],
): { workflowType: string; replayed: number; failed: number }[] {
  return workflowTypes.map((workflowType) => {
    const mine = outcomes.filter((o) => o.workflowType === workflowType);
    return { workflowType, replayed: mine.length, failed: mine.filter((o) => o.error).length };
  });
}

/** Runs a command (`npm run replay`, `npm run rollout`): exits with its code, or 2 with the one line of what kept it from running. */
export function runCommand(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(2);
    },
  );
}
