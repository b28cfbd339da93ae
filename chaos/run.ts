// `npm run chaos`: issue #12's crash suite. Starts its own stack (Temporal dev server on a SQLite
// file, embedded PostgreSQL, sandbox, webhook receiver, codec server, worker — each its own
// process), runs value flows of every money-moving kind through the starters while injecting
// sandbox faults, SIGKILLing the worker and restarting the Temporal server once, then compares the
// sandbox ledger with the flows' results and replays every workflow history the run created against
// the workflow code it ran. Exit code 1 when anything was doubled, lost or stuck, or a history did not replay.
//
//   npm run chaos -- --quick                      # ~80 flows, 5 kills, one server restart
//   npm run chaos -- --flows 1000 --kills 30      # the full run (the defaults)
//   npm run chaos -- --kinds card,vend --flows 40 --seed 7 --json out.json
//   npm run test:cluster -- --json                # on the local multi-service cluster: 600 flows, 3 workers,
//                                                 # kill -9 of history, matching and frontend twice each (docs/cluster.md)
import { cpus } from 'node:os';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { openPaymentsClient } from '../src/starters/connect';
import { loadConfig } from '../src/config/config';
import { PaymentStatus } from '../src/shared/search-attributes';
import { closeStarters, connectStarters, openPosTerminalSession, type PosTerminalSession } from '../src/starters';
import { SandboxAdmin } from './admin';
import { FaultInjector, Killer } from './chaos';
import { check } from './check';
import { DRIVERS, type FlowRecord, type KindDriver } from './kinds';
import { printTable, failureReasons, replayLines, resultLine } from './report';
import { replayRun } from './replay';
import { ProgressProbe, StuckError } from './stuck';
import { bundleCurrentWorkflows } from '../src/workers/replay';
import { installTemporalRuntime } from '../src/logging/temporal-logger';
import { createLogger } from '../src/logging/logger';
import { startChaosStack } from './stack';
import { ChaosMerchantEndpoint } from './merchant-endpoint';
import { newNotifySecret } from '../src/notify';
import { beforeDeadline, pool, retry, Rng } from './util';
import { BEYOND_LANE_MS, flowDeadline } from './deadlines';
import { ServiceKiller } from './service-kills';

const program = new Command('chaos')
  .description(
    'Crash suite: value flows under faults, worker SIGKILLs and a Temporal restart, checked against the sandbox ledger',
  )
  .option('--flows <n>', 'number of flows', (v) => Number.parseInt(v, 10))
  .option('--concurrency <n>', 'flows in flight', (v) => Number.parseInt(v, 10))
  .option('--kills <n>', 'worker SIGKILLs', (v) => Number.parseInt(v, 10))
  .option('--quick', 'short run for CI: 80 flows, 5 kills, the server restart')
  .option('--kinds <list>', `kinds to run (comma list of ${DRIVERS.map((d) => d.kind).join(', ')})`)
  .option('--seed <n>', 'random seed (printed; repeat a run with it)', (v) => Number.parseInt(v, 10))
  .addOption(new Option('--json [file]', 'write the JSON report to file, or to stdout without a file'))
  .option('--no-server-restart', 'skip the Temporal server restart')
  .option('--fault-interval-ms <n>', 'mean time between two injected faults', (v) => Number.parseInt(v, 10))
  .option(
    '--flow-timeout-ms <n>',
    "a flow's lane time: past it the flow leaves its lane and is waited for in the background up to its kind's own deadline (chaos/deadlines.ts)",
    (v) => Number.parseInt(v, 10),
  )
  .option('--keep', 'keep the stack directory (logs, SQLite, PostgreSQL) after the run')
  .option('--cluster', 'run on the local multi-service Temporal cluster and kill its services (docs/cluster.md)')
  .option('--workers <n>', 'worker processes (default 1; 3 with --cluster)', (v) => Number.parseInt(v, 10))
  .option('--service-kills <n>', 'with --cluster: kill -9 rounds of history, matching and frontend (default 2)', (v) =>
    Number.parseInt(v, 10),
  );

