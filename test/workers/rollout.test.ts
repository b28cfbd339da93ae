// `npm run rollout` (src/workers/rollout.ts) on a dev server of its own whose versions drain within
// seconds (fast-drain-server.ts): two in-process workers with different build ids, a pinned flow on
// the old one. Checked: no pollers stops it; a failing replay of an auto-upgrade type refuses to make
// the version current (and to ramp); the ramp, make-current and drain steps, with the pinned flow
// listed until it ends; the command line's --rollback and its real replay gate.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { createTemporalClient } from '../../src/temporal/client';
import { createDataConverter } from '../../src/codec/data-converter';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import { describeRouting, rollout, RolloutStopped, type RolloutIo, type RolloutPlan } from '../../src/workers/rollout';
import type { ReplayOutcome } from '../../src/workers/replay';
import { LogCapture, testConfig } from '../support/stack';
import { eventually } from '../support/polling';
import { diskCachedBundle } from '../support/bundle-cache';
import { runCommand } from '../support/run-command';
import { finishSignal } from './fixtures/rollout-flows';
import { startFastDrainServer } from './fast-drain-server';

jest.setTimeout(240_000);
installTemporalRuntime(createLogger({ destination: new LogCapture() }));

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };
const workflowsPath = require.resolve('./fixtures/rollout-flows');
const bundle = () =>
  diskCachedBundle(`rollout-fixture|${workflowsPath}`, workflowsPath, () =>
    bundleWorkflowCode({ workflowsPath, logger: quiet }),
  );

const deploymentName = `rollout-${randomUUID().slice(0, 8)}`;
const taskQueue = `rollout-${randomUUID()}`;
let server: ChildProcess;
let address: string;
let connection: NativeConnection;
let client: Client;
const stops: (() => Promise<void>)[] = [];

async function startServer(): Promise<void> {
  const started = await startFastDrainServer();
  ({ address, connection } = started);
  server = started.child;
}

async function startWorker(buildId: string): Promise<void> {
  const config = testConfig({ TEMPORAL_ADDRESS: address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: await bundle(),
    dataConverter: createDataConverter(config.encryption),
    workerDeploymentOptions: {
      version: { deploymentName, buildId },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'AUTO_UPGRADE',
    },
  });
  const running = worker.run();
  stops.push(async () => (worker.shutdown(), await running));
}

beforeAll(async () => {
  await startServer();
  const config = testConfig({ TEMPORAL_ADDRESS: address });
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
});
afterAll(async () => {
  for (const stop of stops) await stop();
  await client?.connection.close();
  await connection?.close();
  server?.kill('SIGTERM');
});

const plan = (over: Partial<RolloutPlan>): RolloutPlan => ({
  deploymentName,
  to: 'a',
  ramp: [],
  rampHoldMs: 1000,
  maxFailureRate: 0.01,
  waitDrained: false,
  drainTimeoutMs: 90_000,
  pollersTimeoutMs: 30_000,
  pollMs: 500,
  ...over,
});

function io(gate: ReplayOutcome[] = []): RolloutIo & { lines: string[]; gateCalls: number } {
  const io = {
    client,
    lines: [] as string[],
    gateCalls: 0,
    say: (line: string) => void io.lines.push(line),
    replayGate: async () => (io.gateCalls++, gate),
  };
  return io;
}

/** `npm run rollout -- <args>` as a process, against this test's server and deployment. */
function npmRollout(...args: string[]) {
  return runCommand('npm', ['run', '--silent', 'rollout', '--', ...args], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: 'default',
      WORKER_DEPLOYMENT_NAME: deploymentName,
      DEPLOYMENT: 'development',
    },
  });
}

