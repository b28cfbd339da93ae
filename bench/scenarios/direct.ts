// direct: the card flow (PIN then OTP) with the sandbox answering every API call after 200 ms,
// against the same four calls (B1, B2 PIN, B2 OTP, verify) made in sequence from this script.
// What the orchestration adds to a payment's wall time when the service, not the worker, is slow.
// The overhead scenario's hand-written Temporal worker runs in the same rounds as a reference row:
// what Temporal itself (its round trips per start, Update and activity) adds over the script.
import { createBaselineActivities } from '../baseline/activities';
import { closedLoop, topErrors } from '../lib/load';
import { interleave, row, summarize } from '../lib/stats';
import { BASELINE_SECRET_KEY, sandboxAdmin, type BenchStack } from '../lib/stack';
import { meterStackCpu, noCpu, stackCpuRows, type SideProcesses } from '../lib/stack-cpu';
import { SANDBOX_OTP, SANDBOX_PIN } from '../../src/sandbox';
import { baselineCard, baselineCardInput, oursCard, uid } from './flows';
import type { ScenarioResult } from './types';

export async function direct(
  stack: BenchStack,
  o: { rounds: number; flowsPerRound: number; concurrency: number; latencyMs: number },
  log: (s: string) => void,
): Promise<ScenarioResult> {
  // The script is another merchant of the sandbox, as the baseline is: its webhooks go to the
  // baseline's receiver, never to ours.
  const calls = createBaselineActivities({ baseUrl: stack.sandboxUrl, secretKey: BASELINE_SECRET_KEY });
  const script = async () => {
    const ref = uid('bd');
    if ((await calls.chargeCard(baselineCardInput(ref))) !== 'ValidatePin') throw new Error('B1 did not ask for a PIN');
    if ((await calls.authorizeCard(ref, { pin: SANDBOX_PIN })) !== 'ValidateOTP')
      throw new Error('B2 did not ask for the OTP');
    await calls.authorizeCard(ref, { otp: SANDBOX_OTP });
    const verified = await calls.verify(ref);
    if (verified !== 'Success') throw new Error(`verify answered ${verified}`);
  };
  // Every API path (not the admin API) answers after latencyMs.
  await sandboxAdmin(stack, 'POST', '/faults', { path: '^/(?!__admin)', kind: 'latency', latencyMs: o.latencyMs });
  const ours: number[] = [];
  const base: number[] = [];
  const temporalOnly: number[] = [];
  const errors: string[] = [];
  const cpu = { ours: noCpu(), script: noCpu(), temporalOnly: noCpu() };
  const measure =
    (into: number[], procs: SideProcesses, acc: typeof cpu.ours, flow: () => Promise<unknown>) => async () => {
      const r = await meterStackCpu(stack, procs, acc, () => closedLoop(o.flowsPerRound, o.concurrency, flow));
      into.push(...r.latencies);
      errors.push(...r.errors);
    };
  const oursProcs = { worker: stack.ours, receiver: stack.receiver };
  const baseProcs = { worker: stack.baseline, receiver: stack.baselineReceiver };
  try {
    await closedLoop(o.concurrency, o.concurrency, () => oursCard(stack)); // warm-up
    await closedLoop(o.concurrency, o.concurrency, () => baselineCard(stack));
    for (let round = 0; round < o.rounds; round++) {
      const [first, second] = interleave(
        round,
        measure(ours, oursProcs, cpu.ours, () => oursCard(stack)),
        measure(base, { receiver: stack.baselineReceiver }, cpu.script, script),
      );
      await first();
      await second();
      await measure(temporalOnly, baseProcs, cpu.temporalOnly, () => baselineCard(stack))();
      log(
        `  direct round ${round + 1}/${o.rounds}: ours p50 ${summarize(ours).p50.toFixed(0)} ms, direct p50 ${summarize(base).p50.toFixed(0)} ms, hand-written Temporal worker p50 ${summarize(temporalOnly).p50.toFixed(0)} ms`,
      );
    }
  } finally {
    await sandboxAdmin(stack, 'DELETE', '/faults');
  }
  const so = summarize(ours);
  const sb = summarize(base);
  return {
    rows: [
      row(
        'direct',
        `card p50 latency at ${o.latencyMs} ms per call`,
        'ms',
        so.p50,
        sb.p50,
        { op: '<=', value: 1.15 },
        topErrors(errors).join(' | ') || undefined,
      ),
      row('direct', `card p99 latency at ${o.latencyMs} ms per call`, 'ms', so.p99, sb.p99),
      // Reference (no target): the minimal hand-written Temporal worker's card flow against the same script.
      row(
        'direct',
        `hand-written Temporal worker's card p50 at ${o.latencyMs} ms per call (reference)`,
        'ms',
        summarize(temporalOnly).p50,
        sb.p50,
      ),
      // CPU per flow: ours against the direct script, and the hand-written worker against the script.
      ...stackCpuRows(
        'direct',
        'card (ours vs script)',
        { cpu: cpu.ours, flows: ours.length },
        { cpu: cpu.script, flows: base.length },
      ),
      ...stackCpuRows(
        'direct',
        'card (hand-written Temporal worker vs script)',
        { cpu: cpu.temporalOnly, flows: temporalOnly.length },
        { cpu: cpu.script, flows: base.length },
      ),
    ],
    distributions: [
      { label: 'card at 200 ms/call: ours', latencies: ours },
      { label: 'card at 200 ms/call: direct script', latencies: base },
      { label: 'card at 200 ms/call: hand-written Temporal worker', latencies: temporalOnly },
    ],
  };
}
