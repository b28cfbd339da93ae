// Worker Versioning on the dev server (docs/operations.md, "Change a workflow"): workers poll as
// versions of a Worker Deployment; pinned flows finish on the version that started them, new flows
// run on the current version, an auto-upgrade flow moves to the new version through its patch, and a
// ramp sends its share of new flows to the ramping version. Also: every exported workflow type has
// its behaviour in the one table, and a real worker applies it.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { createTemporalClient } from '../../src/temporal/client';
import { createPaymentsWorker } from '../../src/workers/worker';
import { exportedWorkflowTypes } from '../../src/workers/replay';
import { deploymentVersion, makeVersionCurrent, rampVersion, resolveBuildId } from '../../src/workers/versioning';
import { WORKFLOW_VERSIONING } from '../../src/workflows/steps/versioning';
import { loadConfig } from '../../src/config/config';
import { createDataConverter } from '../../src/codec/data-converter';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { LogCapture, testConfig, workflowBundle } from '../support/stack';
import { eventually } from '../support/polling';
import { diskCachedBundle } from '../support/bundle-cache';
import { finishSignal, handledByQuery, tickSignal } from '../fixtures/versioned/v1';
import { releaseUnmatchedSignal } from '../../src/workflows/webhook-inbox';

jest.setTimeout(180_000);
installTemporalRuntime(createLogger({ destination: new LogCapture() }));

const config = testConfig();
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };
/** The fixture version's bundle, kept on disk between runs like the project's (webpack only when its sources changed). */
const bundleOf = (name: 'v1' | 'v2') => {
  const workflowsPath = require.resolve(`../fixtures/versioned/${name}`);
  return diskCachedBundle(`versioning-fixture|${workflowsPath}`, workflowsPath, () =>
    bundleWorkflowCode({ workflowsPath, logger: quiet }),
  );
};

let connection: NativeConnection;
let client: Client;

beforeAll(async () => {
  connection = await NativeConnection.connect({ address: config.temporal.address });
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
});
afterAll(async () => {
  await connection?.close();
  await client?.connection.close();
});

async function versionedWorker(taskQueue: string, version: WorkerDeploymentVersion, name: 'v1' | 'v2') {
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowBundle: await bundleOf(name),
    dataConverter: createDataConverter(config.encryption),
    workerDeploymentOptions: { version, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' },
  });
  const running = worker.run();
  return { worker, stop: async () => (worker.shutdown(), await running) };
}

/** The version and behaviour the server records for an execution. */
async function versioningOf(workflowId: string): Promise<{ buildId?: string; behavior?: string }> {
  const d = await client.workflow.getHandle(workflowId).describe();
  const info = d.raw.workflowExecutionInfo?.versioningInfo;
  const behavior = info?.behavior;
  return {
    buildId: info?.deploymentVersion?.buildId ?? undefined,
    behavior: behavior === 1 ? 'PINNED' : behavior === 2 ? 'AUTO_UPGRADE' : String(behavior),
  };
}

