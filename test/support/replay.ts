// Replay tests: recorded histories (test/replay/histories/*.json, and a flow's own folder such as
// test/pos/histories) must replay against the current workflow code, so a change cannot break
// workflows that are already running. Histories are recorded from real dev-server runs; their
// payloads are encrypted with the embedded dev key, so replay uses the project's data converter
// with that key.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { createDataConverter } from '../../src/codec/data-converter';
import { workflowBundle } from './stack';

export const HISTORIES_DIR = join(__dirname, '..', 'replay', 'histories');

/** Saves a finished workflow's history as `<dir>/<name>.json` (run tests with RECORD_HISTORIES=1 to refresh). */
export async function recordHistoryTo(dir: string, handle: WorkflowHandle, name: string): Promise<void> {
  const file = join(dir, `${name}.json`);
  if (existsSync(file) && process.env.RECORD_HISTORIES !== '1') return;
  mkdirSync(dir, { recursive: true });
  // protobufjs' JSON form (enums and longs as strings, bytes as base64); read back with fromObject.
  // (historyToJSON/historyFromJSON trip over duplicate protobufjs copies in node_modules.)
  const history = temporal.api.history.v1.History.fromObject(await handle.fetchHistory());
  writeFileSync(file, JSON.stringify(history.toJSON(), null, 1));
}

/** Saves a finished workflow's history in test/replay/histories. */
export function recordHistory(handle: WorkflowHandle, name: string): Promise<void> {
  return recordHistoryTo(HISTORIES_DIR, handle, name);
}

/** The recorded histories in `dir`, by name. */
export function historyNames(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => f.slice(0, -5))
        .sort()
    : [];
}

/** Replays `<dir>/<name>.json`; throws DeterminismViolationError if the code diverged. */
export async function replayHistoryFrom(dir: string, name: string): Promise<void> {
  const history = temporal.api.history.v1.History.fromObject(
    JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')),
  );
  await Worker.runReplayHistory(
    { workflowBundle: await workflowBundle(), dataConverter: createDataConverter(loadConfig({}).encryption) },
    history,
  );
}

/** Replays a history recorded in test/replay/histories. */
export function replayHistory(name: string): Promise<void> {
  return replayHistoryFrom(HISTORIES_DIR, name);
}