describe('npm run rollout', () => {
  it('stops when the version has no pollers: its workers are not deployed', async () => {
    const run = io();
    await expect(rollout(run, plan({ to: 'never-deployed', pollersTimeoutMs: 1500 }))).rejects.toThrow(
      new RolloutStopped(
        `version ${deploymentName}:never-deployed has no pollers after 1.5 s: deploy its workers (WORKER_BUILD_ID=never-deployed) first`,
      ),
    );
    expect(run.gateCalls).toBe(0);
  });

  it('ships the first version: pollers, replay gate, current', async () => {
    await startWorker('a');
    const run = io();
    await rollout(run, plan({ to: 'a' }));
    expect(run.gateCalls).toBe(1);
    expect((await describeRouting(client, deploymentName)).current).toBe('a');
    expect(run.lines).toContain('no previous version: nothing to drain');
  });

  it('refuses to ramp or make a version current when an auto-upgrade history does not replay on it', async () => {
    await startWorker('b');
    const run = io([{ workflowType: 'mandateWorkflow', name: 'm-1/run-1', error: 'DeterminismViolationError: x' }]);
    await expect(rollout(run, plan({ to: 'b', ramp: [10] }))).rejects.toThrow(
      /1 auto-upgrade histories do not replay on b/,
    );
    expect(run.lines).toContain('replay FAILED mandateWorkflow m-1/run-1: DeterminismViolationError: x');
    const routing = await describeRouting(client, deploymentName);
    expect(routing.current).toBe('a');
    expect(routing.ramping).toBeUndefined();
  });

  it('ramps, makes it current, lists the flow still pinned to the old version, and says when its workers may stop', async () => {
    const pinned = await client.workflow.start('waitingFlow', { taskQueue, workflowId: `pinned-${randomUUID()}` });
    await eventually(
      async () => (await pinned.describe()).raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId,
      (b) => b === 'a',
      {
        timeoutMs: 20_000,
        description: 'the pinned flow runs on a',
      },
    );
    const run = io();
    const done = rollout(run, plan({ to: 'b', ramp: [10, 50], waitDrained: true }));
    // The old version drains while its pinned flow runs: listed by id, then finished.
    await eventually(
      () => run.lines.join('\n'),
      (text) => text.includes(pinned.workflowId),
      {
        timeoutMs: 60_000,
        description: 'the rollout lists the flow pinned to a',
      },
    );
    expect(run.lines.join('\n')).toContain('a is draining: 1 flows pinned to it still run');
    await pinned.signal(finishSignal);
    expect(await pinned.result()).toBe('finished');
    await done;
    expect(run.lines).toEqual(
      expect.arrayContaining([
        `${deploymentName}:b polls ${taskQueue}`,
        'ramping 10 % of new flows to b; watching it for 1 s',
        'ramping 50 % of new flows to b; watching it for 1 s',
        'b is current (was a): new flows start on it',
        'a is drained: its workers (payflow-worker-a) may be stopped',
      ]),
    );
    expect(run.gateCalls).toBe(1);
    expect((await describeRouting(client, deploymentName)).current).toBe('b');
  });

  it('stops a ramp whose flows fail: the ramp goes back to 0, the version is not made current', async () => {
    await startWorker('c');
    const run = io();
    const done = rollout(run, plan({ to: 'c', ramp: [99], rampHoldMs: 4000 }));
    await eventually(() => run.lines.some((l) => l.startsWith('ramping 99 %')), {
      timeoutMs: 30_000,
      description: 'the ramp to c starts',
    });
    const failing = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        client.workflow.start('failingFlow', { taskQueue, workflowId: `failing-${i}-${randomUUID()}` }),
      ),
    );
    await Promise.all(failing.map((h) => h.result().catch(() => undefined)));
    await expect(done).rejects.toThrow(
      /of \d+ flows on c failed \(more than 1 %\): ramp set back to 0, c not made current/,
    );
    const routing = await describeRouting(client, deploymentName);
    expect(routing.current).toBe('b');
    const c = await client.workflowService.describeWorkerDeploymentVersion({
      namespace: 'default',
      deploymentVersion: { deploymentName, buildId: 'c' },
    });
    expect(c.workerDeploymentVersionInfo?.rampPercentage ?? 0).toBe(0);
  });

  it('stops a ramp during which workflow tasks keep failing: the stuck flow is named', async () => {
    const run = io();
    const done = rollout(run, plan({ to: 'c', ramp: [99], rampHoldMs: 4000 }));
    await eventually(() => run.lines.some((l) => l.startsWith('ramping 99 %')), {
      timeoutMs: 30_000,
      description: 'the ramp to c starts',
    });
    const broken = await client.workflow.start('brokenTaskFlow', { taskQueue, workflowId: `broken-${randomUUID()}` });
    await expect(done).rejects.toThrow(
      `workflow tasks fail during the ramp to c (${broken.workflowId} (brokenTaskFlow)): ramp set back to 0, c not made current`,
    );
    expect((await describeRouting(client, deploymentName)).current).toBe('b');
    await broken.terminate('the test is done with it');
  });

  it('--rollback makes the previous version current again; --to then replays the namespace, ramps, ships it and waits for the drain', async () => {
    const back = await npmRollout('--rollback', '--poll', '500ms');
    expect(back.stderr).toBe('');
    expect(back.stdout.trim()).toBe('a is current again (was b; its pinned flows finish there)');
    expect(back.status).toBe(0);
    expect((await describeRouting(client, deploymentName)).current).toBe('a');
    const forward = await npmRollout(
      '--to',
      'b',
      '--ramp',
      '10',
      '--ramp-hold',
      '1s',
      '--wait-drained',
      '--poll',
      '500ms',
    );
    expect(forward.stdout).toContain('replay: 0 histories replayed, none failed');
    expect(forward.stdout).toContain('b is current (was a): new flows start on it');
    expect(forward.stdout).toContain('a is drained: its workers (payflow-worker-a) may be stopped');
    expect(forward.status).toBe(0);
    const bad = await npmRollout('--to', 'b', '--ramp', '50,10');
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim()).toBe('--ramp must be increasing whole percentages from 1 to 99, like 10,50: got "50,10"');
  });
});
