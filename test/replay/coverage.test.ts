// Replay safety of every workflow type (docs/operations.md, "Change a workflow"): each workflow the
// worker registers (every function src/workflows/index.ts exports) has at least one recorded history,
// and every recorded history (test/replay, test/pos, test/vending) replays against the current code.
// A new workflow without a fixture fails here: record one (its e2e test calling recordHistory, or a
// script like record-webhook-inbox.ts). A change that breaks open executions fails here too: patch it.
import { loadConfig } from '../../src/config/config';
import { exportedWorkflowTypes, loadFixtures, replayAll } from '../../src/workers/replay';
import { LogCapture, workflowBundle } from '../support/stack';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';

jest.setTimeout(90_000);

installTemporalRuntime(createLogger({ destination: new LogCapture() })); // the replay workers' lines stay out of the output
const fixtures = loadFixtures();
const types = exportedWorkflowTypes();

describe('replay safety of every workflow type', () => {
  it('lists the workflows the worker registers (every function src/workflows exports)', () => {
    expect(types).toEqual(
      expect.arrayContaining([
        'cardPaymentWorkflow',
        'mandateWorkflow',
        'posTerminalTransactionWorkflow',
        'vendElectricityWorkflow',
        'virtualAccountCreditWorkflow',
      ]),
    );
    expect(types.length).toBeGreaterThanOrEqual(19);
  });

  it('has a recorded history of every exported workflow type', () => {
    const missing = types.filter((t) => !fixtures.some((f) => f.workflowType === t));
    expect(missing).toEqual([]);
  });

  it('has no recorded history of a workflow type that is no longer exported', () => {
    expect(fixtures.filter((f) => !types.includes(f.workflowType)).map((f) => `${f.name} (${f.workflowType})`)).toEqual(
      [],
    );
  });

  it('replays every recorded history of every workflow type against the current code', async () => {
    const outcomes = await replayAll(fixtures, {
      encryption: loadConfig({}).encryption,
      workflowBundle: await workflowBundle(),
    });
    expect(outcomes).toHaveLength(fixtures.length);
    expect(outcomes.filter((o) => o.error)).toEqual([]);
  });

  it('catches an incompatible change: the inbox history does not replay against changed code', async () => {
    const inbox = fixtures.filter((f) => f.name === 'unmatched-payment-webhook');
    const [outcome] = await replayAll(inbox, {
      encryption: loadConfig({}).encryption,
      workflowBundle: await workflowBundle(require.resolve('../fixtures/changed-workflows')),
    });
    expect(outcome).toMatchObject({
      name: 'unmatched-payment-webhook',
      workflowType: 'unmatchedPaymentWebhookWorkflow',
      error: expect.stringMatching(/Nondeterminism|DeterminismViolation/i),
    });
  });
});
