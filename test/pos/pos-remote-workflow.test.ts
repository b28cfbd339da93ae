// The POS remote request workflow with the REAL activities over a scripted API client, on the
// dev server (the polling activity sleeps and heartbeats in real time, so no time skipping):
// E1 once; E2 polled in one heartbeating activity until success/failed/404; cancel by signal
// and by workflow cancellation; a poll attempt that dies resumes from its heartbeat details.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { ConnectionError, NotFoundError, ServerError, BadRequestError, type PaymentsClient } from '../../src/api';
import { createActivities } from '../../src/activities';
import { createLogger } from '../../src/logging/logger';
import { installTemporalRuntime } from '../../src/logging/temporal-logger';
import { cancelPosRemoteSignal, posRemoteStateQuery, type PosRemoteInput } from '../../src/shared/pos';
import { createTemporalClient } from '../../src/temporal/client';
import { createPaymentsWorker } from '../../src/workers/worker';
import type { posRemoteRequestWorkflow } from '../../src/workflows/pos-remote';
import { LogCapture, testConfig, workflowBundle } from '../helpers/temporal';
import { unusedClaimCheck } from './helpers';

const capture = new LogCapture();
const logger = createLogger({ destination: capture, level: 'info' });
installTemporalRuntime(logger, 'WARN');
const config = testConfig();

type Answer = 'pending' | 'success' | 'failed' | '404' | '500' | 'reset';
/** The API client's posRemote group, scripted per request_ref. */
class ScriptedRemote {
  creates = 0;
  requeries = new Map<string, number>();
  createFailure: Error | undefined;
  answers = new Map<string, (polling: boolean) => Answer>();
  signals: AbortSignal[] = [];
  api = {
    posRemote: {
      create: async (req: { terminal_id: string; amount: number }) => {
        this.creates += 1;
        if (this.createFailure) throw this.createFailure;
        return { data: { request_ref: `RR-${req.terminal_id}` } };
      },
      requery: async (req: { request_ref: string }, opts?: { signal?: AbortSignal }) => {
        if (opts?.signal) this.signals.push(opts.signal);
        this.requeries.set(req.request_ref, (this.requeries.get(req.request_ref) ?? 0) + 1);
        const a = this.answers.get(req.request_ref)?.(opts?.signal !== undefined) ?? 'pending';
        const init = { message: a, operation: 'posRemote.requery', retrySafe: true, outcomeUnknown: false, requestSent: true };
        if (a === '404') throw new NotFoundError({ ...init, status: 404, retrySafe: false, message: 'Request not found or expired' });
        if (a === '500') throw new ServerError({ ...init, status: 500 });
        if (a === 'reset') throw new ConnectionError({ ...init, code: 'UND_ERR_SOCKET' });
        if (a === 'pending') return { data: { status: 'pending' } };
        return { data: { status: a, id: 7, amount: 150000, terminal_id: req.request_ref.slice(3), response_code: a === 'success' ? '00' : '51', rrn: '000111222333', transaction_reference: 'TR-1' } };
      },
    },
  };
}

let client: Client;
let worker: Worker;
let run: Promise<void>;
let conn: NativeConnection;
const remote = new ScriptedRemote();

