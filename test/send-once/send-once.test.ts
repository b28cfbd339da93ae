// The one send-once rule (src/workflows/steps/send-once.ts) on the time-skipping server, with probe
// activities that play the service: a request is "received" when the service holds it, and the
// requery sees what it holds (after a propagation delay when scripted).
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { MetricsBuffer, Runtime, type BufferedMetricUpdate } from '@temporalio/worker';
import { METRICS } from '../../src/shared/flow-metrics';
import type { ProbeActivities, ProbeOptions, sendOnceProbeWorkflow } from '../fixtures/send-once-workflows';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { activitiesByWorkflow } from '../support/activities-by-workflow';

// The worker's Runtime keeps the metrics the workflows record (its buffered exporter), for the tests of
// what send-once counts. Installed before the environment creates the Runtime.
const metrics = new MetricsBuffer({ maxBufferSize: 100_000 });
Runtime.install({ telemetryOptions: { metrics: { buffer: metrics } } });
const recorded: BufferedMetricUpdate[] = [];
/** The sum counter `name` was given so far under these label values (others may be present). */
function counted(name: string, labels: Record<string, string> = {}): number {
  recorded.push(...metrics.retrieveUpdates());
  return recorded
    .filter((u) => u.metric.name === name && Object.entries(labels).every(([k, v]) => u.attributes[k] === v))
    .reduce((sum, u) => sum + u.value, 0);
}

// One worker of the probe workflows (test/fixtures/send-once-workflows) for the file: each probe's
// activities are those of the fake service its test started it with (its reference is its workflow id).
const byFlow = activitiesByWorkflow<ProbeActivities>(['probeSend', 'probeRequery']);
const TASK_QUEUE = `send-once-${randomUUID()}`;
const env = useTimeSkippingEnv({
  worker: {
    taskQueue: TASK_QUEUE,
    activities: () => byFlow.activities,
    workflowsPath: require.resolve('../fixtures/send-once-workflows'),
  },
});

type Behaviour =
  | 'answer' // processed and answered
  | 'drop-before' // never reached the service
  | 'drop-after' // processed, answer lost
  | 'refuse' // refused: nothing happened
  | 'refuse-duplicate' // refused because the service already holds the reference
  | 'never-sent' // failed before anything left (connection refused): provably not received
  | 'answered-5xx' // the service answered 503: the attempt is over (whatever it did)
  | 'land-late' // Temporal ends the attempt (a cut-off worker) while its request is still on the way
  | 'cut-landed' // Temporal ends the attempt (a cut-off worker); its request had already been processed
  | 'cut-lost' // Temporal ends the attempt (a cut-off worker); its request never reaches the service
  | 'block'; // processed, answer held until released

interface Script {
  sends: Behaviour[];
  /** Requery answers before the service shows what it holds ('absent' while it lags). */
  lagReads?: number;
  /** The requery fails (the service cannot be asked). */
  requeryDown?: boolean;
}

/** A non-retryable failure of `type`, as the real activities throw it. */
const fail = (type: string, message: string, details?: unknown[]) =>
  ApplicationFailure.create({ type, message, nonRetryable: true, ...(details ? { details } : {}) });

