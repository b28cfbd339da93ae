// `npm run rollout`: the documented steps of shipping a worker version (docs/operations.md, "Deploy,
// ramp, make current, drain, sunset") against a Temporal namespace, so no payment is stranded on a
// version whose workers were stopped. Check the new version's pollers, gate on replay of the
// auto-upgrade types, ramp while watching the version's failures, make it current, wait for the old
// version to drain, then say the old workers may be stopped. `--rollback` makes the previous version
// current again. The command line is rollout-main.ts.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { WORKFLOW_VERSIONING } from '../workflows/steps/versioning';
import { makeVersionCurrent, rampVersion } from './versioning';
import type { ReplayOutcome } from './replay';

const { VersionDrainageStatus } = temporal.api.enums.v1;

export interface RolloutPlan {
  deploymentName: string;
  /** The build id to ship. */
  to: string;
  /** Ramp percentages, in order (each 1–99), before the version is made current; empty: no ramp. */
  ramp: number[];
  /** How long each ramp step runs before its failures are judged. */
  rampHoldMs: number;
  /** Failed share (0–1) of the new version's flows started during a step above which the rollout stops. */
  maxFailureRate: number;
  waitDrained: boolean;
  drainTimeoutMs: number;
  pollersTimeoutMs: number;
  pollMs: number;
}

export interface RolloutIo {
  client: Client;
  say(line: string): void;
  /** Replays the namespace's auto-upgrade histories against the new code: the failures, none to pass. */
  replayGate(): Promise<ReplayOutcome[]>;
}

/** The rollout stopped on purpose (a failed check): nothing it had not yet done was changed. */
export class RolloutStopped extends Error {}