beforeAll(async () => {
  client = await createTemporalClient({ ...config.temporal, encryption: config.encryption });
  conn = await NativeConnection.connect({ address: config.temporal.address });
  worker = await createPaymentsWorker({
    ...config.temporal,
    encryption: config.encryption,
    connection: conn,
    activities: createActivities({ api: remote.api as unknown as PaymentsClient, logger, config, claimCheck: unusedClaimCheck }),
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
    args: [{ reference, terminal_id: terminal, amount: 150000, options: { pollIntervalMs: 50, heartbeatTimeout: '5s' }, ...over }],
  });
}

async function until(fn: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('POS remote request', () => {
  it('polls pending until success; the result carries the full record; few history events', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    let n = 0;
    remote.answers.set(`RR-${t}`, () => (++n < 12 ? 'pending' : 'success'));
    const handle = await start(t);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'success', requestRef: `RR-${t}`, polls: 12 });
    expect(result.record).toMatchObject({ status: 'success', id: 7, amount: 150000, response_code: '00', rrn: '000111222333' });
    // 12 polls inside one activity: the history does not grow with the polls.
    const history = await handle.fetchHistory();
    const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).length;
    expect(scheduled).toBe(2); // create + poll
    expect(history.events!.length).toBeLessThan(30);
  });

  it('a terminal decline ends failed with the record', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.answers.set(`RR-${t}`, () => 'failed');
    const result = await (await start(t)).result();
    expect(result).toMatchObject({ status: 'failed', record: { response_code: '51' } });
  });

  it('404 ends it as expired; transient 5xx and resets keep polling', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const seq: Answer[] = ['pending', '500', 'reset', 'pending', '404'];
    remote.answers.set(`RR-${t}`, () => seq.shift() ?? '404');
    const result = await (await start(t)).result();
    expect(result).toMatchObject({ status: 'expired', polls: 3 });
    expect(remote.requeries.get(`RR-${t}`)).toBe(5);
    expect(result.record).toBeUndefined();
  });

  it('a 404 after a long stretch without any E2 answer is expired_unobserved, never plain expired', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const seq: Answer[] = ['pending', ...Array.from({ length: 12 }, () => '500' as const), '404'];
    remote.answers.set(`RR-${t}`, () => seq.shift() ?? '404');
    const result = await (await start(t, { options: { pollIntervalMs: 50, heartbeatTimeout: '5s', unobservedGapMs: 300 } })).result();
    expect(result.status).toBe('expired_unobserved');
    expect(result.message).toMatch(/either expired or completed/);
  });

  it('E1 without an answer is never repeated: create_outcome_unknown, no polling', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    const before = remote.creates;
    remote.createFailure = new ConnectionError({ message: 'socket closed', operation: 'posRemote.create', retrySafe: false, outcomeUnknown: true, requestSent: true });
    try {
      const result = await (await start(t)).result();
      expect(result.status).toBe('create_outcome_unknown');
      expect(remote.creates - before).toBe(1);
      expect(remote.requeries.get(`RR-${t}`)).toBeUndefined();
    } finally {
      remote.createFailure = undefined;
    }
  });

  it('E1 refused (400): rejected', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.createFailure = new BadRequestError({ message: 'amount must be greater than 0', operation: 'posRemote.create', status: 400, retrySafe: false, outcomeUnknown: false, requestSent: true });
    try {
      const result = await (await start(t)).result();
      expect(result.status).toBe('rejected');
      expect(result.message).toMatch(/amount must be greater than 0/);
    } finally {
      remote.createFailure = undefined;
    }
  });

  it('a cancel signal stops the polling (the activity sees the cancellation) and ends cancelled', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    remote.answers.set(`RR-${t}`, () => 'pending');
    const handle = await start(t);
    await until(() => (remote.requeries.get(`RR-${t}`) ?? 0) >= 3);
    const signalsBefore = remote.signals.length;
    await handle.signal(cancelPosRemoteSignal, { reason: 'customer left' });
    const result = await handle.result();
    expect(result.status).toBe('cancelled');
    // Polling stopped: no more E2 calls after the final look.
    const count = remote.requeries.get(`RR-${t}`)!;
    await new Promise((r) => setTimeout(r, 300));
    expect(remote.requeries.get(`RR-${t}`)).toBe(count);
    // The in-flight or last requery's abort signal fired (cancellation reached the activity).
    expect(remote.signals.slice(0, signalsBefore).some((s) => s.aborted)).toBe(true);
    expect(await handle.query(posRemoteStateQuery)).toMatchObject({ status: 'cancelled' });
  });

  it('cancelling the workflow stops the polling too; if the terminal had completed, that is reported', async () => {
    const t = `T${randomUUID().slice(0, 8)}`;
    // The polling activity keeps seeing pending; the one look after the cancel sees success.
    remote.answers.set(`RR-${t}`, (polling) => (polling ? 'pending' : 'success'));
    const handle = await start(t);
    await until(() => (remote.requeries.get(`RR-${t}`) ?? 0) >= 2);
    await handle.cancel();
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'success', record: { status: 'success' } });
    expect(result.message).toMatch(/cancelled by the caller, but the terminal had already completed/);
  });
});