function fakeService(script: Script) {
  const held = new Map<string, number>(); // reference → sends the service processed
  const landing: { reference: string; at: number }[] = []; // requests still on their way
  const log: string[] = [];
  /** The time-skipping server's clock at each entry of `log`. */
  const at: number[] = [];
  const record = async (entry: string) => {
    log.push(entry);
    at.push(await env.currentTimeMs());
  };
  let lag = script.lagReads ?? 0;
  let release: (() => void) | undefined;
  const blocked = new Promise<void>((r) => (release = r));
  let sendStarted: (() => void) | undefined;
  const started = new Promise<void>((r) => (sendStarted = r));
  const activities: ProbeActivities = {
    async probeSend(reference, n) {
      const behaviour = script.sends[n - 1] ?? 'answer';
      await record(`send#${n}:${behaviour}`);
      sendStarted?.();
      const process = () => held.set(reference, (held.get(reference) ?? 0) + 1);
      switch (behaviour) {
        case 'answer':
          process();
          return { accepted: reference };
        case 'drop-before':
          throw fail('OutcomeUnknown', 'socket hang up');
        case 'drop-after':
          process();
          throw fail('OutcomeUnknown', 'connection reset after the request was sent');
        case 'refuse':
          throw fail('BadRequest', 'amount cannot be < 0');
        case 'refuse-duplicate':
          throw fail('BadRequest', 'Duplicate transaction reference');
        case 'never-sent':
          throw fail('Transient', 'connect ECONNREFUSED');
        case 'answered-5xx':
          throw fail('OutcomeUnknown', 'Service temporarily unavailable', [{ status: 503 }]);
        case 'land-late':
          // The worker is cut off mid-call: Temporal times the attempt out; the request lands 30 s later.
          landing.push({ reference, at: (await env.currentTimeMs()) + 30_000 });
          await new Promise((r) => setTimeout(r, 2_500));
          return { accepted: reference };
        case 'cut-landed':
          process();
          await new Promise((r) => setTimeout(r, 2_500));
          return { accepted: reference };
        case 'cut-lost':
          await new Promise((r) => setTimeout(r, 2_500));
          throw fail('OutcomeUnknown', 'socket hang up');
        case 'block':
          process();
          await blocked;
          return { accepted: reference };
      }
    },
    async probeRequery(reference) {
      const now = await env.currentTimeMs();
      for (const l of landing.splice(0).filter((x) => x.reference === reference)) {
        if (l.at <= now) held.set(reference, (held.get(reference) ?? 0) + 1);
        else landing.push(l);
      }
      if (script.requeryDown) {
        await record('requery:down');
        throw fail('ServiceError', '503 from the service');
      }
      if (lag > 0) {
        lag -= 1;
        await record('requery:absent(lag)');
        return { found: false };
      }
      const sends = held.get(reference);
      await record(sends ? 'requery:found' : 'requery:absent');
      return sends ? { found: true, record: { reference, sends } } : { found: false };
    },
  };
  return { activities, held, log, at, landing, release: () => release?.(), started };
}

/** The probe of `reference` gets `service`'s activities; its workflow id. */
const served = (service: ReturnType<typeof fakeService>, reference: string) =>
  byFlow.script(reference, service.activities);

async function run(script: Script, opts: ProbeOptions = {}) {
  const service = fakeService(script);
  const reference = `ref-${randomUUID()}`;
  const workflowId = served(service, reference);
  const result = await env.client.workflow.execute<typeof sendOnceProbeWorkflow>('sendOnceProbeWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [reference, opts],
  });
  return {
    result,
    workflowId,
    log: service.log,
    at: service.at,
    processed: service.held.get(reference) ?? 0,
    stillLanding: service.landing.filter((l) => l.reference === reference).length,
  };
}

