// POS remote request end to end against the sandbox, on its clock: success with the full
// record, a terminal decline, expiry after the 5-minute lifetime (clock advanced, not waited),
// an early 404 that is not expiry, a lost E1 answer found in A6, cancel with an approval after
// it, and a worker SIGKILLed mid-poll whose successor resumes from the heartbeat.
// Where the sandbox clock is advanced past the lifetime, the flow's requestLifetime is shortened
// the same way (the flow counts the lifetime on workflow time, which the test cannot advance).
// The simulated terminal completes only when the test advances the sandbox clock
// (posRemoteCompleteAfterMs 60 s), so every test decides when the payer pays.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { WorkerGroup } from '../../src/workers/worker-group';
import { createLogger } from '../../src/logging/logger';
import { createPaymentsWorker } from '../../src/workers/worker';
import { posRemoteStateQuery } from '../../src/shared/pos-remote';
import { cancelPosRemoteRequest, startPosRemoteRequest } from '../../src/starters/pos-remote';
import { LogCapture, testConfig, useServices, workflowBundle } from '../support/stack';
import { shortRef } from './sandbox';
import { eventually } from '../support/polling';

const COMPLETE_AFTER_MS = 60_000;
const capture = new LogCapture();
const logger = createLogger({ destination: capture, level: 'info' });
const config = testConfig();
const env = useServices(config, logger, { sandbox: { posRemoteCompleteAfterMs: COMPLETE_AFTER_MS } });

const fast = { pollIntervalMs: 200, heartbeatTimeout: '3s' } as const;
/** For tests that advance the sandbox clock past the lifetime: the flow's lifetime ends in 2 s of real time. */
const fastLifetime = { ...fast, requestLifetime: '2s', searchInterval: '200ms' } as const;