interface Opts {
  flows?: number;
  concurrency?: number;
  kills?: number;
  quick?: boolean;
  kinds?: string;
  seed?: number;
  json?: string | boolean;
  serverRestart: boolean;
  faultIntervalMs?: number;
  flowTimeoutMs?: number;
  keep?: boolean;
  cluster?: boolean;
  workers?: number;
  serviceKills?: number;
}

/** The kinds whose flows emit merchant events (docs/events.md), and the references they emit under. */
const EVENT_REFERENCES: Record<string, (f: FlowRecord) => string[]> = {
  card: (f) => [f.ref],
  bank: (f) => [f.ref],
  vend: (f) => [f.ref],
  // Each cycle's charge emits under its own reference (<planRef>-C<n>).
  recurring: (f) =>
    f.expectations.map((e) => e.reference).filter((r): r is string => !!r && r.startsWith(`${f.ref}-C`)),
  // The mandate's own outcome under its reference, and each settled debit (its `part`).
  mandate: (f) => [
    f.ref,
    ...f.expectations
      .filter((e) => e.status === 'debit:success' || e.status === 'debit:failed')
      .map((e) => e.reference)
      .filter((r): r is string => !!r),
  ],
  'pos-remote': (f) => [f.ref],
  'pos-terminal': (f) => [f.ref],
  // The credit's hand-over is its event (virtual_account.credit.received) under the transaction reference.
  'va-credit': (f) => (f.closed ? f.expectations.map((e) => e.reference).filter((r): r is string => !!r) : []),
};

/**
 * After the chaos: the endpoint calms down, then every flow that reached an outcome must have its
 * event delivered at least once (a final event for a closed flow, payment/vend.needs_attention for a
 * parked one), within the deliveries' own retries (waited for up to 8 minutes).
 */
async function tallyEvents(merchant: ChaosMerchantEndpoint, flows: FlowRecord[], say: (l: string) => void) {
  merchant.calm();
  const expected = flows
    .filter((f) => EVENT_REFERENCES[f.kind] && f.workflowId && !f.error)
    .flatMap((f) => EVENT_REFERENCES[f.kind](f).map((reference) => ({ f, reference })));
  const missing = () =>
    expected
      .filter(({ f, reference }) => {
        // A parked notification or a reconciliation finding about the reference is no flow's outcome.
        const got = merchant
          .eventsFor((r) => r === reference)
          .filter((e) => e.type !== 'webhook.unmatched' && e.type !== 'reconciliation.mismatch');
        return f.closed ? !got.some((e) => !e.type.endsWith('needs_attention')) : got.length === 0;
      })
      .map(({ f, reference }) => `${f.kind} ${reference} (${f.status ?? '?'})`);
  const until = Date.now() + 8 * 60_000;
  let left = missing();
  while (left.length > 0 && Date.now() < until) {
    say(`events: waiting for ${left.length} of ${expected.length} outcomes to be delivered`);
    await new Promise((r) => setTimeout(r, 5_000));
    left = missing();
  }
  const tally = merchant.tally();
  return {
    expectedOutcomes: expected.length,
    deliveredAtLeastOnce: expected.length - left.length,
    lost: left.length,
    sameIdOnEveryRedelivery: tally.idMismatches === 0,
    missing: left,
    tally,
  };
}

