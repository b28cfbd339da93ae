// waiting: many card flows waiting for their PIN in one worker (its own process and task queue, the
// worker's default tuning), as issue #25's outside harness measured it (2,000 flows at full size).
// Reported: the worker's RSS with them all waiting, and how long a PIN takes to be answered for the
// flows that waited longest (the first started: evicted from the worker's cache, so each is replayed
// from its history before it sends the PIN).
import { startCardPaymentForStep, submitPin } from '../../src/starters/card-payment';
import { SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import { closedLoop, topErrors } from '../lib/load';
import { sampleRss } from '../lib/processes';
import { row, summarize } from '../lib/stats';
import type { BenchStack } from '../lib/stack';
import { meterStackCpu, noCpu, stackCpuRows } from '../lib/stack-cpu';
import { cardRequest } from './flows';
import type { ScenarioResult } from './types';

const QUEUE = 'bench-waiting';
const WARM_FLOWS = 200;
const ALONE = 40;
const BURST = 10;

export async function waiting(
  stack: BenchStack,
  o: { flows: number; resumeSample: number; concurrency: number },
  log: (s: string) => void,
): Promise<ScenarioResult> {
  const worker = await stack.startOurWorker(QUEUE);
  const ctx = { ...stack.starters, taskQueue: QUEUE };
  const idleMiB = worker.rssMiB();
  const rss = sampleRss(worker, 1000);
  const refs: string[] = [];
  // The worker's RSS once WARM_FLOWS wait: what each flow beyond them adds excludes the one-time
  // growth of a worker's first flows (its heap, code caches, the workflow context's first use).
  let warmMiB: number | undefined;
  const t0 = Date.now();
  let lastLog = t0;
  // No baseline side: ours alone, per flow started and left waiting.
  const cpu = noCpu();
  const procs = { worker, receiver: stack.receiver };
  const started = await meterStackCpu(stack, procs, cpu, () =>
    closedLoop(o.flows, o.concurrency, async () => {
      // B1 answers ValidatePin; the PIN waits an hour.
      const req = cardRequest(TEST_CARDS.pinThenOtp, { amount: 100_000, pinTimeoutMs: 3_600_000 });
      const { state } = await startCardPaymentForStep(ctx, req);
      if (state.status !== 'awaiting_pin') throw new Error(`first step ${state.status}`);
      refs.push(req.transactionRef);
      if (refs.length === WARM_FLOWS) warmMiB = worker.rssMiB();
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now();
        log(
          `  waiting: ${refs.length}/${o.flows} flows waiting for their PIN, worker RSS ${worker.rssMiB().toFixed(0)} MiB`,
        );
      }
    }),
  );
  await new Promise((r) => setTimeout(r, 5_000)); // let the worker settle (GC) before reading its RSS
  const waitingMiB = worker.rssMiB();
  log(
    `  waiting: ${refs.length} waiting after ${((Date.now() - t0) / 1000).toFixed(0)} s; worker RSS ${waitingMiB.toFixed(0)} MiB; resuming the ${o.resumeSample} oldest…`,
  );
  // The oldest flows, evicted from the worker's cache: the first ALONE one at a time (what one
  // payer waits for), the rest BURST at once (replays queue for the worker's CPU).
  const oldest = refs.slice(0, o.resumeSample);
  const resume = (from: string[], concurrency: number) =>
    closedLoop(from.length, concurrency, async (i) => {
      const s = await submitPin(ctx, from[i], SANDBOX_PIN);
      if (s.status !== 'awaiting_otp') throw new Error(`after the PIN: ${s.status}`);
    });
  const alone = await resume(oldest.slice(0, ALONE), 1);
  const resumed = await resume(oldest.slice(ALONE), BURST);
  const { peakMiB } = rss.stop();
  await worker.stop();
  const one = summarize(alone.latencies);
  const r = summarize(resumed.latencies);
  const note =
    [...topErrors(started.errors), ...topErrors(alone.errors), ...topErrors(resumed.errors)].join(' | ') || undefined;
  return {
    rows: [
      row(
        'waiting',
        `worker peak RSS with ${refs.length} flows waiting for the PIN`,
        'MiB',
        peakMiB,
        null,
        { op: '<=', value: 1024 },
        note,
      ),
      row(
        'waiting',
        'worker RSS per waiting flow (after settling, above idle)',
        'KiB',
        ((waitingMiB - idleMiB) * 1024) / Math.max(refs.length, 1),
        null,
      ),
      ...(warmMiB === undefined || refs.length <= WARM_FLOWS
        ? []
        : [
            row(
              'waiting',
              `worker RSS per waiting flow beyond the first ${WARM_FLOWS} (after settling)`,
              'KiB',
              ((waitingMiB - warmMiB) * 1024) / (refs.length - WARM_FLOWS),
              null,
            ),
          ]),
      row('waiting', `p99 time to answer the PIN of an evicted flow, one at a time (${ALONE})`, 'ms', one.p99, null),
      row('waiting', `p50 time to answer the PIN of an evicted flow, one at a time (${ALONE})`, 'ms', one.p50, null),
      row('waiting', `p99 time to answer the PIN of an evicted flow, ${BURST} at once`, 'ms', r.p99, null),
      row('waiting', `p50 time to answer the PIN of an evicted flow, ${BURST} at once`, 'ms', r.p50, null),
      row('waiting', 'flows that did not reach awaiting_pin', 'flows', started.errors.length, null, {
        op: '<=',
        value: 0,
      }),
      ...stackCpuRows('waiting', 'card to awaiting_pin', { cpu, flows: refs.length }),
    ],
    distributions: [
      { label: 'PIN answer, evicted flow, one at a time: ours', latencies: alone.latencies },
      { label: `PIN answer, evicted flow, ${BURST} at once: ours`, latencies: resumed.latencies },
    ],
    details: { idleMiB, warmMiB, waitingMiB, peakMiB, startSeconds: (Date.now() - t0) / 1000 },
  };
}
