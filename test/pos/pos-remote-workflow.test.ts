// The POS remote request workflow with the REAL activities over a scripted API client, on the
// dev server (the polling activity sleeps and heartbeats in real time, so no time skipping):
// the terminal lock serialises flows per terminal (and moves on when a holder is gone); E1 once
// once it may have left, again only when it provably did not; a lost E1 answer is resolved from
// the scripted A6 list; E2 polled in one heartbeating activity; a 404 before the lifetime is not
// expiry; cancel watches until the lifetime ends and reports an approval after it.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { WorkerGroup } from '../../src/workers/worker-group';
import { ConnectionError, NotFoundError, ServerError, BadRequestError, type PaymentsClient } from '../../src/api';
import { createActivities } from '../../src/activities';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { cancelPosRemoteSignal, posRemoteStateQuery, type PosRemoteInput } from '../../src/shared/pos-remote';
import { posTerminalLockWorkflowId, terminalLockStateQuery } from '../../src/shared/pos-terminal-lock';
import { PaymentStatus } from '../../src/shared/search-attributes';
import { resolveOutcomeUpdate } from '../../src/shared/outcome';
import { createTemporalClient } from '../../src/temporal/client';
import { createPaymentsWorker } from '../../src/workers/worker';
import type { posRemoteRequestWorkflow } from '../../src/workflows/pos-remote';
import { eventually } from '../support/polling';
import { LogCapture, testConfig, workflowBundle } from '../support/stack';
import { remoteRequestRow } from './fixtures/scripted-api';
import { unusedClaimCheck } from './helpers';
import { newNotifySecret } from '../../src/notify';
import { useEventReceiver } from '../notify/receiver';

const capture = new LogCapture();
const logger = createLogger({ destination: capture, level: 'info' });
installTemporalRuntime(logger, 'WARN');
// NOTIFY_SECRET: the worker signs the events of a flow whose input names a target (one test does).
const notifySecret = newNotifySecret();
const config = testConfig({ NOTIFY_SECRET: notifySecret });
const receiver = useEventReceiver(notifySecret);

type Answer = 'pending' | 'success' | 'failed' | '404' | '500' | 'reset';
/** The API client's posRemote group, scripted per request_ref. */
class ScriptedRemote {
  creates = 0;
  requeries = new Map<string, number>();
  createFailure: Error | undefined;
  /** Processed by the service (listed in A6), then the answer is lost. */
  dropAfterProcessing = new Set<string>();
  /** E1 calls per terminal, in order, with the time they arrived. */
  createLog: { terminal: string; ref: string; at: number }[] = [];
  answers = new Map<string, (polling: boolean) => Answer>();
  signals: AbortSignal[] = [];
  /** A6 rows (transaction records) the scripted service lists. */
  rows: Record<string, unknown>[] = [];
  /** Every E1 call that reached the service, as sent (before any scripted failure). */
  e1Calls: { terminal_id: string; amount: number; account_type?: string }[] = [];
  /** A6 look-ups by reference (the final look at a request's transaction record), by reference. */
  lookups: string[] = [];
  /**
   * Per terminal: run by E1's activity before it announces (signals that E1 is about to leave): it
   * may wait, or throw as a worker that failed before its sending mark (then E1 provably never left).
   */
  beforeAnnounce = new Map<string, () => void | Promise<void>>();
  api = {
    posRemote: {
      create: async (req: { terminal_id: string; amount: number; account_type?: string }) => {
        this.creates += 1;
        this.e1Calls.push({ ...req });
        if (this.createFailure) throw this.createFailure;
        const n = this.createLog.filter((c) => c.terminal === req.terminal_id).length;
        const ref = n === 0 ? `RR-${req.terminal_id}` : `RR-${req.terminal_id}-${n + 1}`;
        this.createLog.push({ terminal: req.terminal_id, ref, at: Date.now() });
        this.rows.unshift(remoteRequestRow(ref, req.terminal_id, req.amount, 'pending'));
        if (this.dropAfterProcessing.delete(req.terminal_id)) {
          throw new ConnectionError({
            message: 'socket closed after processing',
            operation: 'posRemote.create',
            retrySafe: false,
            outcomeUnknown: true,
            requestSent: true,
          });
        }
        return { data: { request_ref: ref } };
      },
      requery: async (req: { request_ref: string }, opts?: { signal?: AbortSignal }) => {
        if (opts?.signal) this.signals.push(opts.signal);
        this.requeries.set(req.request_ref, (this.requeries.get(req.request_ref) ?? 0) + 1);
        const a = this.answers.get(req.request_ref)?.(opts?.signal !== undefined) ?? 'pending';
        const init = {
          message: a,
          operation: 'posRemote.requery',
          retrySafe: true,
          outcomeUnknown: false,
          requestSent: true,
        };
        if (a === '404')
          throw new NotFoundError({
            ...init,
            status: 404,
            retrySafe: false,
            message: 'Request not found or expired',
            serviceMessage: 'Request not found or expired',
          });
        if (a === '500') throw new ServerError({ ...init, status: 500 });
        if (a === 'reset') throw new ConnectionError({ ...init, code: 'UND_ERR_SOCKET' });
        if (a === 'pending') return { data: { status: 'pending' } };
        return {
          data: {
            status: a,
            id: 7,
            amount: 150000,
            terminal_id: req.request_ref.slice(3),
            response_code: a === 'success' ? '00' : '51',
            rrn: '000111222333',
            transaction_reference: 'TR-1',
          },
        };
      },
    },
    transactions: {
      query: async (req: { reference?: string; page?: number }) => {
        if (req.reference) this.lookups.push(req.reference);
        const rows = this.rows.filter((r) => !req.reference || r.transaction_ref === req.reference);
        return { data: (req.page ?? 1) > 1 ? [] : rows };
      },
    },
  };
}

