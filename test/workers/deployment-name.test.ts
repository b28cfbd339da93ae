// WORKER_DEPLOYMENT_NAME accepts exactly the names Temporal accepts (src/config/worker-deployment.ts),
// asked of a real dev server: the server's verdict on each name is its answer to a describe of that
// deployment (INVALID_ARGUMENT: refused; NOT_FOUND: a name it would take). The worker controller's
// `<Kubernetes namespace>/<name>` is one of them: a worker polling under such a name (with a quote
// and a space too) is made current, runs a flow, and the rollout's visibility queries find that flow.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { loadConfig } from '../../src/config/config';
import { DEPLOYMENT_NAME_MAX_BYTES } from '../../src/config/worker-deployment';
import { createTemporalClient } from '../../src/temporal/client';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { createLogger } from '../../src/logging/logger';
import { describeRouting, openFlowsOn, rollout, versionOutcomes, type RolloutPlan } from '../../src/workers/rollout';
import { LogCapture, testConfig } from '../support/stack';
import { eventually } from '../support/polling';
import { diskCachedBundle } from '../support/bundle-cache';
import { finishSignal } from './fixtures/rollout-flows';
import { startFastDrainServer } from './fast-drain-server';

jest.setTimeout(120_000);
installTemporalRuntime(createLogger({ destination: new LogCapture() }));

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };
const workflowsPath = require.resolve('./fixtures/rollout-flows');

let server: ChildProcess;
let connection: NativeConnection;
let client: Client;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const started = await startFastDrainServer();
  server = started.child;
  connection = started.connection;
  const config = testConfig({ TEMPORAL_ADDRESS: started.address });
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
});
afterAll(async () => {
  for (const stop of stops) await stop();
  await client?.connection.close();
  await connection?.close();
  server?.kill('SIGTERM');
});

/** The configuration's verdict: undefined (accepted) or its message for WORKER_DEPLOYMENT_NAME. */
function configVerdict(name: string): string | undefined {
  try {
    loadConfig({ WORKER_DEPLOYMENT_NAME: name });
    return undefined;
  } catch (err) {
    const line = String((err as Error).message)
      .split('\n')
      .find((l) => l.includes('WORKER_DEPLOYMENT_NAME'));
    if (!line) throw err;
    return line.trim();
  }
}

/** The server's verdict: undefined (a name it takes: no such deployment yet) or its INVALID_ARGUMENT message. */
async function serverVerdict(name: string): Promise<string | undefined> {
  try {
    await client.workflowService.describeWorkerDeployment({
      namespace: client.options.namespace,
      deploymentName: name,
    });
    throw new Error(`a deployment named ${JSON.stringify(name)} exists already`);
  } catch (err) {
    const { code, details } = err as { code?: number; details?: string };
    if (code === 5) return undefined; // NOT_FOUND: valid, no worker has polled under it
    if (code === 3) return details ?? 'INVALID_ARGUMENT';
    throw err;
  }
}

describe('WORKER_DEPLOYMENT_NAME', () => {
  const accepted = [
    'payflow',
    'default/payflow-worker', // the worker controller's <Kubernetes namespace>/<name>
    'payments/prod/payflow-worker',
    "o'brien payflow",
    'back\\slash',
    '_payflow',
    'pay__flow',
    '-payflow',
    'é-ü',
    'a'.repeat(DEPLOYMENT_NAME_MAX_BYTES),
    'é'.repeat(DEPLOYMENT_NAME_MAX_BYTES / 2), // two bytes each
  ];
  const refused: [string, RegExp][] = [
    ['pay.flow', /must not contain "\." or ":"/],
    ['payflow.1', /must not contain "\." or ":"/],
    ['pay:flow', /must not contain "\." or ":"/],
    ['__payflow', /must not start with "__"/],
    ['a'.repeat(DEPLOYMENT_NAME_MAX_BYTES + 1), /must be at most 480 bytes/],
    ['é'.repeat(DEPLOYMENT_NAME_MAX_BYTES / 2) + 'a', /must be at most 480 bytes/],
  ];
  const shown = (n: string) => (n.length > 24 ? `${n.slice(0, 8)}…(${Buffer.byteLength(n)} bytes)` : n);

  it('accepts what the server accepts and refuses what it refuses, naming the rule', async () => {
    for (const name of accepted) {
      expect([shown(name), configVerdict(name)]).toEqual([shown(name), undefined]);
      expect([shown(name), await serverVerdict(name)]).toEqual([shown(name), undefined]);
    }
    // An empty variable is an unset one: the default name, never the empty name the server refuses.
    expect(loadConfig({ WORKER_DEPLOYMENT_NAME: '' }).deployment.deploymentName).toBe('payflow');
    expect(await serverVerdict('')).toEqual(expect.any(String));
    for (const [name, rule] of refused) {
      expect([shown(name), configVerdict(name)]).toEqual([shown(name), expect.stringMatching(rule)]);
      expect([shown(name), await serverVerdict(name)]).toEqual([shown(name), expect.any(String)]);
    }
  });

  it("a worker named as the worker controller names it polls, is made current and runs a flow; the rollout's queries find it", async () => {
    // A Kubernetes namespace, and a name with a quote and a space: the queries must quote it.
    const deploymentName = `team-${randomUUID().slice(0, 8)}/o'brien payflow`;
    const taskQueue = `deployment-name-${randomUUID()}`;
    expect(configVerdict(deploymentName)).toBeUndefined();
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowBundle: await diskCachedBundle(`rollout-fixture|${workflowsPath}`, workflowsPath, () =>
        bundleWorkflowCode({ workflowsPath, logger: quiet }),
      ),
      workerDeploymentOptions: {
        version: { deploymentName, buildId: 'b1' },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'AUTO_UPGRADE',
      },
    });
    const running = worker.run();
    stops.push(async () => (worker.shutdown(), await running));

    const lines: string[] = [];
    const plan: RolloutPlan = {
      deploymentName,
      to: 'b1',
      ramp: [],
      rampHoldMs: 1000,
      maxFailureRate: 0.01,
      waitDrained: false,
      drainTimeoutMs: 30_000,
      pollersTimeoutMs: 30_000,
      pollMs: 500,
    };
    await rollout({ client, say: (l) => void lines.push(l), replayGate: async () => [] }, plan);
    expect(lines).toContain(`${deploymentName}:b1 polls ${taskQueue}`);
    expect(await describeRouting(client, deploymentName)).toMatchObject({ current: 'b1' });

    const since = new Date(Date.now() - 60_000);
    const flow = await client.workflow.start('waitingFlow', { taskQueue, workflowId: `waiting-${randomUUID()}` });
    await eventually(
      () => openFlowsOn(client, deploymentName, 'b1'),
      (open) => open.length === 1,
      {
        timeoutMs: 30_000,
        description: 'the pinned flow is listed on its version',
      },
    );
    expect(await openFlowsOn(client, deploymentName, 'b1')).toEqual([`${flow.workflowId} (waitingFlow)`]);
    await flow.signal(finishSignal);
    expect(await flow.result()).toBe('finished');
    await eventually(
      () => versionOutcomes(client, deploymentName, 'b1', since),
      (o) => o.started === 1,
      {
        timeoutMs: 30_000,
        description: "the version's flows counted",
      },
    );
    expect(await openFlowsOn(client, deploymentName, 'b1')).toEqual([]);
  });
});
