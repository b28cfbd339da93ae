// After the run: every workflow the run created (open and closed, every type, listed through
// visibility on the run's task queue) is downloaded and replayed against the workflow code the run's
// workers ran (bundled when the run started, with their data converter). A history that does not
// replay is a nondeterminism: it fails the run like a doubled payment, and is saved (protobufjs JSON,
// the format of test/replay/histories) so it can be added to the fixtures.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { EncryptionSettings } from '../src/codec/data-converter';
import { replayTargets, writeHistoryFile, type ReplayTarget } from '../src/workers/replay';
import { pool, retry } from './util';

export interface RunExecution {
  workflowId: string;
  runId: string;
  workflowType: string;
}

export interface NondeterministicHistory extends RunExecution {
  /** The replay error's first line (the SDK's explanation stripped to its details). */
  error: string;
  /** Where the history was saved. */
  file: string;
}

export interface RunReplay {
  /** Executions the run created on its task queue. */
  workflows: number;
  /** Histories replayed (fewer than `workflows` only when a download failed). */
  replayed: number;
  nondeterministic: number;
  histories: NondeterministicHistory[];
  /** Executions per workflow type (what the `workflows` are). */
  byType: Record<string, number>;
  /** Executions whose history could not be downloaded, with why. */
  notDownloaded: { workflowId: string; runId: string; error: string }[];
}

export interface ReplayOptions {
  encryption: EncryptionSettings;
  workflowBundle: WorkflowBundleWithSourceMap;
  /** Where nondeterministic histories are saved (created only when there is one). */
  saveDir: string;
}

/** Histories per replay worker (Worker.runReplayHistories), and downloads in flight. */
const BATCH = 50;
const DOWNLOADS_IN_FLIGHT = 8;

/**
 * The replay error without the SDK's wrapping: "DeterminismViolationError: [TMPRL1100] …". The SDK
 * prefixes a fixed preamble ("… Details: "), and core may wrap the message in its own failure's
 * debug text ("Workflow activation completion failed: Failure { failure: Some(Failure { message: "…" …").
 */
export function replayErrorLine(error: string): string {
  const name = /^(\w+):/.exec(error)?.[1];
  const details = error.includes('Details: ') ? error.slice(error.indexOf('Details: ') + 9) : error;
  const inner = /message: "((?:[^"\\]|\\.)*)"/.exec(details)?.[1];
  const line = (inner ?? details).split('\n', 1)[0].trim();
  return name && !line.startsWith(name) ? `${name}: ${line}` : line;
}

/** A file name for a saved history: <workflowId>-<runId>.json with anything odd in the id replaced. */
export function historyFileName(e: RunExecution): string {
  return `${e.workflowId.replace(/[^\w.-]/g, '_')}-${e.runId}.json`;
}

/** Every execution (open and closed, all runs) on `taskQueue`, through visibility. */
export async function listRunExecutions(client: Client, taskQueue: string): Promise<RunExecution[]> {
  const out: RunExecution[] = [];
  for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` }))
    out.push({ workflowId: wf.workflowId, runId: wf.runId, workflowType: wf.type });
  return out;
}

/** Replays `targets` (named workflowId/runId) in one replay worker; saves and answers those that fail. */
export async function replayAndSave(
  targets: readonly (ReplayTarget & { execution: RunExecution })[],
  opts: ReplayOptions,
): Promise<NondeterministicHistory[]> {
  const results = await replayTargets(targets, opts);
  const failed: NondeterministicHistory[] = [];
  for (const r of results) {
    if (!r.error) continue;
    const execution = targets.find((t) => t.name === r.name)!.execution;
    mkdirSync(opts.saveDir, { recursive: true });
    const file = join(opts.saveDir, historyFileName(execution));
    writeHistoryFile(file, r.target.history);
    failed.push({ ...execution, error: replayErrorLine(r.error), file });
  }
  return failed;
}

/** Downloads the histories of `executions` (a few at once, each retried briefly); the failures apart. */
async function download(
  client: Client,
  executions: readonly RunExecution[],
  notDownloaded: RunReplay['notDownloaded'],
) {
  const got = await pool(executions, DOWNLOADS_IN_FLIGHT, async (e) => {
    try {
      const history = await retry('history', Date.now() + 30_000, () =>
        client.workflow.getHandle(e.workflowId, e.runId).fetchHistory(),
      );
      return { name: `${e.workflowId}/${e.runId}`, workflowType: e.workflowType, history, execution: e };
    } catch (err) {
      notDownloaded.push({ workflowId: e.workflowId, runId: e.runId, error: (err as Error).message });
      return undefined;
    }
  });
  return got.filter((t) => t !== undefined);
}

/** Lists, downloads and replays every execution on the run's task queue, in batches. */
export async function replayRun(
  client: Client,
  taskQueue: string,
  opts: ReplayOptions & { log?: (line: string) => void },
): Promise<RunReplay> {
  const executions = await listRunExecutions(client, taskQueue);
  const notDownloaded: RunReplay['notDownloaded'] = [];
  const histories: NondeterministicHistory[] = [];
  let replayed = 0;
  for (let i = 0; i < executions.length; i += BATCH) {
    const targets = await download(client, executions.slice(i, i + BATCH), notDownloaded);
    histories.push(...(await replayAndSave(targets, opts)));
    replayed += targets.length;
    opts.log?.(`replay: ${replayed} of ${executions.length} histories replayed, ${histories.length} nondeterministic`);
  }
  const byType: Record<string, number> = {};
  for (const e of executions) byType[e.workflowType] = (byType[e.workflowType] ?? 0) + 1;
  return {
    workflows: executions.length,
    byType,
    replayed,
    nondeterministic: histories.length,
    histories,
    notDownloaded,
  };
}
