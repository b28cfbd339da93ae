// Replay tests: recorded histories (test/replay/histories/*.json) must replay against the
// current workflow code, so a change cannot break workflows that are already running.
// Histories are recorded from real dev-server runs; their payloads are encrypted with the
// embedded dev key, so replay uses the project's data converter with that key.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { createDataConverter } from '../../src/codec/data-converter';
import { workflowBundle } from './stack';

export const HISTORIES_DIR = join(__dirname, '..', 'replay', 'histories');

/** Saves a finished workflow's history (run tests with RECORD_HISTORIES=1 to refresh). */
export async function recordHistory(handle: WorkflowHandle, name: string): Promise<void> {
  const file = join(HISTORIES_DIR, `${name}.json`);
  if (existsSync(file) && process.env.RECORD_HISTORIES !== '1') return;
  mkdirSync(dirname(file), { recursive: true });
  // protobufjs' JSON form (enums and longs as strings, bytes as base64); read back with fromObject.
  // (historyToJSON/historyFromJSON trip over duplicate protobufjs copies in node_modules.)
  const history = temporal.api.history.v1.History.fromObject(await handle.fetchHistory());
  writeFileSync(file, JSON.stringify(history.toJSON(), null, 1));
}

/** Replays a recorded history; throws DeterminismViolationError if the code diverged. */
export async function replayHistory(name: string): Promise<void> {
  const history = temporal.api.history.v1.History.fromObject(
    JSON.parse(readFileSync(join(HISTORIES_DIR, `${name}.json`), 'utf8')),
  );
  await Worker.runReplayHistory(
    { workflowBundle: await workflowBundle(), dataConverter: createDataConverter(loadConfig({}).encryption) },
    history,
  );
}
