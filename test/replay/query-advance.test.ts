// The SDK's ordering fault behind the cluster's lost mandate (docs/sdk-update-ordering.md), kept as a
// history of a few-line workflow (test/fixtures/update-ordering), recorded live by its reproduction
// script (`npx tsx test/fixtures/update-ordering/reproduce.ts <address> --save <file>`): a query
// applied an activity's result no workflow task had handled, the workflow moved on for it (an upsert),
// and the Update that came with the next task was accepted after that upsert. On replay the Update
// comes first. The guard (src/workflows/steps/task-boundary-guard.ts) refuses that query, so no worker
// records such a history again; test/replay/task-boundary-guard.test.ts checks its rule, and
// test/replay/mandate.test.ts that the mandate the fault recorded in the cluster replays.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { LogCapture } from '../support/stack';

const FIXTURE = join(__dirname, '..', 'fixtures', 'update-ordering');
const EventType = temporal.api.enums.v1.EventType;

installTemporalRuntime(createLogger({ destination: new LogCapture(), level: 'warn' }), 'WARN');

const kept = temporal.api.history.v1.History.fromObject(
  JSON.parse(readFileSync(join(FIXTURE, 'nondeterministic-history.json'), 'utf8')),
);

describe('the SDK fault a query makes when it applies events no workflow task has handled', () => {
  jest.setTimeout(60_000);

  it('recorded the Update accepted after the upsert its activity result led to, in one task', () => {
    const types = (kept.events ?? []).map((e) => EventType[e.eventType!].replace('EVENT_TYPE_', ''));
    const accepted = types.indexOf('WORKFLOW_EXECUTION_UPDATE_ACCEPTED');
    expect(types.slice(accepted - 3, accepted + 1)).toEqual([
      'WORKFLOW_TASK_STARTED',
      'WORKFLOW_TASK_COMPLETED',
      'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
      'WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
    ]);
    // The activity's result came before a task that timed out: no task handled it before the query.
    expect(types.slice(6, 10)).toEqual([
      'ACTIVITY_TASK_COMPLETED',
      'WORKFLOW_TASK_SCHEDULED',
      'WORKFLOW_TASK_TIMED_OUT',
      'WORKFLOW_TASK_SCHEDULED',
    ]);
  });

  it('does not replay with SDK 1.24.0 (when it does, the SDK is fixed: retire the guard, docs/sdk-update-ordering.md)', async () => {
    await expect(Worker.runReplayHistory({ workflowsPath: join(FIXTURE, 'workflows.ts') }, kept)).rejects.toThrow(
      /Nondeterminism error: Update machine does not handle this event: HistoryEvent\(id: \d+, UpsertWorkflowSearchAttributes\)/,
    );
  });
});