async function main(): Promise<number> {
  const o = program.parse(process.argv).opts<Opts>();
  const quick = o.quick === true;
  const onCluster = o.cluster === true;
  const flowsN = o.flows ?? (quick ? 80 : onCluster ? 600 : 1000);
  const workerProcesses = o.workers ?? (onCluster ? 3 : 1);
  // On the cluster its own service kills replace the single-process server restart.
  const serverRestart = o.serverRestart && !onCluster;
  const kills = o.kills ?? (quick ? 5 : 30);
  const concurrency = o.concurrency ?? (quick ? 10 : 16);
  const seed = o.seed ?? Math.floor(Math.random() * 2 ** 31);
  const flowTimeoutMs = o.flowTimeoutMs ?? (quick ? 150_000 : 300_000);
  const faultIntervalMs = o.faultIntervalMs ?? (quick ? 700 : 1_000);
  const drivers: KindDriver[] = o.kinds
    ? o.kinds
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean)
        .map((k) => {
          const d = DRIVERS.find((x) => x.kind === k);
          if (!d) throw new Error(`unknown kind ${k}: one of ${DRIVERS.map((x) => x.kind).join(', ')}`);
          return d;
        })
    : [...DRIVERS];
  const jsonToStdout = o.json === true;
  const say = (line: string) =>
    (jsonToStdout ? process.stderr : process.stdout).write(
      `[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`,
    );
  const rng = new Rng(seed);
  const runId = (seed % 1_000_000).toString(36).padStart(4, '0');
  say(
    `seed ${seed}, ${flowsN} flows (${drivers.map((d) => d.kind).join(', ')}), concurrency ${concurrency}, ${kills} kills of ${workerProcesses} worker process(es), ${onCluster ? `cluster service kills ${o.serviceKills ?? 2} rounds` : `server restart ${serverRestart ? 'yes' : 'no'}`}`,
  );

  const started = Date.now();
  // The replay's workers log through this (errors only, on stderr: stdout may carry the JSON report).
  installTemporalRuntime(createLogger({ level: 'error', name: 'chaos-replay', destination: process.stderr }));
  // The workflow code the run's workers bundle as they start, bundled now for the replay at the end.
  const bundling = bundleCurrentWorkflows();
  bundling.catch(() => undefined);
  // The merchant's endpoint for the flows' events, misbehaving while the chaos runs (docs/events.md).
  const notifySecret = newNotifySecret();
  const merchant = new ChaosMerchantEndpoint(notifySecret, new Rng(seed + 1));
  const merchantUrl = await merchant.start();
  const stack = await startChaosStack({
    log: say,
    env: { NOTIFY_URL: merchantUrl, NOTIFY_SECRET: notifySecret },
    cluster: onCluster,
    workers: workerProcesses,
  });
  let exitCode = 2;
  const config = loadConfig(stack.env);
  const starters = await connectStarters(config);
  const api = openPaymentsClient(config, stack.sandboxUrl);
  const admin = new SandboxAdmin(stack.sandboxUrl, stack.adminToken);
  try {
    const posSessions: PosTerminalSession[] = [];
    if (drivers.some((d) => d.kind === 'pos-terminal')) {
      for (const serial_no of ['SN-0001', 'SN-0002'])
        posSessions.push(
          await retry('F1/F2', Date.now() + 30_000, () => openPosTerminalSession({ api }, { serial_no })),
        );
    }

    const order = Array.from({ length: flowsN }, (_, i) => drivers[i % drivers.length]);
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [order[i], order[j]] = [order[j], order[i]];
    }
    let finished = 0;
    const finishTimes: number[] = [];
    // --quick: no reset / drop-before-processing / 5xx on E1 (the sandbox answers a 5xx fault before
    // processing) — a POS remote E1 that never arrived is searched for the request's whole lifetime +
    // grace (5 min 20 s) while it holds the terminal, longer than the quick run's lane time. The full
    // run keeps them (its POS remote flows are waited for up to their deadline, chaos/deadlines.ts).
    const injector = new FaultInjector(admin, rng, {
      intervalMs: faultIntervalMs,
      excludeKinds: (path) =>
        quick && path === '^/softpos/pos/remote-request$' ? ['reset', 'drop-before-processing', 'error5xx'] : [],
      // The tail (fewer flows left than lanes) drains without new faults.
      active: () => flowsN - finished > concurrency,
    });
    const killer = new Killer(stack, rng, {
      totalFlows: flowsN,
      kills,
      serverRestart,
      finished: () => finished,
      log: say,
    });
    const serviceKiller = stack.cluster
      ? new ServiceKiller(stack.cluster, new Rng(seed + 2), {
          totalFlows: flowsN,
          perService: o.serviceKills ?? 2,
          finished: () => finished,
          log: say,
        })
      : undefined;
    injector.start();
    killer.start();
    serviceKiller?.start();
    const progress = setInterval(
      () =>
        say(
          `progress: ${finished}/${flowsN} flows finished, ${killer.kills} kills, ${killer.serverRestarts} server restarts`,
        ),
      15_000,
    );

    // A flow gets its lane for `flowTimeoutMs`; one still running then leaves the lane (so a few
    // slow flows cannot starve the run) and is waited for after the chaos, up to its own deadline.
    const stragglers: Promise<void>[] = [];
    const flows = await pool(order, concurrency, async (driver, i) => {
      const flow: FlowRecord = {
        kind: driver.kind,
        ref: `X${runId}${driver.kind.replace(/[^a-z]/g, '').slice(0, 4)}${i}`,
        variant: '',
        closed: false,
        expectations: [],
        resolvedByRequery: false,
      };
      const t = Date.now();
      // Ends the wait on a flow whose workflow task keeps failing (chaos/stuck.ts).
      const progress = new ProgressProbe(() =>
        flow.workflowId ? starters.client.workflow.getHandle(flow.workflowId) : undefined,
      );
      const ctx = { starters, api, admin, rng: new Rng(seed + i + 1), runId, posSessions, progress };
      const done = driver
        .run({ ...ctx, deadline: flowDeadline(driver.kind, t, flowTimeoutMs) }, flow, i)
        .catch((err: unknown) => {
          if (err instanceof StuckError) flow.stuck = err.reason;
          flow.error = (err as Error).message;
        })
        .finally(() => {
          flow.ms = Date.now() - t;
          finishTimes.push(Date.now());
        });
      const inLane = await beforeDeadline('lane', t + flowTimeoutMs, done).then(
        () => true,
        () => false,
      );
      if (!inLane) stragglers.push(done);
      finished++;
      return flow;
    });
    clearInterval(progress);
    say(`all ${flowsN} flows finished driving; stopping the chaos`);
    await killer.stop();
    await serviceKiller?.stop();
    await injector.stop();
    const running = flows.filter((f) => f.ms === undefined);
    if (running.length > 0) {
      say(
        `waiting for ${running.length} flows past their lane time (${running.map((f) => `${f.kind} ${f.ref}`).join(', ')}), each up to its kind's deadline`,
      );
      const waiting = setInterval(() => {
        const left = flows.filter((f) => f.ms === undefined);
        say(`still waiting for ${left.length} flows: ${left.map((f) => `${f.kind} ${f.ref}`).join(', ')}`);
      }, 30_000);
      await Promise.all(stragglers);
      clearInterval(waiting);
    }

    // Flows not closed: read their PaymentStatus (parked as unknown, or never closed).
    for (const f of flows.filter((x) => !x.closed && x.workflowId)) {
      try {
        const desc = await starters.client.workflow.getHandle(f.workflowId!).describe();
        const st = desc.typedSearchAttributes.get(PaymentStatus);
        f.status = `${desc.status.name.toLowerCase()}:${st ?? '?'}`;
        if (st === 'outcome_unknown' || st === 'unknown') {
          const exp = f.expectations.find((e) => e.outcome !== 'unknown');
          if (exp) exp.outcome = 'unknown';
          else if (f.expectations.length === 0)
            f.expectations.push({
              ledgerKind: DRIVERS.find((d) => d.kind === f.kind)!.ledgerKinds[0],
              outcome: 'unknown',
              status: st,
            });
        }
      } catch (err) {
        f.status = `describe failed: ${(err as Error).message}`;
      }
    }

    const events = await tallyEvents(merchant, flows, say);

    const ledger = await admin.ledger();
    const result = check(flows, ledger, drivers);
    const durationMs = Date.now() - started;
    const resolvedByRequery = Object.values(result.byKind).reduce((n, r) => n + r.resolvedByRequery, 0);
    const serviceKillEvents = serviceKiller?.withStalls(finishTimes);
    say('replaying every workflow history the run created against the workflow code it ran');
    // Beside the JSON report when it goes to a file, else in the stack directory (then kept).
    const replayDir =
      typeof o.json === 'string'
        ? `${o.json.replace(/\.json$/, '')}-nondeterministic`
        : join(stack.dir, 'nondeterministic');
    const replay = await replayRun(starters.client, stack.taskQueue, {
      encryption: config.encryption,
      workflowBundle: await bundling,
      saveDir: replayDir,
      log: say,
    });
    if (replay.nondeterministic > 0 && typeof o.json !== 'string') o.keep = true;
    const report = {
      flows: flowsN,
      kinds: drivers.map((d) => d.kind),
      seed,
      concurrency,
      deadlines: { laneMs: flowTimeoutMs, beyondLaneMs: BEYOND_LANE_MS },
      pastLaneTime: stragglers.length,
      kills: killer.kills,
      serverRestarts: killer.serverRestarts,
      workerProcesses,
      ...(serviceKiller
        ? {
            temporal: 'cluster: frontend, 2 history, matching, worker (PostgreSQL, mTLS)',
            serviceKills: serviceKiller.counts(),
            serviceKillEvents,
          }
        : { temporal: 'dev server (SQLite)' }),
      workerKillEvents: killer.events,
      faults: {
        request: injector.counts.request,
        webhook: injector.counts.webhook,
        heldWebhooksReleased: injector.counts.released,
      },
      doubled: result.doubled,
      lost: result.lost,
      unknown: result.unknown,
      unknownResolvedByRequery: resolvedByRequery,
      stuck: result.stuck,
      stuckFlows: flows
        .filter((f) => f.stuck)
        .map((f) => ({ kind: f.kind, ref: f.ref, workflowId: f.workflowId, reason: f.stuck })),
      workflows: replay.workflows,
      workflowsByType: replay.byType,
      replayed: replay.replayed,
      nondeterministic: replay.nondeterministic,
      nondeterministicHistories: replay.histories,
      notReplayed: replay.notDownloaded,
      byKind: result.byKind,
      findings: result.findings,
      ledgerEntries: ledger.length,
      events,
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
      },
      durationMs,
      slowest: [...flows]
        .sort((a, b) => (b.ms ?? 0) - (a.ms ?? 0))
        .slice(0, 10)
        .map((f) => ({ kind: f.kind, ref: f.ref, variant: f.variant, status: f.status, ms: f.ms })),
      notClosed: flows
        .filter((f) => !f.closed)
        .map((f) => ({ kind: f.kind, ref: f.ref, workflowId: f.workflowId, status: f.status, error: f.error })),
      stackDir: o.keep ? stack.dir : undefined,
    };
    printTable(report, (l) => say(l));
    say(
      `events: ${events.deliveredAtLeastOnce}/${events.expectedOutcomes} outcomes delivered, ${events.lost} lost, ${events.tally.events} events in ${events.tally.deliveries} deliveries (${events.tally.redelivered} ids redelivered), same id on every redelivery: ${events.sameIdOnEveryRedelivery ? 'yes' : 'NO'}; endpoint faults ${JSON.stringify(events.tally.faults)}`,
    );
    for (const k of serviceKillEvents ?? [])
      say(
        `kill -9 ${k.process} at ${k.at.slice(11, 19)}: down ${k.downMs} ms, first flow finished ${k.firstFinishAfterKillMs ?? '-'} ms after the kill, longest gap ${k.longestGapMs} ms`,
      );
    for (const f of result.findings.slice(0, 50))
      say(`${f.problem.toUpperCase()} ${f.kind} ${f.ref} ${f.reference ?? ''} ${f.workflowId ?? ''}: ${f.detail}`);
    const notClosed = flows.filter((f) => !f.closed);
    for (const f of notClosed.slice(0, 20)) say(`not closed: ${f.kind} ${f.ref} ${f.status ?? ''} ${f.error ?? ''}`);
    if (typeof o.json === 'string') writeFileSync(o.json, `${JSON.stringify(report, null, 2)}\n`);
    if (jsonToStdout) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    for (const m of events.missing.slice(0, 20)) say(`EVENT LOST ${m}`);
    for (const line of replayLines(replay)) say(line);
    say(resultLine(report));
    exitCode = failureReasons(report).length > 0 ? 1 : 0;
  } finally {
    // Waits abandoned at a flow's deadline keep retrying inside the client; once the connection is
    // closed they throw 'Channel has been shut down' from a timer: expected, not a failure.
    process.on('uncaughtException', (err) => {
      if (!/Channel has been shut down/.test(err.message)) throw err;
    });
    await closeStarters(starters).catch(() => undefined);
    merchant.close();
    await api.close().catch(() => undefined);
    await stack.stop();
    if (!o.keep) {
      const { rmSync } = await import('node:fs');
      rmSync(stack.dir, { recursive: true, force: true });
    } else say(`stack directory kept: ${stack.dir}`);
  }
  return exitCode;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