let client: Client;
let worker: WorkerGroup;
let run: Promise<void>;
let conn: NativeConnection;
const remote = new ScriptedRemote();

/** E1 sent and its answer lost: the request may have been processed (outcome unknown). */
const lostCreateAnswer = () =>
  new ConnectionError({
    message: 'socket closed',
    operation: 'posRemote.create',
    retrySafe: false,
    outcomeUnknown: true,
    requestSent: true,
  });

beforeAll(async () => {
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  conn = await NativeConnection.connect({ address: config.temporal.address });
  const activities = createActivities({
    api: remote.api as unknown as PaymentsClient,
    logger,
    config,
    claimCheck: unusedClaimCheck,
    temporal: client, // starts the delivery of a merchant event
  });
  worker = await createPaymentsWorker({
    ...config.temporal,
    encryption: config.encryption,
    connection: conn,
    activities: {
      ...activities,
      // The real E1 activity, after the terminal's scripted step (none by default).
      posRemoteCreateRequest: async (...args: Parameters<typeof activities.posRemoteCreateRequest>) => {
        await remote.beforeAnnounce.get(args[0].terminal_id)?.();
        return activities.posRemoteCreateRequest(...args);
      },
    },
    workflowBundle: await workflowBundle(),
  });
  run = worker.run();
}, 60_000);
afterAll(async () => {
  worker.shutdown();
  await run;
  await conn.close();
  await client.connection.close();
});

function start(terminal: string, over: Partial<PosRemoteInput> = {}) {
  const reference = `ord-${randomUUID()}`;
  return client.workflow.start<typeof posRemoteRequestWorkflow>('posRemoteRequestWorkflow', {
    workflowId: `pos-remote-${reference}`,
    taskQueue: config.temporal.taskQueue,
    args: [
      {
        reference,
        terminal_id: terminal,
        amount: 150000,
        options: { pollIntervalMs: 50, heartbeatTimeout: '5s' },
        ...over,
      },
    ],
  });
}

const until = async (fn: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> => {
  await eventually(fn, { timeoutMs: ms, intervalMs: 25 });
};

type Handle = Awaited<ReturnType<typeof start>>;
/** The flow is parked at `status` (query and PaymentStatus), still running: its state. */
async function parkedAt(handle: Handle, status: string, ms = 15_000) {
  await until(async () => (await handle.query(posRemoteStateQuery)).status === status, ms);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  expect((await handle.describe()).typedSearchAttributes.get(PaymentStatus)).toBe(status);
  return handle.query(posRemoteStateQuery);
}
/** An operator resolves the parked flow (resolveOutcome, as `cli ops resolve` does): its result. */
async function resolvedAs(handle: Handle, outcome: 'success' | 'failed' | 'expired') {
  await handle.executeUpdate(resolveOutcomeUpdate, {
    args: [{ outcome, reason: 'checked on the terminal (test)', operator: 'ops@example.com' }],
  });
  return handle.result();
}

/** The durations (ms) of the timers the flow started, in order, from its history. */
async function timersOf(handle: Handle): Promise<number[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const t = e.timerStartedEventAttributes?.startToFireTimeout;
    return t ? [Number(t.seconds ?? 0) * 1000 + Math.round((t.nanos ?? 0) / 1e6)] : [];
  });
}
/** The lock's wait (a 15-minute condition timer) aside: the flow's own sleeps. */
const LOCK_WAIT_MS = 15 * 60_000;

/** `p`, or a failure after `ms` (a flow that should have ended does not hold the test until jest's timeout). */
async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A cancel reaches the polling activity with its next heartbeat (every 0.8 × the heartbeat timeout):
 * 2 s instead of the suite's 5 s brings it there in under 2 s rather than 4.
 */
const QUICK_CANCEL = { pollIntervalMs: 50, heartbeatTimeout: '2s' } as const;

/** A lifetime and search grace short enough for a lost E1 answer to be settled within a test. */
const SHORT_LIFETIME = {
  pollIntervalMs: 50,
  heartbeatTimeout: '5s',
  requestLifetime: '600ms',
  searchGrace: '300ms',
  searchInterval: '100ms',
} as const;

