// Worker Versioning (docs/operations.md, "Change a workflow"): the worker polls as one version of a
// Worker Deployment. Which flows stay on the version that started them (PINNED) and which move to the
// current one (AUTO_UPGRADE) is the table in src/workflows/versioning.ts. In development the worker
// makes its own version current once it polls, so `npm start` needs no extra step; in production a
// deploy step does it (`temporal worker deployment set-current-version`).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkerDeploymentConfig } from '../config/worker-deployment';

const ROOT = join(__dirname, '..', '..');

/** The package version (package.json at the project root, in src/ and dist/ alike). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The checkout's commit, or undefined outside a git checkout (a container image sets WORKER_BUILD_ID). */
function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return undefined;
  }
}

/** WORKER_BUILD_ID, or `<package version>+<git commit>`, or the package version alone. */
export function resolveBuildId(deployment: Pick<WorkerDeploymentConfig, 'buildId'>): string {
  if (deployment.buildId) return deployment.buildId;
  const commit = gitCommit();
  return commit ? `${packageVersion()}+${commit}` : packageVersion();
}

/** The version this worker runs as; undefined when versioning is off. */
export function deploymentVersion(deployment: WorkerDeploymentConfig): WorkerDeploymentVersion | undefined {
  return deployment.versioning
    ? { deploymentName: deployment.deploymentName, buildId: resolveBuildId(deployment) }
    : undefined;
}

/**
 * The SDK's deployment options. A workflow type without its own behaviour gets AUTO_UPGRADE: the
 * choice that never strands an execution on a drained version (src/workflows/versioning.ts names every type).
 */
export function workerDeploymentOptions(version: WorkerDeploymentVersion | undefined): Partial<WorkerOptions> {
  return version
    ? { workerDeploymentOptions: { version, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' } }
    : {};
}

const versionNotYetKnown = (err: unknown): boolean => {
  const code = (err as { code?: number }).code;
  // NOT_FOUND (5) or FAILED_PRECONDITION (9): the server has not yet seen this version's pollers.
  return code === 5 || code === 9;
};

/**
 * Makes `version` the deployment's current version, waiting (up to `timeoutMs`) until the server has
 * seen the worker's pollers. New flows then start on it; pinned flows of older versions finish there.
 */
export async function makeVersionCurrent(
  client: Client,
  version: WorkerDeploymentVersion,
  timeoutMs = 60_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: client.options.namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        identity: client.options.identity,
      });
      return;
    } catch (err) {
      if (!versionNotYetKnown(err) || Date.now() >= until) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Sends `percentage` (0–100) of new flows to `version` while the current version takes the rest. */
export async function rampVersion(client: Client, version: WorkerDeploymentVersion, percentage: number): Promise<void> {
  await client.workflowService.setWorkerDeploymentRampingVersion({
    namespace: client.options.namespace,
    deploymentName: version.deploymentName,
    buildId: version.buildId,
    percentage,
    identity: client.options.identity,
  });
}
