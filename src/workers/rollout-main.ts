// `npm run rollout`: ships a worker version against the configured namespace (src/workers/rollout.ts).
//
//   npm run rollout -- --to 1.1.0                          pollers, replay gate, make current
//   npm run rollout -- --to 1.1.0 --ramp 10,50 --wait-drained   ramp, make current, wait for the old one to drain
//   npm run rollout -- --rollback [--to 1.0.0]              the previous version (or 1.0.0) current again
//
// Connection: TEMPORAL_* variables or a TEMPORAL_CONFIG_FILE profile, as the worker (and that
// deployment's PAYLOAD_ENCRYPTION_KEYS, to replay its histories). Exit code 0: done; 1: stopped by a
// check (no pollers, replay, failures during a ramp, still draining); 2: could not run.
import { Command } from 'commander';
import 'dotenv/config';
import { loadConfig } from '../config/config';
import { createLogger } from '../logging/logger';
import { installTemporalRuntime } from '../logging/temporal-logger';
import { createTemporalClient } from '../temporal/client';
import { bundleCurrentWorkflows, downloadHistories, replayAll, runCommand } from './replay';
import { autoUpgradeTypes, rollback, rollout, RolloutStopped, type RolloutIo } from './rollout';

/** 30s, 5m, 2h or plain milliseconds. */
function parseDuration(text: string, option: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(text);
  if (!m) throw new Error(`${option} must look like 30s, 5m or 2h: got "${text}"`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 'ms']!;
}

/** "10,50" → [10, 50]: increasing percentages from 1 to 99. */
function parseRamp(text: string): number[] {
  const steps = text.split(',').map((s) => Number(s.trim()));
  const ok = steps.every((p, i) => Number.isInteger(p) && p >= 1 && p <= 99 && (i === 0 || p > steps[i - 1]!));
  if (!ok) throw new Error(`--ramp must be increasing whole percentages from 1 to 99, like 10,50: got "${text}"`);
  return steps;
}

function program(): Command {
  return new Command()
    .name('npm run rollout --')
    .description('Ship a worker version: pollers, replay gate, ramp, make current, drain')
    .option('--to <buildId>', 'the build id to make current (with --rollback: the version to go back to)')
    .option('--ramp <percentages>', 'ramp steps before making it current, e.g. 10,50')
    .option('--ramp-hold <duration>', 'how long each ramp step runs before its failures are judged', '5m')
    .option('--max-failure-rate <percent>', "failed share of a ramp step's flows that stops the rollout", '1')
    .option('--wait-drained', 'wait until the old version is drained, then say its workers may stop')
    .option('--drain-timeout <duration>', 'how long to wait for the drain', '2h')
    .option('--rollback', 'make the previous version current again')
    .option('--replay-per-type <n>', 'auto-upgrade executions replayed per workflow type', '20')
    .option('--replay-since <duration>', 'only executions started within this age', '168h')
    .option('--pollers-timeout <duration>', "how long to wait for the version's pollers", '2m')
    .option('--poll <duration>', 'how often to look again while waiting', '10s');
}

type Options = Record<string, string | boolean | undefined>;

/** The replay gate of `npm run replay -- --namespace`, for the auto-upgrade types only. */
function namespaceReplayGate(client: RolloutIo['client'], config: ReturnType<typeof loadConfig>, o: Options) {
  return async () => {
    const workflowBundle = await bundleCurrentWorkflows();
    const since = new Date(Date.now() - parseDuration(String(o.replaySince), '--replay-since'));
    const targets = downloadHistories(client, {
      workflowTypes: autoUpgradeTypes(),
      perType: Number(o.replayPerType),
      since,
    });
    return replayAll(targets, { encryption: config.encryption, workflowBundle });
  };
}

async function main(): Promise<number> {
  const o = program().parse().opts<Options>();
  if (!o.rollback && !o.to) throw new Error('--to <buildId> is required (or --rollback)');
  const timing = {
    pollersTimeoutMs: parseDuration(String(o.pollersTimeout), '--pollers-timeout'),
    pollMs: parseDuration(String(o.poll), '--poll'),
  };
  const ramp = o.ramp ? parseRamp(String(o.ramp)) : [];
  const config = loadConfig();
  installTemporalRuntime(createLogger({ level: 'error', name: 'rollout', destination: process.stderr }));
  const client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  const io: RolloutIo = {
    client,
    say: (line) => console.log(line),
    replayGate: namespaceReplayGate(client, config, o),
  };
  const deploymentName = config.deployment.deploymentName;
  try {
    if (o.rollback) await rollback(io, { deploymentName, ...timing, ...(o.to ? { to: String(o.to) } : {}) });
    else
      await rollout(io, {
        deploymentName,
        to: String(o.to),
        ramp,
        rampHoldMs: parseDuration(String(o.rampHold), '--ramp-hold'),
        maxFailureRate: Number(o.maxFailureRate) / 100,
        waitDrained: !!o.waitDrained,
        drainTimeoutMs: parseDuration(String(o.drainTimeout), '--drain-timeout'),
        ...timing,
      });
    return 0;
  } catch (err) {
    if (!(err instanceof RolloutStopped)) throw err;
    console.log(`STOPPED: ${err.message}`);
    return 1;
  } finally {
    await client.connection.close();
  }
}

runCommand(main);