const until = async <T>(fn: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> =>
  (await eventually(fn, { timeoutMs: ms, intervalMs: 50 })) as T;

async function e2Count(requestRef: string): Promise<number> {
  return (await env.admin.requests()).filter(
    (e) => e.method === 'GET' && e.path === `/softpos/pos/remote-request/${requestRef}`,
  ).length;
}

/** Starts a remote request through the starters; on terminal 2SBX0001 unless `input` names another. */
const startRemote = (
  input: Omit<Parameters<typeof startPosRemoteRequest>[1], 'terminal_id'> & { terminal_id?: string },
) => startPosRemoteRequest(env.services.starters, { terminal_id: '2SBX0001', ...input });
/** The flow's state once it is pending (and, `withRequestRef`, once it has its request reference). */
const pending = (h: Awaited<ReturnType<typeof startPosRemoteRequest>>, withRequestRef = false) =>
  until(async () => {
    const s = await h.query(posRemoteStateQuery);
    return s.status === 'pending' && (!withRequestRef || s.requestRef) ? s : undefined;
  });

describe('POS remote request against the sandbox', () => {
  it('pending until the terminal completes, then success with the full record and one ledger entry', async () => {
    const reference = shortRef('rs');
    const h = await startRemote({ reference, amount: 150000, options: fast });
    const { requestRef } = await pending(h, true);
    await until(async () => (await e2Count(requestRef!)) >= 3);
    await env.admin.advanceClock(COMPLETE_AFTER_MS); // the payer taps the card
    const result = await h.result();
    expect(result).toMatchObject({ status: 'success', requestRef, amount: 150000, pollAttempts: 1 });
    expect(result.record).toMatchObject({
      status: 'success',
      merchant_request_ref: requestRef,
      terminal_id: '2SBX0001',
      amount: 150000,
      response_code: '00',
      currency: 'NGN',
    });
    for (const k of ['id', 'rrn', 'stan', 'aid', 'transaction_reference', 'payment_info', 'created_at'])
      expect(result.record).toHaveProperty(k);
    expect(await env.admin.ledger({ reference: requestRef, kind: 'pos_remote' })).toHaveLength(1);
    // One E1; all the polling in one activity: the history stays small however long it polled.
    expect(
      (await env.admin.requests()).filter((e) => e.method === 'POST' && e.path === '/softpos/pos/remote-request')
        .length,
    ).toBeGreaterThanOrEqual(1);
    const events = (await h.fetchHistory()).events!;
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes)).toHaveLength(4); // lock, baseline, E1, polling
    expect(events.length).toBeLessThan(60);
    expect(result.polls).toBeGreaterThanOrEqual(3);
  });

  it('the terminal declines (amount 5100): failed with the record, no ledger entry', async () => {
    const h = await startRemote({ reference: shortRef('rd'), amount: 5100, options: fast });
    await until(async () => (await h.query(posRemoteStateQuery)).status === 'pending');
    await env.admin.advanceClock(COMPLETE_AFTER_MS);
    const result = await h.result();
    expect(result).toMatchObject({ status: 'failed', record: { status: 'failed', response_code: '51' } });
    expect(await env.admin.ledger({ reference: result.requestRef!, kind: 'pos_remote' })).toHaveLength(0);
  });

  it('expires: 404 after the 5-minute lifetime on the sandbox clock, in seconds of real time', async () => {
    const started = Date.now();
    const h = await startRemote({ reference: shortRef('rx'), amount: 9900, options: fastLifetime });
    const { requestRef } = await pending(h);
    await until(async () => (await e2Count(requestRef!)) >= 2);
    await env.admin.advanceClock(5 * 60 * 1000);
    const result = await h.result();
    expect(result).toMatchObject({ status: 'expired', requestRef });
    expect(result.record).toBeUndefined();
    expect(result.message).toMatch(/lifetime ended without completion.*transaction record: abandoned/);
    expect(Date.now() - started).toBeLessThan(20_000);
    const last = (await env.admin.requests())
      .filter((e) => e.path === `/softpos/pos/remote-request/${requestRef}`)
      .at(-1);
    expect(last?.status).toBe(404);
  });

  it('a 404 before the lifetime ended (by the flow’s clock) is not expiry: the flow stays pending and keeps polling until it ended', async () => {
    const h = await startRemote({
      reference: shortRef('r4'),
      amount: 9900,
      options: { ...fast, requestLifetime: '6s' },
    });
    const { requestRef } = await pending(h);
    await env.admin.advanceClock(5 * 60 * 1000); // the sandbox forgets the request; for the flow, seconds have passed
    const notFound = async () =>
      (await env.admin.requests()).filter(
        (e) => e.path === `/softpos/pos/remote-request/${requestRef}` && e.status === 404,
      ).length;
    await until(async () => (await notFound()) >= 3);
    expect(await h.query(posRemoteStateQuery)).toMatchObject({ status: 'pending' });
    // Once the flow's 6 s lifetime has passed, the same 404 is expiry (and A6 says abandoned).
    const result = await h.result();
    expect(result).toMatchObject({ status: 'expired', requestRef });
    expect(await notFound()).toBeGreaterThan(5);
  });

  it('a lost E1 answer (drop-after-processing) is found in A6: one E1, the real outcome (success), one ledger entry', async () => {
    await env.admin.fault({
      method: 'POST',
      path: '/softpos/pos/remote-request',
      kind: 'drop-after-processing',
      count: 1,
    });
    const h = await startRemote({
      reference: shortRef('rl'),
      amount: 270000,
      options: { ...fast, searchInterval: '200ms' },
    });
    const { requestRef } = await pending(h, true);
    expect(await h.query(posRemoteStateQuery)).toMatchObject({ recovered: true });
    await env.admin.advanceClock(COMPLETE_AFTER_MS); // the payer taps the card
    const result = await h.result();
    expect(result).toMatchObject({
      status: 'success',
      requestRef,
      recovered: true,
      createAttempts: 1,
      record: { status: 'success', amount: 270000, terminal_id: '2SBX0001' },
    });
    expect(await env.admin.ledger({ reference: requestRef, kind: 'pos_remote' })).toHaveLength(1);
    const e1 = (await env.admin.requests()).filter(
      (e) => e.method === 'POST' && e.path === '/softpos/pos/remote-request',
    );
    expect(e1.at(-1)?.status).toBe('dropped'); // the last E1 is the dropped one: it was never re-sent
  });

  it('a cancel stops the active polling, watches until the lifetime ends, and ends cancelled; no E2 after that', async () => {
    const reference = shortRef('rc');
    const h = await startRemote({ reference, amount: 9900, options: fastLifetime });
    const { requestRef } = await pending(h);
    await until(async () => (await e2Count(requestRef!)) >= 2);
    await cancelPosRemoteRequest(env.services.starters, reference, 'customer walked away');
    await until(async () => (await h.query(posRemoteStateQuery)).status === 'cancelling');
    await env.admin.advanceClock(5 * 60 * 1000);
    const result = await h.result();
    expect(result).toMatchObject({ status: 'cancelled', cancelRequested: true });
    const n = await e2Count(requestRef!);
    await new Promise((r) => setTimeout(r, 1000)); // five poll intervals
    expect(await e2Count(requestRef!)).toBe(n);
  });

  it('the payer approves after the cancel: success_after_cancel with the record and one ledger entry', async () => {
    const reference = shortRef('ra');
    const h = await startRemote({ reference, amount: 280000, options: fast });
    const { requestRef } = await pending(h);
    await cancelPosRemoteRequest(env.services.starters, reference, 'customer walked away');
    await until(async () => (await h.query(posRemoteStateQuery)).status === 'cancelling');
    // Let the one look after the cancel and the watching poll run first, so the approval lands while watched.
    const looked = await e2Count(requestRef!);
    await until(async () => (await e2Count(requestRef!)) >= looked + 2);
    await env.admin.advanceClock(COMPLETE_AFTER_MS); // …and then taps the card anyway
    const result = await h.result();
    expect(result).toMatchObject({
      status: 'success_after_cancel',
      requestRef,
      record: { status: 'success', amount: 280000 },
    });
    expect(await env.admin.ledger({ reference: requestRef, kind: 'pos_remote' })).toHaveLength(1);
  });

  it('rejects bad input in the starter, naming the field and the rule', async () => {
    await expect(
      startPosRemoteRequest(env.services.starters, { reference: shortRef('rb'), terminal_id: '2SBX0001', amount: 0 }),
    ).rejects.toThrow(/amount must be greater than 0/);
    await expect(
      startPosRemoteRequest(env.services.starters, {
        reference: shortRef('rb'),
        terminal_id: '2SBX0001',
        amount: 10.5,
      }),
    ).rejects.toThrow(/amount must be an integer/);
  });
});