/** The workflow types that move to the current version (and so run the new code on their next task). */
export function autoUpgradeTypes(): string[] {
  return Object.entries(WORKFLOW_VERSIONING)
    .filter(([, row]) => row.behavior === 'AUTO_UPGRADE')
    .map(([type]) => type);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const grpcCode = (err: unknown) => (err as { code?: number }).code;
/** A string literal in a visibility query: a deployment name may hold a quote or a backslash (Temporal allows both). */
const literal = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
/** The TemporalWorkerDeploymentVersion search attribute's value for a version, as a query literal. */
const versionAttribute = (deploymentName: string, buildId: string) => literal(`${deploymentName}:${buildId}`);

export interface DeploymentRouting {
  current?: string;
  ramping?: string;
  /** Every version the server knows, newest routing first (the last one current before the current one first). */
  previous: string[];
}

/** The deployment's current and ramping build ids, and its other versions by when they were last current. */
export async function describeRouting(client: Client, deploymentName: string): Promise<DeploymentRouting> {
  const res = await client.workflowService.describeWorkerDeployment({
    namespace: client.options.namespace,
    deploymentName,
  });
  const info = res.workerDeploymentInfo;
  const routing = info?.routingConfig;
  const current = routing?.currentDeploymentVersion?.buildId || undefined;
  const ramping = routing?.rampingDeploymentVersion?.buildId || undefined;
  const seconds = (t: { seconds?: unknown } | null | undefined) => Number(t?.seconds ?? 0);
  const previous = (info?.versionSummaries ?? [])
    .filter((v) => v.deploymentVersion?.buildId && v.deploymentVersion.buildId !== current)
    .sort((a, b) => seconds(b.lastCurrentTime) - seconds(a.lastCurrentTime))
    .filter((v) => seconds(v.lastCurrentTime) > 0)
    .map((v) => v.deploymentVersion!.buildId!);
  return { ...(current ? { current } : {}), ...(ramping ? { ramping } : {}), previous };
}

async function describeVersion(client: Client, deploymentName: string, buildId: string) {
  const res = await client.workflowService.describeWorkerDeploymentVersion({
    namespace: client.options.namespace,
    deploymentVersion: { deploymentName, buildId },
  });
  return res.workerDeploymentVersionInfo;
}

/** Waits until the server has seen the version's pollers (its workers run); stops the rollout if they never come. */
export async function waitForPollers(
  client: Client,
  deploymentName: string,
  buildId: string,
  opts: { timeoutMs: number; pollMs: number },
): Promise<string[]> {
  const until = Date.now() + opts.timeoutMs;
  for (;;) {
    try {
      const info = await describeVersion(client, deploymentName, buildId);
      const queues = (info?.taskQueueInfos ?? []).map((q) => q.name ?? '').filter(Boolean);
      if (queues.length > 0) return queues;
    } catch (err) {
      // NOT_FOUND: no worker of this version has polled yet.
      if (grpcCode(err) !== 5) throw err;
    }
    if (Date.now() >= until)
      throw new RolloutStopped(
        `version ${deploymentName}:${buildId} has no pollers after ${opts.timeoutMs / 1000} s: deploy its workers (WORKER_BUILD_ID=${buildId}) first`,
      );
    await sleep(opts.pollMs);
  }
}

/** The version's flows started since `since`: how many, and how many failed or timed out. */
export async function versionOutcomes(
  client: Client,
  deploymentName: string,
  buildId: string,
  since: Date,
): Promise<{ started: number; failed: number }> {
  const mine = `TemporalWorkerDeploymentVersion = ${versionAttribute(deploymentName, buildId)} AND StartTime >= '${since.toISOString()}'`;
  const started = (await client.workflow.count(mine)).count;
  const failed = (await client.workflow.count(`${mine} AND ExecutionStatus IN ('Failed', 'TimedOut')`)).count;
  return { started, failed };
}

/**
 * Flows on these task queues started since `since` whose workflow task keeps failing or timing out (a bug
 * in new code): open, but stuck. Such a flow has no version yet (its first task never completed), so
 * it is found by its task queue and the server's TemporalReportedProblems, not by its version.
 */
export async function stuckFlows(client: Client, taskQueues: string[], since: Date, limit = 20): Promise<string[]> {
  const queues = taskQueues.map(literal).join(', ');
  const query =
    `TaskQueue IN (${queues}) AND StartTime >= '${since.toISOString()}' AND ExecutionStatus = 'Running' AND ` +
    `TemporalReportedProblems IN ('category=WorkflowTaskFailed', 'category=WorkflowTaskTimedOut')`;
  return listFlows(client, query, limit);
}

/** Replays the auto-upgrade types' histories; stops the rollout, naming each failure, if one does not replay. */
async function replayGate(io: RolloutIo, buildId: string): Promise<void> {
  io.say(`replaying the namespace's histories of the auto-upgrade types against this code (${buildId})…`);
  const outcomes = await io.replayGate();
  const failures = outcomes.filter((o) => o.error);
  if (failures.length === 0) return io.say(`replay: ${outcomes.length} histories replayed, none failed`);
  for (const f of failures) io.say(`replay FAILED ${f.workflowType} ${f.name}: ${f.error}`);
  throw new RolloutStopped(
    `${failures.length} auto-upgrade histories do not replay on ${buildId}: not making it current (patch the change: docs/operations.md, "Patches")`,
  );
}

/** Each ramp step for `rampHoldMs`; a step whose flows fail above the limit, or get stuck, sets the ramp back to 0 and stops. */
async function rampSteps(io: RolloutIo, plan: RolloutPlan, taskQueues: string[]): Promise<void> {
  const version = { deploymentName: plan.deploymentName, buildId: plan.to };
  for (const percentage of plan.ramp) {
    const since = new Date(Date.now() - 1000);
    await rampVersion(io.client, version, percentage);
    io.say(`ramping ${percentage} % of new flows to ${plan.to}; watching it for ${plan.rampHoldMs / 1000} s`);
    await sleep(plan.rampHoldMs);
    const { started, failed } = await versionOutcomes(io.client, plan.deploymentName, plan.to, since);
    const stuck = await stuckFlows(io.client, taskQueues, since);
    io.say(
      `  ${started} flows started on ${plan.to}, ${failed} failed; ${stuck.length} stuck on a failing workflow task`,
    );
    const why =
      stuck.length > 0
        ? `workflow tasks fail during the ramp to ${plan.to} (${stuck.join(', ')})`
        : failed > 0 && failed / started > plan.maxFailureRate
          ? `${failed} of ${started} flows on ${plan.to} failed (more than ${plan.maxFailureRate * 100} %)`
          : undefined;
    if (why) {
      await rampVersion(io.client, version, 0);
      throw new RolloutStopped(`${why}: ramp set back to 0, ${plan.to} not made current`);
    }
  }
}

/**
 * Open flows pinned to a version: workflow id and type. An auto-upgrade flow that has not had a task
 * since (a mandate waiting days for its next debit) still names the old version, but moves on its
 * next task and keeps no version draining: not listed.
 */
export async function openFlowsOn(
  client: Client,
  deploymentName: string,
  buildId: string,
  limit = 20,
): Promise<string[]> {
  const query =
    `TemporalWorkerDeploymentVersion = ${versionAttribute(deploymentName, buildId)} AND ` +
    `TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'`;
  return listFlows(client, query, limit);
}

/** The first `limit` flows a visibility query finds: workflow id and type. */
async function listFlows(client: Client, query: string, limit: number): Promise<string[]> {
  const flows: string[] = [];
  for await (const wf of client.workflow.list({ query, pageSize: limit })) {
    flows.push(`${wf.workflowId} (${wf.type})`);
    if (flows.length >= limit) break;
  }
  return flows;
}

/** Waits until the old version is DRAINED (no open flow pinned to it), listing what still runs there. */
export async function waitDrained(
  io: RolloutIo,
  deploymentName: string,
  buildId: string,
  opts: { timeoutMs: number; pollMs: number },
): Promise<void> {
  const until = Date.now() + opts.timeoutMs;
  let listed = '';
  for (;;) {
    const status = (await describeVersion(io.client, deploymentName, buildId))?.drainageInfo?.status;
    const open = await openFlowsOn(io.client, deploymentName, buildId);
    if (status === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED && open.length === 0) return;
    if (open.join() !== listed) {
      listed = open.join();
      io.say(
        open.length > 0
          ? `${buildId} is draining: ${open.length} flows pinned to it still run (settle parked ones: ops list outcome-unknown):\n${open.map((f) => `  ${f}`).join('\n')}`
          : `${buildId} is draining: no open flow listed, waiting for the server to mark it drained`,
      );
    }
    if (Date.now() >= until)
      throw new RolloutStopped(
        `${buildId} still draining after ${opts.timeoutMs / 1000} s: keep its workers running (run again with --wait-drained later)`,
      );
    await sleep(opts.pollMs);
  }
}

/** Pollers, replay gate, ramp, current, drain: the new version ships, the old one's workers may stop. */
export async function rollout(io: RolloutIo, plan: RolloutPlan): Promise<void> {
  const queues = await waitForPollers(io.client, plan.deploymentName, plan.to, {
    timeoutMs: plan.pollersTimeoutMs,
    pollMs: plan.pollMs,
  });
  io.say(`${plan.deploymentName}:${plan.to} polls ${queues.join(', ')}`);
  const before = await describeRouting(io.client, plan.deploymentName);
  if (before.current === plan.to) io.say(`${plan.to} is already current`);
  else {
    // Before any routing change: a ramp already moves auto-upgrade flows to the new code.
    await replayGate(io, plan.to);
    await rampSteps(io, plan, queues);
    await makeVersionCurrent(
      io.client,
      { deploymentName: plan.deploymentName, buildId: plan.to },
      plan.pollersTimeoutMs,
    );
    io.say(`${plan.to} is current${before.current ? ` (was ${before.current})` : ''}: new flows start on it`);
  }
  const old = before.current !== plan.to ? before.current : before.previous[0];
  if (!old) return io.say('no previous version: nothing to drain');
  if (!plan.waitDrained)
    return io.say(`${old} drains: run again with --wait-drained before stopping its workers (payflow-worker-${old})`);
  await waitDrained(io, plan.deploymentName, old, { timeoutMs: plan.drainTimeoutMs, pollMs: plan.pollMs });
  io.say(`${old} is drained: its workers (payflow-worker-${old}) may be stopped`);
}

/** Makes the previous version (or `to`) current again; flows pinned to the abandoned version finish there. */
export async function rollback(
  io: RolloutIo,
  plan: Pick<RolloutPlan, 'deploymentName' | 'pollersTimeoutMs' | 'pollMs'> & { to?: string },
): Promise<string> {
  const routing = await describeRouting(io.client, plan.deploymentName);
  const target = plan.to ?? routing.previous[0];
  if (!target) throw new RolloutStopped(`${plan.deploymentName} has no previous version to roll back to`);
  await waitForPollers(io.client, plan.deploymentName, target, {
    timeoutMs: plan.pollersTimeoutMs,
    pollMs: plan.pollMs,
  });
  if (routing.ramping && routing.ramping !== target)
    await rampVersion(io.client, { deploymentName: plan.deploymentName, buildId: routing.ramping }, 0);
  await makeVersionCurrent(io.client, { deploymentName: plan.deploymentName, buildId: target }, plan.pollersTimeoutMs);
  io.say(
    `${target} is current again${routing.current ? ` (was ${routing.current}; its pinned flows finish there)` : ''}`,
  );
  return target;
}