describe('POS remote request', () => {
  it('polls pending until success; the result carries the full record; few history events', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    let n = 0;
    remote.answers.set(`RR-${t}`, () => (++n < 12 ? 'pending' : 'success'));
    const handle = await start(t);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'success', requestRef: `RR-${t}`, polls: 12 });
    expect(result.record).toMatchObject({
      status: 'success',
      id: 7,
      amount: 150000,
      response_code: '00',
      rrn: '000111222333',
    });
    // 12 polls inside one activity: the history does not grow with the polls.
    const history = await handle.fetchHistory();
    const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).length;
    expect(scheduled).toBe(4); // lock, baseline, create, poll
    expect(history.events!.length).toBeLessThan(60);
  });

  it('a terminal decline ends failed with the record', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.answers.set(`RR-${t}`, () => 'failed');
    const result = await (await start(t)).result();
    expect(result).toMatchObject({ status: 'failed', record: { response_code: '51' } });
  });

  it('404 after the lifetime ends it as expired; transient 5xx and resets keep polling', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const seq: Answer[] = ['pending', '500', 'reset', 'pending', '404'];
    remote.answers.set(`RR-${t}`, () => seq.shift() ?? '404');
    const result = await (
      await start(t, { options: { pollIntervalMs: 50, heartbeatTimeout: '5s', requestLifetime: '10ms' } })
    ).result();
    expect(result).toMatchObject({ status: 'expired', polls: 3 });
    expect(remote.requeries.get(`RR-${t}`)).toBe(5);
    expect(result.record).toBeUndefined();
  });

  it('a 404 after a long stretch without any E2 answer is expired_unobserved, never plain expired: parked, the terminal lock given back, and resolved by an operator', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const seq: Answer[] = ['pending', ...Array.from({ length: 12 }, () => '500' as const), '404'];
    // When E2 last answered (pending) and when it first answered 404: the stretch without observation.
    const answeredAt: Partial<Record<Answer, number>> = {};
    remote.answers.set(`RR-${t}`, () => {
      const a = seq.shift() ?? '404';
      answeredAt[a] ??= Date.now();
      return a;
    });
    const handle = await start(t, {
      options: { pollIntervalMs: 50, heartbeatTimeout: '5s', unobservedGapMs: 300, requestLifetime: '10ms' },
      notify: { url: receiver.url },
    });
    const parkedState = await parkedAt(handle, 'expired_unobserved');
    expect(parkedState.message).toMatch(/either expired or completed/);
    // The message gives that stretch in whole seconds.
    const seconds = Number(
      /^the request requery \(E2\) answered 404 after (\d+) s without observation/.exec(parkedState.message ?? '')?.[1],
    );
    expect(Math.abs(seconds - (answeredAt['404']! - answeredAt.pending!) / 1000)).toBeLessThanOrEqual(0.6);
    const reference = (await handle.query(posRemoteStateQuery)).reference;
    // The park tells the merchant that a person is needed (a verified event), before any outcome.
    const [parked] = await receiver.delivered(reference);
    expect(parked).toMatchObject({
      type: 'pos.remote.needs_attention',
      data: { reference, status: 'expired_unobserved', amount: 150000, sequence: 1 },
    });
    // A wrong outcome is refused by name; nothing enters history. (The status shows a moment before
    // the flow has given the terminal lock back and listens for a resolution: ask until it listens.)
    const refusal = async () =>
      handle.executeUpdate(resolveOutcomeUpdate, { args: [{ outcome: 'paid', reason: 'x', operator: 'o' }] }).then(
        () => 'accepted',
        (err: { cause?: { message?: string } }) => err.cause?.message ?? String(err),
      );
    const refused = await eventually(refusal, (r) => !/No registered handler/.test(r), {
      timeoutMs: 30_000,
      intervalMs: 50,
      description: 'the resolveOutcome handler registered',
      returnLastOnTimeout: true,
    });
    expect(refused).toBe('outcome must be one of success, failed, expired');
    const result = await resolvedAs(handle, 'expired');
    expect(result).toMatchObject({
      status: 'expired',
      resolution: { outcome: 'expired', operator: 'ops@example.com' },
      message: expect.stringContaining('parked as expired_unobserved'),
    });
    // The operator's resolution is the final outcome: a second, newer event.
    const events = await receiver.delivered(reference, 2);
    expect(events[1]).toMatchObject({ type: 'pos.remote.failed', data: { status: 'expired', sequence: 2 } });
    expect(receiver.refused).toEqual([]);
  });

  it('a parked request whose transaction record later shows it approved ends success from the record (looked up on a backoff)', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const seq: Answer[] = ['pending', ...Array.from({ length: 12 }, () => '500' as const), '404'];
    remote.answers.set(`RR-${t}`, () => seq.shift() ?? '404');
    const handle = await start(t, {
      options: {
        pollIntervalMs: 50,
        heartbeatTimeout: '5s',
        unobservedGapMs: 300,
        requestLifetime: '10ms',
        requeryBackoff: '100ms',
        requeryMaxBackoff: '200ms',
      },
    });
    await parkedAt(handle, 'expired_unobserved');
    const row = remote.rows.find((r) => r.transaction_ref === `RR-${t}`)!;
    row.transaction_status = 'success';
    expect(await handle.result()).toMatchObject({
      status: 'success',
      message: expect.stringContaining("the service's transaction record shows it success"),
      record: { status: 'success', transaction_ref: `RR-${t}` },
    });
  });

  it('a 404 before the lifetime ended is not expiry: polling goes on and the approval is seen', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const seq: Answer[] = ['pending', '404', '404', 'pending', 'success'];
    remote.answers.set(`RR-${t}`, () => seq.shift() ?? 'success');
    const result = await (await start(t)).result(); // default lifetime: 5 minutes
    expect(result).toMatchObject({ status: 'success', record: { status: 'success' } });
    expect(remote.requeries.get(`RR-${t}`)).toBe(5);
  });

  it('a lost E1 answer (processed, then the connection dropped) is found in A6 and followed to success; E1 is not re-sent', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.dropAfterProcessing.add(t);
    let n = 0;
    remote.answers.set(`RR-${t}`, () => (++n < 3 ? 'pending' : 'success'));
    const handle = await start(t, { options: { pollIntervalMs: 50, heartbeatTimeout: '5s', searchInterval: '100ms' } });
    const result = await handle.result();
    expect(result).toMatchObject({
      status: 'success',
      requestRef: `RR-${t}`,
      recovered: true,
      createAttempts: 1,
      record: { status: 'success' },
    });
    expect(remote.createLog.filter((c) => c.terminal === t)).toHaveLength(1);
  });

  it('a lost E1 answer never excludes older requests of the terminal wrongly: the baseline and earlier holders are not taken for ours', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    // An older request of the same terminal and amount, made before this flow (outside it).
    remote.rows.unshift({
      transaction_ref: `OLD-${t}`,
      transaction_amount: 150000,
      transaction_status: 'success',
      meta_data: JSON.stringify({ source: 'pos_remote', device_id: t }),
    });
    remote.dropAfterProcessing.add(t);
    remote.answers.set(`RR-${t}`, () => 'success');
    const result = await (
      await start(t, { options: { pollIntervalMs: 50, heartbeatTimeout: '5s', searchInterval: '100ms' } })
    ).result();
    expect(result).toMatchObject({ status: 'success', requestRef: `RR-${t}`, recovered: true });
  });

  it('where the deployment says A6 lists remote requests (lostCreateAbsentIs: not_sent), a lost E1 answer whose request A6 never showed, read after lifetime + grace, ends not_sent (E1 never arrived); E1 not re-sent', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const before = remote.creates;
    remote.createFailure = lostCreateAnswer();
    try {
      const handle = await start(t, {
        options: {
          ...SHORT_LIFETIME,
          lostCreateAbsentIs: 'not_sent',
        },
      });
      await until(async () => (await handle.query(posRemoteStateQuery)).status === 'searching');
      const result = await handle.result();
      expect(result.status).toBe('not_sent');
      expect(result.message).toMatch(/show no request for this terminal and amount through its lifetime \+ grace/);
      expect(remote.creates - before).toBe(1);
      expect(remote.requeries.get(`RR-${t}`)).toBeUndefined();
      expect((await handle.describe()).typedSearchAttributes.get(PaymentStatus)).toBe('not_sent');
    } finally {
      remote.createFailure = undefined;
    }
  });

  it('by default (a real service, A6 not known to list remote requests) the same lost E1 is parked outcome_unknown (search attribute too); a request that then shows in A6 is followed to its record', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.createFailure = lostCreateAnswer();
    try {
      const handle = await start(t, {
        options: { ...SHORT_LIFETIME, requeryBackoff: '100ms', requeryMaxBackoff: '200ms' },
      });
      const parked = await parkedAt(handle, 'outcome_unknown');
      expect(parked.message).toMatch(/check the transaction list/);
      // Every search answered (none found): no search problem is named.
      expect(parked.message).toBe(
        "the answer to the request create (E1) was lost and no request was found in the service's records within its lifetime + grace. The terminal may have charged the payer: check the transaction list before asking again.",
      );
      // The service's list shows the request late (and completed): the parked flow finds it.
      remote.rows.unshift(remoteRequestRow(`LATE-${t}`, t, 150000, 'failed'));
      expect(await handle.result()).toMatchObject({ status: 'failed', requestRef: `LATE-${t}`, recovered: true });
      expect(remote.creates).toBeGreaterThan(0);
    } finally {
      remote.createFailure = undefined;
    }
  });

  it('a lost E1 answer while A6 cannot be read: absence is not proven, so it is never not_sent; outcome_unknown after another lifetime of failed searches', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.createFailure = lostCreateAnswer();
    const query = remote.api.transactions.query;
    try {
      const handle = await start(t, {
        options: {
          ...SHORT_LIFETIME,
        },
      });
      await until(async () => (await handle.query(posRemoteStateQuery)).status === 'searching');
      remote.api.transactions.query = async () => {
        throw new ServerError({
          message: 'A6 down',
          operation: 'transactions.query',
          retrySafe: true,
          outcomeUnknown: false,
          requestSent: true,
          status: 503,
        });
      };
      // Before it is parked the operator's Update is refused by its validator, not by a missing
      // handler: the handler is there from the start, so it is there the moment the parked status
      // shows (while the lock is still being released).
      await expect(
        handle.executeUpdate(resolveOutcomeUpdate, {
          args: [{ outcome: 'failed', reason: 'too early (test)', operator: 'ops@example.com' }],
        }),
      ).rejects.toMatchObject({ cause: { message: expect.stringMatching(/accepted only while the flow is parked/) } });
      // Each failed search is retried by its activity first: this takes a while.
      expect((await parkedAt(handle, 'outcome_unknown', 50_000)).message).toMatch(/last search failed/);
      expect((await resolvedAs(handle, 'failed')).status).toBe('failed');
    } finally {
      remote.api.transactions.query = query;
      remote.createFailure = undefined;
    }
  });

  /** A6 as a busy merchant's: every page full (100 other transactions), the scripted rows on page 1. */
  const busyMerchantA6 = (pages: number[]) => async (req: { reference?: string; page?: number }) => {
    if (req.reference) return { data: remote.rows.filter((r) => r.transaction_ref === req.reference) };
    pages.push(req.page ?? 1);
    const filler = Array.from({ length: 100 }, (_, i) => ({
      transaction_ref: `CARD-${req.page}-${i}`,
      transaction_amount: 5000,
      transaction_status: 'success',
      meta_data: JSON.stringify({ source: 'card' }),
    }));
    return { data: (req.page ?? 1) === 1 ? [...remote.rows, ...filler].slice(0, 100) : filler };
  };

  it('a merchant whose A6 lists more than 2,000 transactions around today still gets its request: E1 sent once on a partial baseline, polled to success', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const before = remote.creates;
    const pages: number[] = [];
    const query = remote.api.transactions.query;
    remote.api.transactions.query = busyMerchantA6(pages);
    remote.answers.set(`RR-${t}`, () => 'success');
    try {
      const result = await (await start(t, { options: { pollIntervalMs: 50, heartbeatTimeout: '5s' } })).result();
      expect(result).toMatchObject({ status: 'success', requestRef: `RR-${t}` });
      expect(remote.creates - before).toBe(1);
      // The baseline read stopped at its bound, 20 pages of 100.
      expect(pages).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    } finally {
      remote.api.transactions.query = query;
    }
  });

  it('a partial baseline and a lost E1 answer: a partial list proves nothing, so never not_sent and never a guessed request: outcome_unknown, E1 sent once', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const before = remote.creates;
    const query = remote.api.transactions.query;
    remote.api.transactions.query = busyMerchantA6([]);
    // E1 reaches the service (listed in A6 from now on) and its answer is lost.
    remote.dropAfterProcessing.add(t);
    remote.answers.set(`RR-${t}`, () => 'success');
    try {
      const handle = await start(t, {
        options: {
          ...SHORT_LIFETIME,
          // Failed searches go on for another lifetime after the deadline (lifetime + grace), every
          // searchInterval: here 1 s sleeps past the deadline (a search of this A6 takes a while: the
          // lifetime leaves room for a full sleep after one even when a loaded machine slows it).
          requestLifetime: '4s',
          searchGrace: '0ms',
          searchInterval: '1s',
        },
      });
      const result = await parkedAt(handle, 'outcome_unknown');
      expect(result.message).toMatch(/longer than 2000 rows, too long to search/);
      expect(result.message).toMatch(/check the transaction list/);
      expect(result).not.toHaveProperty('recovered', true);
      expect(remote.creates - before).toBe(1);
      expect(remote.requeries.get(`RR-${t}`)).toBeUndefined();
      // The searches' sleeps (the lock's wait and the parked look-ups' backoff aside): the one past the
      // deadline is the full searchInterval, not shorter.
      const sleeps = (await timersOf(handle)).filter((ms) => ms <= 1_000);
      expect(sleeps.at(-1)).toBe(1_000);
      expect(await resolvedAs(handle, 'success')).toMatchObject({
        status: 'success',
        resolution: { outcome: 'success' },
      });
    } finally {
      remote.api.transactions.query = query;
      remote.dropAfterProcessing.delete(t);
    }
  });

  it('an E1 that provably never left (connection refused) is sent again', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const before = remote.creates;
    remote.createFailure = new ConnectionError({
      message: 'connect ECONNREFUSED',
      operation: 'posRemote.create',
      retrySafe: true,
      outcomeUnknown: false,
      requestSent: false,
    });
    remote.answers.set(`RR-${t}`, () => 'success');
    const handle = await start(t);
    await until(() => remote.creates - before >= 1);
    remote.createFailure = undefined;
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'success', createAttempts: 2 });
    expect(remote.creates - before).toBe(2);
  });

  it('two flows for the same terminal are serialised by the terminal lock', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    let firstDone = false;
    remote.answers.set(`RR-${t}`, () => (firstDone ? 'success' : 'pending'));
    remote.answers.set(`RR-${t}-2`, () => 'success');
    const a = await start(t);
    await until(async () => (await a.query(posRemoteStateQuery)).status === 'pending');
    const b = await start(t);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await b.query(posRemoteStateQuery)).toMatchObject({ status: 'locking' });
    expect(remote.createLog.filter((c) => c.terminal === t)).toHaveLength(1); // B has sent nothing
    firstDone = true;
    const ra = await a.result();
    const doneAt = Date.now();
    const rb = await b.result();
    expect(ra).toMatchObject({ status: 'success', requestRef: `RR-${t}` });
    expect(rb).toMatchObject({ status: 'success', requestRef: `RR-${t}-2` });
    const creates = remote.createLog.filter((c) => c.terminal === t);
    expect(creates).toHaveLength(2);
    expect(creates[1].at).toBeLessThanOrEqual(doneAt + 5000);
    expect(creates[1].at).toBeGreaterThan(creates[0].at + 1000);
    // The lock remembers the first holder's request (a later lost-E1 search never takes it).
    const lock = await client.workflow
      .getHandle(posTerminalLockWorkflowId(t, config.temporal.taskQueue))
      .query(terminalLockStateQuery);
    expect(lock.recent).toEqual([`RR-${t}`, `RR-${t}-2`]);
    expect(lock.holder).toBeUndefined();
  });

  it('a holder that is gone without releasing (terminated) loses the lock; the next flow proceeds', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.answers.set(`RR-${t}`, () => 'pending');
    remote.answers.set(`RR-${t}-2`, () => 'success');
    const over = { options: { pollIntervalMs: 50, heartbeatTimeout: '5s', lockCheckInterval: '300ms' } };
    const a = await start(t, over);
    await until(async () => (await a.query(posRemoteStateQuery)).status === 'pending');
    const b = await start(t, over);
    await new Promise((r) => setTimeout(r, 800));
    expect(await b.query(posRemoteStateQuery)).toMatchObject({ status: 'locking' });
    await a.terminate('operator');
    const rb = await b.result();
    expect(rb).toMatchObject({ status: 'success', requestRef: `RR-${t}-2` });
  });

  it('E1 refused (400): rejected', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.createFailure = new BadRequestError({
      message: 'amount must be greater than 0',
      operation: 'posRemote.create',
      status: 400,
      retrySafe: false,
      outcomeUnknown: false,
      requestSent: true,
    });
    try {
      const result = await (await start(t)).result();
      expect(result.status).toBe('rejected');
      expect(result.message).toMatch(/amount must be greater than 0/);
      // The refusal's type is named (what kind of refusal it was).
      expect(result.message).toMatch(/^the service refused the request \(BadRequest\): /);
    } finally {
      remote.createFailure = undefined;
    }
  });

  it('a cancel stops the active polling (the activity sees the abort), watches until the lifetime ends, then ends cancelled', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    let cancelled = false;
    remote.answers.set(`RR-${t}`, () => (cancelled ? '404' : 'pending'));
    const handle = await start(t, { options: { ...QUICK_CANCEL, requestLifetime: '3s' } });
    await until(() => (remote.requeries.get(`RR-${t}`) ?? 0) >= 3);
    const signalsBefore = remote.signals.length;
    await handle.signal(cancelPosRemoteSignal, { reason: 'customer left' });
    await until(async () => (await handle.query(posRemoteStateQuery)).status === 'cancelling');
    cancelled = true; // from now on the request is gone (after its 3 s lifetime this is expiry)
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'cancelled', cancelRequested: true });
    // The in-flight or last requery's abort signal fired (cancellation reached the activity).
    expect(remote.signals.slice(0, signalsBefore).some((s) => s.aborted)).toBe(true);
    expect(await handle.query(posRemoteStateQuery)).toMatchObject({ status: 'cancelled' });
  });

  it('an approval that lands after the cancel is reported: success_after_cancel, status and search attribute', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    let cancelledAt = 0;
    remote.answers.set(`RR-${t}`, () => (cancelledAt && Date.now() - cancelledAt > 500 ? 'success' : 'pending'));
    const handle = await start(t, { options: QUICK_CANCEL });
    await until(() => (remote.requeries.get(`RR-${t}`) ?? 0) >= 2);
    await handle.signal(cancelPosRemoteSignal, { reason: 'customer left' });
    await until(async () => (await handle.query(posRemoteStateQuery)).status === 'cancelling');
    cancelledAt = Date.now(); // the payer taps the card half a second after the cancel
    const result = await handle.result();
    expect(result).toMatchObject({
      status: 'success_after_cancel',
      cancelRequested: true,
      record: { status: 'success', response_code: '00' },
    });
    expect(result.message).toMatch(/approved on the terminal after the cancel/);
    expect((await handle.describe()).typedSearchAttributes.get(PaymentStatus)).toBe('success_after_cancel');
  });

  it('cancelling the workflow stops the polling too; if the terminal had completed, that is reported', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    // The polling activity keeps seeing pending; the one look after the cancel sees success.
    remote.answers.set(`RR-${t}`, (polling) => (polling ? 'pending' : 'success'));
    const handle = await start(t, { options: QUICK_CANCEL });
    await until(() => (remote.requeries.get(`RR-${t}`) ?? 0) >= 2);
    await handle.cancel();
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'success', record: { status: 'success' } });
    expect(result.message).toMatch(/cancelled by the caller, but the terminal had already completed/);
  });

  // --- E1 (create) ---

  it('a cancel that arrives before E1 is sent ends cancelled: no E1 call, nothing to follow', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const query = remote.api.transactions.query;
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    // The baseline read (before E1) waits until the cancel has reached the flow.
    remote.api.transactions.query = async (req) => {
      await released;
      return query(req);
    };
    try {
      const handle = await start(t);
      await until(async () => (await handle.query(posRemoteStateQuery)).status === 'creating');
      await handle.signal(cancelPosRemoteSignal, { reason: 'customer left' });
      await until(async () => (await handle.query(posRemoteStateQuery)).cancelRequested === true);
      release();
      const result = await within(handle.result(), 15_000); // E1 sent after all: it would be polled on
      expect(result).toMatchObject({
        status: 'cancelled',
        message: 'cancelled before the request create (E1) was sent; nothing was sent',
        cancelRequested: true,
      });
      expect(result.requestRef).toBeUndefined();
      expect(remote.e1Calls.filter((c) => c.terminal_id === t)).toEqual([]);
    } finally {
      release();
      remote.api.transactions.query = query;
    }
  });

  it("E1 carries the input's account_type when given (normalised), and none when not", async () => {
    const [a, b] = [`T${randomUUID().slice(0, 8)}`, `T${randomUUID().slice(0, 8)}`];
    remote.answers.set(`RR-${a}`, () => 'success');
    remote.answers.set(`RR-${b}`, () => 'success');
    const results = await Promise.all([
      start(a, { account_type: 'SAVINGS' }).then((h) => h.result()),
      start(b).then((h) => h.result()),
    ]);
    expect(results.map((r) => r.status)).toEqual(['success', 'success']);
    expect(remote.e1Calls.filter((c) => c.terminal_id === a)).toEqual([
      { terminal_id: a, amount: 150000, account_type: 'savings' },
    ]);
    expect(remote.e1Calls.filter((c) => c.terminal_id === b)).toEqual([{ terminal_id: b, amount: 150000 }]);
  });

  it('E1 that provably never left is tried at most 3 times, 2 s then 4 s apart; an attempt that failed before its sending mark counts as never sent even after an earlier attempt announced; then not_sent', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    let attempts = 0;
    // Attempts 1 and 3 announce, then the connection is refused (nothing left); attempt 2 fails
    // before its sending mark (not a transient failure: only the missing mark proves it unsent).
    remote.beforeAnnounce.set(t, () => {
      attempts += 1;
      if (attempts === 2) throw new Error('the worker failed before the sending mark');
    });
    remote.createFailure = new ConnectionError({
      message: 'connect ECONNREFUSED',
      operation: 'posRemote.create',
      retrySafe: true,
      outcomeUnknown: false,
      requestSent: false,
    });
    try {
      const handle = await start(t, { options: { ...SHORT_LIFETIME } });
      const result = await within(handle.result(), 20_000);
      expect(result).toMatchObject({ status: 'not_sent', createAttempts: 3 });
      expect(result.message).toMatch(
        /^the request create \(E1\) could not be sent \(3 attempts, none left\): .*ECONNREFUSED/,
      );
      expect(attempts).toBe(3);
      expect(remote.e1Calls.filter((c) => c.terminal_id === t)).toHaveLength(2); // attempts 1 and 3
      expect(result.requestRef).toBeUndefined();
      // The backoff before each new attempt: 2 s, then 4 s (nothing else slept).
      expect((await timersOf(handle)).filter((ms) => ms !== LOCK_WAIT_MS)).toEqual([2_000, 4_000]);
    } finally {
      remote.createFailure = undefined;
      remote.beforeAnnounce.delete(t);
    }
  });

  // --- a lost E1 answer: the search (A6) ---

  it('a lost E1 answer is searched for until lostAt + lifetime + grace (not before), the sleep before the last search cut from the searchInterval (20 s here) to the deadline; the status says so meanwhile', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.createFailure = lostCreateAnswer();
    // An interval far longer than lifetime + grace: a sleep not cut to the deadline would put the
    // decision 20 s out, whatever a loaded machine adds to each search.
    const [lifetime, grace, interval] = [1_500, 1_000, 20_000];
    try {
      const handle = await start(t, {
        options: {
          pollIntervalMs: 50,
          heartbeatTimeout: '5s',
          requestLifetime: `${lifetime}ms`,
          searchGrace: `${grace}ms`,
          searchInterval: `${interval}ms`,
          lostCreateAbsentIs: 'not_sent',
        },
      });
      await until(async () => (await handle.query(posRemoteStateQuery)).status === 'searching');
      expect((await handle.query(posRemoteStateQuery)).message).toBe(
        "the answer to the request create (E1) was lost after it may have reached the service; looking for the request in the service's transaction records",
      );
      const result = await handle.result();
      expect(result.status).toBe('not_sent');
      // On the workflow clock (history): E1's failure, then the task that saw the last search's answer.
      const events = (await handle.fetchHistory()).events ?? [];
      const at = (e: (typeof events)[number]) =>
        Number(e.eventTime!.seconds) * 1000 + Math.round(e.eventTime!.nanos! / 1e6);
      const createScheduled = events.find(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'posRemoteCreateRequest',
      )!;
      const lost = events.find(
        (e) => Number(e.activityTaskFailedEventAttributes?.scheduledEventId) === Number(createScheduled.eventId),
      )!;
      const searches = events.flatMap((e, i) =>
        e.activityTaskScheduledEventAttributes?.activityType?.name === 'posRemoteFindRequest' ? [i] : [],
      );
      const decided = events.slice(searches.at(-1)).find((e) => e.workflowTaskStartedEventAttributes)!;
      expect(at(decided) - at(lost)).toBeGreaterThanOrEqual(lifetime + grace - 50);
      expect(at(decided) - at(lost)).toBeLessThan(lifetime + grace + interval / 2);
      // One sleep between the first search and the last: the time left to the deadline, less than the
      // searchInterval (and the deadline's span).
      const sleeps = (await timersOf(handle)).filter((ms) => ms !== LOCK_WAIT_MS);
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThanOrEqual(1);
      expect(sleeps[0]).toBeLessThan(lifetime + grace);
    } finally {
      remote.createFailure = undefined;
    }
  });

  it('a lost E1 answer with several new requests for this terminal and amount in A6 is parked outcome_unknown naming them: never a guess, nothing polled', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    // After the baseline, someone else's request for the same terminal and amount appears; then ours
    // reaches the service and its answer is lost.
    remote.beforeAnnounce.set(t, () => {
      remote.rows.unshift(remoteRequestRow(`OTHER-${t}`, t, 150000, 'pending'));
    });
    remote.dropAfterProcessing.add(t);
    try {
      const handle = await start(t, { options: { ...SHORT_LIFETIME } });
      const state = await parkedAt(handle, 'outcome_unknown');
      expect(state.message).toBe(
        `the answer to the request create (E1) was lost and the terminal has several new requests for this amount (RR-${t}, OTHER-${t}): which is ours cannot be told. Check the terminal and the transaction list.`,
      );
      expect(state.requestRef).toBeUndefined();
      expect(remote.requeries.get(`RR-${t}`)).toBeUndefined();
      expect(remote.requeries.get(`OTHER-${t}`)).toBeUndefined();
      expect(remote.e1Calls.filter((c) => c.terminal_id === t)).toHaveLength(1);
      expect((await resolvedAs(handle, 'failed')).status).toBe('failed');
    } finally {
      remote.beforeAnnounce.delete(t);
      remote.dropAfterProcessing.delete(t);
    }
  });

  // --- E2 (follow) ---

  it('a cancel that arrives while E1 is in flight: no polling, one look; a completed request is reported with its record', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    let inE1 = false;
    remote.beforeAnnounce.set(t, async () => {
      inE1 = true;
      await released;
    });
    remote.answers.set(`RR-${t}`, () => 'success');
    try {
      const handle = await start(t);
      await until(() => inE1);
      await handle.signal(cancelPosRemoteSignal, { reason: 'customer left' });
      await until(async () => (await handle.query(posRemoteStateQuery)).cancelRequested === true);
      release();
      const result = await handle.result();
      expect(result).toMatchObject({
        status: 'success',
        message: 'cancelled by the caller, but the terminal had already completed the payment',
        cancelRequested: true,
        requestRef: `RR-${t}`,
        record: { status: 'success', response_code: '00' },
      });
      expect(result.polls).toBeUndefined(); // no polling activity ran
      expect(remote.requeries.get(`RR-${t}`)).toBe(1); // the one look after the cancel
    } finally {
      release();
      remote.beforeAnnounce.delete(t);
    }
  });

  it('polling that fails without a final state (its schedule-to-close timeout) is parked poll_error, never a guess', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.answers.set(`RR-${t}`, () => 'pending');
    const handle = await start(t, { options: { pollIntervalMs: 50, heartbeatTimeout: '5s', pollTimeout: '1s' } });
    const state = await parkedAt(handle, 'poll_error');
    expect(state.message).toMatch(/^polling stopped without a final state: .*time/i);
    expect(state.cancelRequested).toBeUndefined();
    expect((await resolvedAs(handle, 'failed')).status).toBe('failed');
  });

  // --- E2 404 after the lifetime: the final look at the transaction record ---

  /**
   * A request polled pending, then gone (E2 404 past its 10 ms lifetime, observed) while A6 shows
   * its record as `recordStatus` (none: no record). `cancel`: a cancel first, the 404 met while watching.
   */
  async function goneWithRecord(recordStatus: string | undefined, cancel = false) {
    const t = `T${randomUUID().slice(0, 8)}`;
    const ref = `RR-${t}`;
    let gone = false;
    remote.answers.set(ref, (polling) => {
      if (!gone || !polling) return 'pending';
      const i = remote.rows.findIndex((r) => r.transaction_ref === ref);
      if (recordStatus === undefined) {
        if (i >= 0) remote.rows.splice(i, 1);
      } else remote.rows[i].transaction_status = recordStatus;
      return '404';
    });
    const handle = await start(t, { options: { ...QUICK_CANCEL, requestLifetime: '10ms' } });
    await until(() => (remote.requeries.get(ref) ?? 0) >= 2);
    if (cancel) {
      await handle.signal(cancelPosRemoteSignal, { reason: 'customer left' });
      await until(async () => (await handle.query(posRemoteStateQuery)).status === 'cancelling');
    }
    gone = true;
    const result = await handle.result();
    return { ref, result, lookups: remote.lookups.filter((r) => r === ref).length };
  }
  const APPROVED =
    "the request requery (E2) answered 404 (the request is gone), and the service's transaction record shows it approved";
  const DECLINED =
    "the request requery (E2) answered 404 (the request is gone), and the service's transaction record shows it declined";
  const ABANDONED =
    "the request's lifetime ended without completion (a 404 from the request requery (E2); transaction record: abandoned)";
  const NO_RECORD =
    'the request was not completed within its lifetime (a 404 from the request requery (E2); no transaction record to confirm)';

  it("after E2's 404 past the lifetime, the transaction record decides: success, failed, abandoned (expired); pending or none is no proof (expired, unconfirmed)", async () => {
    const [success, failed, abandoned, pending, none] = await Promise.all(
      ['success', 'failed', 'abandoned', 'pending', undefined].map((s) => goneWithRecord(s)),
    );
    expect(success.result).toMatchObject({
      status: 'success',
      message: APPROVED,
      record: { status: 'success', transaction_ref: success.ref, amount: 150000 },
    });
    expect(failed.result).toMatchObject({
      status: 'failed',
      message: DECLINED,
      record: { status: 'failed', transaction_ref: failed.ref },
    });
    expect(abandoned.result).toMatchObject({ status: 'expired', message: ABANDONED });
    expect(abandoned.result.record).toBeUndefined();
    expect(pending.result).toMatchObject({ status: 'expired', message: NO_RECORD });
    expect(pending.result.record).toBeUndefined();
    expect(none.result).toMatchObject({ status: 'expired', message: NO_RECORD });
    expect(none.result.record).toBeUndefined();
    // One final look each at the service's record (A6 by reference).
    expect([success, failed, abandoned, pending, none].map((c) => c.lookups)).toEqual([1, 1, 1, 1, 1]);
  });

  it('after a cancel, the 404 met while watching is decided by the record too: success_after_cancel, or cancelled (failed, abandoned, none)', async () => {
    const [success, failed, abandoned, none] = await Promise.all(
      ['success', 'failed', 'abandoned', undefined].map((s) => goneWithRecord(s, true)),
    );
    expect(success.result).toMatchObject({
      status: 'success_after_cancel',
      cancelRequested: true,
      message: APPROVED,
      record: { status: 'success', transaction_ref: success.ref },
    });
    expect(failed.result).toMatchObject({
      status: 'cancelled',
      message: DECLINED,
      record: { status: 'failed', transaction_ref: failed.ref },
    });
    expect(abandoned.result).toMatchObject({ status: 'cancelled', message: ABANDONED });
    expect(abandoned.result.record).toBeUndefined();
    expect(none.result).toMatchObject({ status: 'cancelled', message: NO_RECORD });
    expect(none.result.record).toBeUndefined();
    expect([success, failed, abandoned, none].map((c) => c.lookups)).toEqual([1, 1, 1, 1]);
  });
});