describe('the versioning table', () => {
  it('gives every exported workflow type a behaviour and a reason', () => {
    const table = WORKFLOW_VERSIONING as Record<string, { behavior: string; why: string }>;
    expect(exportedWorkflowTypes().filter((t) => !table[t]?.why)).toEqual([]);
    expect(Object.keys(table).filter((t) => !exportedWorkflowTypes().includes(t))).toEqual([]);
    expect(table.cardPaymentWorkflow.behavior).toBe('PINNED');
    expect(table.vendElectricityWorkflow.behavior).toBe('PINNED');
    expect(table.mandateWorkflow.behavior).toBe('AUTO_UPGRADE');
  });

  it('takes the build id from WORKER_BUILD_ID, else the package version and the git commit', () => {
    expect(resolveBuildId({ buildId: 'release-7' })).toBe('release-7');
    expect(resolveBuildId({})).toMatch(/^1\.0\.0(\+[0-9a-f]{12})?$/);
    const on = loadConfig({ WORKER_DEPLOYMENT_NAME: 'pay', WORKER_BUILD_ID: 'b1' }).deployment;
    expect(deploymentVersion(on)).toEqual({ deploymentName: 'pay', buildId: 'b1' });
    expect(on.makeCurrent).toBe(true);
    expect(deploymentVersion(loadConfig({ WORKER_VERSIONING: 'off' }).deployment)).toBeUndefined();
    expect(() => loadConfig({ WORKER_VERSIONING: 'maybe' })).toThrow(/WORKER_VERSIONING: must be "on" or "off"/);
  });

  it('is what a real payments worker tells the server: a short flow pinned, a long-lived one auto-upgrade', async () => {
    const taskQueue = `versioned-real-${randomUUID()}`;
    const version = { deploymentName: `payflow-test-${randomUUID().slice(0, 8)}`, buildId: 'real-1' };
    const worker = await createPaymentsWorker({
      ...config.temporal,
      taskQueue,
      encryption: config.encryption,
      connection,
      activities: {},
      workflowBundle: await workflowBundle(),
      deployment: version,
    });
    await worker.runUntil(async () => {
      await makeVersionCurrent(client, version);
      const mark = `mark-${randomUUID()}`;
      await client.workflow.execute('reconciliationMarkWorkflow', {
        workflowId: mark,
        taskQueue,
        args: [{ reference: 'R1', status: 'matched', reconciliationId: 'versioning-test' }],
      });
      const inbox = `inbox-${randomUUID()}`;
      const h = await client.workflow.start('unmatchedPaymentWebhookWorkflow', {
        workflowId: inbox,
        taskQueue,
        args: [{}],
      });
      await eventually(
        () => versioningOf(inbox),
        (v) => v.behavior === 'AUTO_UPGRADE',
      );
      await h.signal(releaseUnmatchedSignal);
      await h.result();
      expect(await versioningOf(mark)).toEqual({ buildId: 'real-1', behavior: 'PINNED' });
      expect(await versioningOf(inbox)).toEqual({ buildId: 'real-1', behavior: 'AUTO_UPGRADE' });
    });
  });
});

describe('a change shipped as a new worker version', () => {
  const taskQueue = `versioned-${randomUUID()}`;
  const deploymentName = `payflow-test-${randomUUID().slice(0, 8)}`;
  const v1 = { deploymentName, buildId: '1.0.0' };
  const v2 = { deploymentName, buildId: '1.1.0' };

  it('finishes pinned flows on v1, runs new flows on v2, moves the auto-upgrade flow to v2 through its patch, and ramps a share', async () => {
    const w1 = await versionedWorker(taskQueue, v1, 'v1');
    const w2 = await versionedWorker(taskQueue, v2, 'v2');
    try {
      await makeVersionCurrent(client, v1);
      const start = (type: 'pinnedFlow' | 'longLivedFlow', id = `${type}-${randomUUID()}`) =>
        client.workflow.start(type, { workflowId: id, taskQueue });

      // v1 is current: flows start there.
      const pinnedOnV1 = await Promise.all([start('pinnedFlow'), start('pinnedFlow')]);
      const mandateLike = await start('longLivedFlow');
      await mandateLike.signal(tickSignal);
      await eventually(
        () => mandateLike.query(handledByQuery),
        (h) => h.length === 1,
      );
      for (const h of pinnedOnV1)
        await eventually(
          () => versioningOf(h.workflowId),
          (v) => v.buildId === '1.0.0',
        );

      // A ramp of 10% to v2: that share of new flows starts on v2.
      await rampVersion(client, v2, 10);
      const ramped = await Promise.all(Array.from({ length: 60 }, () => start('pinnedFlow')));
      await Promise.all(ramped.map((h) => h.signal(finishSignal)));
      const results = await Promise.all(ramped.map((h) => h.result()));
      const onV2 = results.filter((r) => r === 'v2').length;
      expect(onV2).toBeGreaterThanOrEqual(1);
      expect(onV2).toBeLessThanOrEqual(18); // 10% of 60 is 6; routing hashes the workflow id

      // v2 made current: new flows run v2's code; the open pinned flows stay on v1 and finish there.
      await makeVersionCurrent(client, v2);
      const pinnedOnV2 = await start('pinnedFlow');
      await pinnedOnV2.signal(finishSignal);
      expect(await pinnedOnV2.result()).toBe('v2');
      for (const h of pinnedOnV1) await h.signal(finishSignal);
      expect(await Promise.all(pinnedOnV1.map((h) => h.result()))).toEqual(['v1', 'v1']);

      // The auto-upgrade flow moves to v2: its next tick runs v2's patched branch.
      await mandateLike.signal(tickSignal);
      await mandateLike.signal(finishSignal);
      expect(await mandateLike.result()).toEqual(['v1', 'v2']);
      expect(await versioningOf(mandateLike.workflowId)).toEqual({ buildId: '1.1.0', behavior: 'AUTO_UPGRADE' });
    } finally {
      await Promise.all([w1.stop(), w2.stop()]);
    }
  });
});
