// chaos/replay.ts: the chaos run's last step replays every history it created against the workflow
// code it ran and saves the ones that do not replay, in the fixtures' format.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config/config';
import { loadFixtures, readHistoryFile } from '../../src/workers/replay';
import { releaseUnmatchedSignal } from '../../src/workflows/webhook-inbox';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { replayAndSave, replayErrorLine, replayRun, historyFileName } from '../../chaos/replay';
import { LogCapture, testConfig, withWorker, workflowBundle } from '../support/stack';
import { chargeSuccessfulEvent, signalUnmatchedWebhook } from '../support/flow-inputs';
import { withEventHandOver } from '../support/time-skipping';

jest.setTimeout(120_000);
installTemporalRuntime(createLogger({ destination: new LogCapture() }));

const HISTORIES = join(__dirname, 'histories');
// Recorded histories are encrypted with the embedded development key (test/support/replay.ts).
const encryption = loadConfig({}).encryption;

/** The fixtures of `dir` as the replay step's targets (each named like a downloaded execution). */
function targetsIn(dir: string) {
  return loadFixtures([dir], HISTORIES).map((t) => ({
    ...t,
    execution: { workflowId: `wf-${t.name}`, runId: 'run-1', workflowType: t.workflowType },
  }));
}

describe('the replay step (chaos/replay.ts)', () => {
  it('of two histories, reports and saves only the one the code no longer replays', async () => {
    const saveDir = join(mkdtempSync(join(tmpdir(), 'chaos-replay-')), 'nondeterministic');
    // reconciliation-mark is a recorded history; the other is scheduled-mandate-debit with its
    // activity renamed, as if the code had changed the activity it schedules without a patch (the
    // cluster's real nondeterministic mandate replays on today's code: the next test).
    const failed = await replayAndSave(targetsIn('good-and-nondeterministic'), {
      encryption,
      workflowBundle: await workflowBundle(),
      saveDir,
    });
    expect(failed).toHaveLength(1);
    const [bad] = failed;
    expect(bad.workflowId).toBe('wf-scheduled-mandate-debit-activity-renamed');
    expect(bad.workflowType).toBe('scheduledMandateDebitWorkflow');
    expect(bad.error).toMatch(/^DeterminismViolationError: \[TMPRL1100\] Nondeterminism error: /);
    expect(bad.error).toContain('requestScheduledMandateDebitBeforeRename');
    expect(bad.error).not.toContain('\n');
    // Saved in the fixtures' format, readable back with the same events.
    expect(readdirSync(saveDir)).toEqual([historyFileName(bad)]);
    const saved = readHistoryFile(bad.file);
    const original = readHistoryFile(join(HISTORIES, 'good-and-nondeterministic', `${bad.workflowId.slice(3)}.json`));
    expect(saved.events?.length).toBe(original.events?.length);
  });

  it("replays the cluster's mandate on the code with the fix, and reports the error it failed with as one line", async () => {
    // The mandate that failed with TMPRL1100 on the cluster (2026-11-29). On the code that ran it (before
    // 02612af) its replay failed with this error; the fix made the recorded history replay.
    const history = readHistoryFile(join(HISTORIES, 'cluster-mandate-nondeterminism.json'));
    const failed = await replayAndSave(
      [
        {
          name: 'cluster-mandate',
          workflowType: 'mandateWorkflow',
          history,
          execution: { workflowId: 'mandate-cluster', runId: 'r', workflowType: 'mandateWorkflow' },
        },
      ],
      { encryption, workflowBundle: await workflowBundle(), saveDir: mkdtempSync(join(tmpdir(), 'chaos-replay-')) },
    );
    expect(failed).toEqual([]);
    const before =
      'DeterminismViolationError: Replay failed with a nondeterminism error. This means that the workflow code as written is not compatible with the history that was fed in. Details: Workflow activation completion failed: Failure { failure: Some(Failure { message: "[TMPRL1100] Nondeterminism error: Update machine does not handle this event: HistoryEvent(id: 42, UpsertWorkflowSearchAttributes)", source: "", stack_trace: "", encoded_attributes: None, cause: None, failure_info: Some(ApplicationFailureInfo(ApplicationFailureInfo { r#type: "", non_retryable: false, details: None, next_retry_delay: None, category: Unspecified })) }), force_cause: NonDeterministicError }';
    expect(replayErrorLine(before)).toBe(
      'DeterminismViolationError: [TMPRL1100] Nondeterminism error: Update machine does not handle this event: HistoryEvent(id: 42, UpsertWorkflowSearchAttributes)',
    );
  });

  it('lists every execution on the run task queue, open and closed, and replays each', async () => {
    const config = testConfig();
    const saveDir = join(mkdtempSync(join(tmpdir(), 'chaos-replay-')), 'nondeterministic');
    await withWorker(
      config,
      { activities: withEventHandOver({}), workflowBundle: await workflowBundle() },
      async (client) => {
        const closed = await signalUnmatchedWebhook(
          client,
          config.temporal.taskQueue,
          chargeSuccessfulEvent(`chaos-replay-${randomUUID()}`),
        );
        await closed.signal(releaseUnmatchedSignal);
        await closed.result();
        // Left open: held until released.
        await signalUnmatchedWebhook(
          client,
          config.temporal.taskQueue,
          chargeSuccessfulEvent(`chaos-open-${randomUUID()}`),
        );
        let replay = await replayRun(client, config.temporal.taskQueue, {
          encryption: config.encryption,
          workflowBundle: await workflowBundle(),
          saveDir,
        });
        // Visibility catches up shortly after a start.
        for (let i = 0; i < 20 && replay.workflows < 2; i++) {
          await new Promise((r) => setTimeout(r, 500));
          replay = await replayRun(client, config.temporal.taskQueue, {
            encryption: config.encryption,
            workflowBundle: await workflowBundle(),
            saveDir,
          });
        }
        expect(replay).toEqual({
          workflows: 2,
          byType: { unmatchedPaymentWebhookWorkflow: 2 },
          replayed: 2,
          nondeterministic: 0,
          histories: [],
          notDownloaded: [],
        });
      },
    );
  });
});

describe('replayErrorLine', () => {
  it("keeps the error's name and the first line of its details, without the SDK's preamble", () => {
    expect(
      replayErrorLine(
        'DeterminismViolationError: Replay failed with a nondeterminism error. This means that the workflow code as written is not compatible with the history that was fed in. Details: [TMPRL1100] Nondeterminism error: Update machine does not handle this event\nstack…',
      ),
    ).toBe('DeterminismViolationError: [TMPRL1100] Nondeterminism error: Update machine does not handle this event');
    expect(replayErrorLine('ReplayError: boom\nmore')).toBe('ReplayError: boom');
    // Core's own wrapping of the failure it sent.
    expect(
      replayErrorLine(
        'DeterminismViolationError: Workflow activation completion failed: Failure { failure: Some(Failure { message: "[TMPRL1100] Nondeterminism error: Activity type of scheduled event \'a\' does not match", source: "" }), force_cause: NonDeterministicError }',
      ),
    ).toBe(
      "DeterminismViolationError: [TMPRL1100] Nondeterminism error: Activity type of scheduled event 'a' does not match",
    );
  });
});