describe('worker killed mid-poll', () => {
  const fixture = join(__dirname, 'fixtures', 'activity-worker.ts');
  let workflowWorker: WorkerGroup;
  let workflowRun: Promise<void>;
  let conn: NativeConnection;
  const children: ChildProcess[] = [];
  // Its own task queue: the in-process worker runs only workflows (the main queue, no activities); the
  // activities of all three queues run in child processes.
  const queue = `${config.temporal.taskQueue}-kill`;

  async function activityWorker(): Promise<{ child: ChildProcess; out: () => string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: config.temporal.address,
        TEMPORAL_TASK_QUEUE: queue,
        PAYMENTS_BASE_URL: env.services.sandboxUrl!,
        CLAIM_CHECK_DATABASE_URL: config.claimCheck.databaseUrl,
        PAYMENTS_TIMEOUT_MS: '5000',
        SANDBOX_ENABLED: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await until(
      async () =>
        out.includes('ACTIVITY_WORKER_READY') ||
        (child.exitCode !== null && Promise.reject(new Error(`activity worker exited: ${out}`))),
      60_000,
    );
    return { child, out: () => out };
  }

  beforeAll(async () => {
    conn = await NativeConnection.connect({ address: config.temporal.address });
    workflowWorker = await createPaymentsWorker({
      ...config.temporal,
      taskQueue: queue,
      encryption: config.encryption,
      connection: conn,
      activities: {},
      workflowBundle: await workflowBundle(),
      queues: ['workflows'],
    });
    workflowRun = workflowWorker.run();
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    workflowWorker.shutdown();
    await workflowRun;
    await conn.close();
  });

  it('SIGKILL during polling; the payer pays meanwhile; a new worker resumes from the heartbeat and completes', async () => {
    const first = await activityWorker();
    const reference = shortRef('rk');
    const h = await startPosRemoteRequest(
      { ...env.services.starters, taskQueue: queue },
      { reference, terminal_id: '2SBX0002', amount: 250000, options: fast },
    );
    const { requestRef } = await pending(h);
    // Heartbeats are throttled to 0.8 × heartbeatTimeout (2.4 s) after the first (sent at 0 polls):
    // once 6 polls are made, wait for the server to record a heartbeat sent after them, so the one
    // the next worker resumes from carries a real count (under load a fixed number of polls was not
    // always enough: the Node 24 pass of a fresh-clone run resumed from the first heartbeat's 0).
    await until(async () => (await e2Count(requestRef!)) >= 6, 30_000);
    const afterSixPolls = Date.now();
    await until(async () => {
      const pending = (await h.describe()).raw.pendingActivities ?? [];
      const beat = pending[0]?.lastHeartbeatTime;
      return beat != null && Number(beat.seconds) * 1000 + (beat.nanos ?? 0) / 1e6 > afterSixPolls;
    }, 30_000);
    first.child.kill('SIGKILL'); // no graceful shutdown, no cancellation: the process is gone
    await until(async () => first.child.exitCode !== null || first.child.signalCode !== null);
    const atKill = await e2Count(requestRef!);
    await env.admin.advanceClock(COMPLETE_AFTER_MS); // the payer pays while no worker is alive
    await new Promise((r) => setTimeout(r, 500));
    expect(await e2Count(requestRef!)).toBe(atKill); // nobody is polling

    const second = await activityWorker();
    const result = await h.result();
    expect(result).toMatchObject({ status: 'success', requestRef, record: { status: 'success', amount: 250000 } });
    expect(result.pollAttempts).toBeGreaterThanOrEqual(2); // the activity was retried after the heartbeat timeout
    expect(result.polls).toBeGreaterThan(5); // the count carried over from the dead worker's last heartbeat
    expect(result.polls).toBeLessThanOrEqual(await e2Count(requestRef!));
    expect(second.out()).toContain('POS remote polling resumed from heartbeat');
    expect(await env.admin.ledger({ reference: requestRef, kind: 'pos_remote' })).toHaveLength(1);
    // The request was created once.
    const events = (await h.fetchHistory()).events!;
    const scheduled = events
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
    expect(scheduled).toEqual([
      'posTerminalLockAcquire',
      'posRemoteFindRequest',
      'posRemoteCreateRequest',
      'posRemotePollRequest',
    ]);
    second.child.kill('SIGTERM');
  }, 120_000);

  it('paid AND deleted while no worker was alive: the resumed poll gets 404, and the transaction record (A6) shows the approval: success, not expired', async () => {
    const first = await activityWorker();
    const h = await startPosRemoteRequest(
      { ...env.services.starters, taskQueue: queue },
      { reference: shortRef('rk2'), terminal_id: '2SBX0002', amount: 260000, options: fastLifetime },
    );
    const { requestRef } = await pending(h);
    await until(async () => (await e2Count(requestRef!)) >= 3, 30_000);
    first.child.kill('SIGKILL');
    await until(async () => first.child.exitCode !== null || first.child.signalCode !== null);
    await env.admin.advanceClock(COMPLETE_AFTER_MS); // the payer pays…
    await env.admin.advanceClock(5 * 60 * 1000); // …and the record is deleted with the request's lifetime
    expect(await env.admin.ledger({ reference: requestRef, kind: 'pos_remote' })).toHaveLength(1);
    const second = await activityWorker();
    const result = await h.result();
    expect(result).toMatchObject({
      status: 'success',
      requestRef,
      record: { status: 'success', transaction_ref: requestRef },
    });
    expect(result.message).toMatch(/transaction record shows it approved/);
    second.child.kill('SIGTERM');
  }, 120_000);
});
