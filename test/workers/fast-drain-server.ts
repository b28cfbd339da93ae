// The dev server of the rollout tests (rollout.test.ts, rollout-rehearsal.test.ts): a version drains
// within seconds (its drainage status is refreshed every second; the server's default is minutes), a
// flow whose workflow task failed once is marked at once (TemporalReportedProblems; default: after
// 5), and the project's search attributes are registered (the worker processes' flows write them).
import { spawn, type ChildProcess } from 'node:child_process';
import { NativeConnection } from '@temporalio/worker';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../../src/shared/search-attributes';
import { temporalBinaries } from '../../src/stack/temporal-binaries';
import { freePort } from '../../src/http/free-port';
import { eventually } from '../support/polling';

export interface FastDrainServer {
  address: string;
  child: ChildProcess;
  /** A worker connection to it, open once it answers. */
  connection: NativeConnection;
}

/** Starts the server and waits until it answers. */
export async function startFastDrainServer(): Promise<FastDrainServer> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const args = ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port)];
  args.push('--log-level', 'error');
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_REGISTRATION))
    args.push('--search-attribute', `${name}=${type}`);
  for (const kv of [
    'frontend.enableUpdateWorkflowExecution=true',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    'frontend.workerVersioningWorkflowAPIs=true',
    'matching.wv.VersionDrainageStatusRefreshInterval="1s"',
    'matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"',
    'system.numConsecutiveWorkflowTaskProblemsToTriggerSearchAttribute=1',
  ])
    args.push('--dynamic-config-value', kv);
  const child = spawn(temporalBinaries().cli!, args, { stdio: 'ignore' });
  const connection = await eventually(() => NativeConnection.connect({ address }), {
    timeoutMs: 60_000,
    ignoreErrors: true,
    description: 'the rollout tests dev server answers',
  });
  return { address, child, connection };
}