describe('the one send-once rule', () => {
  it('an answered send is sent once and never requeried', async () => {
    const { result, log, processed } = await run({ sends: ['answer'] });
    expect(result).toMatchObject({ outcome: 'answered', sends: 1, answer: { accepted: expect.any(String) } });
    expect(log).toEqual(['send#1:answer']);
    expect(processed).toBe(1);
  });

  it("a refusal without a failure type (the flow's own rule, a failure of the workflow) is recorded as type Refused", async () => {
    const { result, log } = await run({ sends: [] }, { refusedBeforeSending: true });
    expect(result).toEqual({
      outcome: 'refused',
      sends: 1,
      failure: { type: 'Refused', message: 'the flow refused the request before sending it' },
    });
    expect(log).toEqual([]);
  });

  it('a refused first send ends refused without a requery or a resend', async () => {
    const { result, log, processed } = await run({ sends: ['refuse'] });
    expect(result).toMatchObject({ outcome: 'refused', sends: 1, failure: { message: 'amount cannot be < 0' } });
    expect(log).toEqual(['send#1:refuse']);
    expect(processed).toBe(0);
  });

  it('dropped after processing: the requery finds it, and it is never sent again', async () => {
    const { result, log, processed } = await run({ sends: ['drop-after'] });
    expect(result).toMatchObject({
      outcome: 'found',
      sends: 1,
      record: { sends: 1 },
      lost: expect.stringContaining('connection reset'),
    });
    expect(log).toEqual(['send#1:drop-after', 'requery:found']);
    expect(processed).toBe(1);
  });

  it('a lost response that never arrived: absent on every read, then sent again once', async () => {
    const { result, log, processed } = await run({ sends: ['drop-before', 'answer'] });
    expect(result).toMatchObject({ outcome: 'answered', sends: 2 });
    expect(log).toEqual(['send#1:drop-before', 'requery:absent', 'requery:absent', 'send#2:answer']);
    expect(processed).toBe(1);
  });

  it('a worker cut off mid-send (Temporal timed the attempt out, its request still on the way): not resent inside the in-flight window; the late request is found', async () => {
    const { result, log, processed } = await run({ sends: ['land-late', 'answer'] }, { sendStartToCloseMs: 1_000 });
    expect(result).toMatchObject({ outcome: 'found', sends: 1 });
    expect(log).toEqual(['send#1:land-late', 'requery:absent', 'requery:absent', 'requery:found']);
    expect(processed).toBe(1);
  });

  it('without the in-flight window the same late request would have been doubled', async () => {
    const { result, processed, stillLanding } = await run(
      { sends: ['land-late', 'answer'] },
      { inFlightMs: 0, sendStartToCloseMs: 1_000 },
    );
    expect(result).toMatchObject({ outcome: 'answered', sends: 2 });
    expect(processed + stillLanding).toBe(2); // the resend went through, and the first is still on its way: two at the service
  });

  it.each(['never-sent', 'answered-5xx', 'drop-before'] as const)(
    'an attempt the activity itself reported (%s) is resent after the absent reads, without waiting out the window',
    async (first) => {
      const { result, log } = await run({ sends: [first, 'answer'] });
      expect(result).toMatchObject({ outcome: 'answered', sends: 2 });
      expect(log).toEqual([`send#1:${first}`, 'requery:absent', 'requery:absent', 'send#2:answer']);
    },
  );

  it('read-after-write: an "absent" right after the send is read again, and a late record stops the resend', async () => {
    const { result, log, processed } = await run({ sends: ['drop-after'], lagReads: 1 });
    expect(result).toMatchObject({ outcome: 'found', sends: 1 });
    expect(log).toEqual(['send#1:drop-after', 'requery:absent(lag)', 'requery:found']);
    expect(processed).toBe(1);
  });

  it('with one absent read allowed and no in-flight window, the same lag would have doubled the request (why absentReads defaults to 2)', async () => {
    const { result, processed } = await run(
      { sends: ['drop-after', 'answer'], lagReads: 1 },
      { absentReads: 1, inFlightMs: 0 },
    );
    expect(result).toMatchObject({ outcome: 'answered', sends: 2 });
    expect(processed).toBe(2);
  });

  it('requery unanswerable: unverified, never sent again', async () => {
    const { result, log, processed } = await run({ sends: ['drop-after'], requeryDown: true });
    expect(result).toMatchObject({
      outcome: 'unverified',
      sends: 1,
      lost: expect.stringContaining('connection reset'),
    });
    expect(log.filter((l) => l.startsWith('send'))).toEqual(['send#1:drop-after']);
    expect(processed).toBe(1);
  });

  it('never received after maxSends sends: never-received, and no third send', async () => {
    const { result, log } = await run({ sends: ['drop-before', 'drop-before', 'answer'] });
    expect(result).toMatchObject({ outcome: 'never-received', sends: 2 });
    expect(log.filter((l) => l.startsWith('send'))).toEqual(['send#1:drop-before', 'send#2:drop-before']);
  });

  it('a resend refused as a duplicate is requeried: the first send had landed late', async () => {
    const { result, log, processed } = await run({ sends: ['drop-after', 'refuse-duplicate'], lagReads: 2 });
    expect(result).toMatchObject({ outcome: 'found', sends: 2, record: { sends: 1 } });
    expect(log).toEqual([
      'send#1:drop-after',
      'requery:absent(lag)',
      'requery:absent(lag)',
      'send#2:refuse-duplicate',
      'requery:found',
    ]);
    expect(processed).toBe(1);
  });

  it('a cut-off attempt whose request had already landed: found on the first read, not read again after the in-flight window', async () => {
    const { result, log, processed } = await run({ sends: ['cut-landed'] }, { sendStartToCloseMs: 1_000 });
    expect(result).toMatchObject({ outcome: 'found', sends: 1 });
    expect(log).toEqual(['send#1:cut-landed', 'requery:found']);
    expect(processed).toBe(1);
  });

  it('a cut-off attempt and a service that cannot be asked: unverified at once, not asked again after the in-flight window', async () => {
    const { result, log } = await run({ sends: ['cut-lost'], requeryDown: true }, { sendStartToCloseMs: 1_000 });
    expect(result).toMatchObject({ outcome: 'unverified', sends: 1 });
    expect(log).toEqual(['send#1:cut-lost', 'requery:down']);
  });

  it('a cut-off attempt whose absent reads outlast the in-flight window: resent without another read', async () => {
    // Attempt cut at +1 s, reads at about +3 s and +5 s: past the 3 s window, the two absent reads decide.
    const { result, log, processed } = await run(
      { sends: ['cut-lost', 'answer'] },
      { sendStartToCloseMs: 1_000, inFlightMs: 3_000 },
    );
    expect(result).toMatchObject({ outcome: 'answered', sends: 2 });
    expect(log).toEqual(['send#1:cut-lost', 'requery:absent', 'requery:absent', 'send#2:answer']);
    expect(processed).toBe(1);
  });

  it('each read waits settleMs (2 s in the probe) on the workflow clock: the service may not show a request at once', async () => {
    const { log, at } = await run({ sends: ['drop-before', 'answer'] });
    expect(log).toEqual(['send#1:drop-before', 'requery:absent', 'requery:absent', 'send#2:answer']);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(2_000);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(2_000);
  });

  it('settleMs 0: the reads follow at once, with no timer at all', async () => {
    const { result, log, workflowId } = await run({ sends: ['drop-before', 'answer'] }, { settleMs: 0 });
    expect(result).toMatchObject({ outcome: 'answered', sends: 2 });
    expect(log).toEqual(['send#1:drop-before', 'requery:absent', 'requery:absent', 'send#2:answer']);
    const { events } = await env.client.workflow.getHandle(workflowId).fetchHistory();
    expect(events?.filter((e) => e.timerStartedEventAttributes)).toEqual([]);
  });

  it('counts each outcome once (payflow_send_outcomes), and a resend only after the absent reads proved it safe (payflow_resends_proved_safe)', async () => {
    const outcomes = (outcome: string) => counted(METRICS.sendOutcomes, { outcome });
    const before = {
      answered: outcomes('answered'),
      found: outcomes('found'),
      resends: counted(METRICS.resendsProvedSafe),
    };
    await run({ sends: ['drop-before', 'answer'] }); // absent twice, then resent and answered
    await run({ sends: ['drop-after'] }); // found: never resent
    expect({
      answered: outcomes('answered') - before.answered,
      found: outcomes('found') - before.found,
      resends: counted(METRICS.resendsProvedSafe) - before.resends,
    }).toEqual({ answered: 1, found: 1, resends: 1 });
  });

  it('cancellation mid-send: the send finishes and its outcome is returned; nothing is sent again', async () => {
    const service = fakeService({ sends: ['block'] });
    const reference = `ref-${randomUUID()}`;
    const handle = await env.client.workflow.start<typeof sendOnceProbeWorkflow>('sendOnceProbeWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: served(service, reference),
      args: [reference],
    });
    await service.started;
    await handle.cancel();
    await new Promise((r) => setTimeout(r, 500));
    service.release();
    const result = await handle.result().catch((err: unknown) => err);
    expect(result).not.toBeInstanceOf(WorkflowFailedError);
    expect(result).toMatchObject({ outcome: 'answered', sends: 1 });
    expect(service.log).toEqual(['send#1:block']);
    expect(service.held.get(reference)).toBe(1);
  });
});
