// ingress: signed E-1 webhooks through the receiver (signature checked on the raw bytes, body
// validated, deduplicated, then signalWithStart) against the same signalWithStart made directly
// from this process, to the same kind of workflow (the holder of a reference no flow owns yet).
import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'undici';
import { paymentWebhookSignal, paymentWorkflowId, type PaymentWebhookEvent } from '../../src/shared/payment-webhook';
import { paymentSearchAttributes } from '../../src/shared/search-attributes';
import { closedLoop, topErrors } from '../lib/load';
import { interleave, row, summarize, throughput } from '../lib/stats';
import { OURS_QUEUE, SECRET_KEY, type BenchStack } from '../lib/stack';
import { meterStackCpu, noCpu, stackCpuRows, type SideProcesses } from '../lib/stack-cpu';
import type { ScenarioResult } from './types';

function e1(ref: string): string {
  return JSON.stringify({
    Event: 'charge_successful',
    TransactionRef: ref,
    Body: {
      amount: 10000,
      transaction_ref: ref,
      gateway_ref: `${ref}_1_1`,
      transaction_status: 'Success',
      email: 'payer@example.com',
      merchant_id: 'SBN1EBZEQ8',
      currency: 'NGN',
      transaction_type: 'Card',
      merchant_amount: 9850,
      created_at: new Date().toISOString(),
      meta: {},
    },
  });
}

export async function ingress(
  stack: BenchStack,
  o: { rounds: number; perRound: number; concurrency: number },
  log: (s: string) => void,
): Promise<ScenarioResult> {
  const viaReceiver = async () => {
    const body = e1(`bi-${randomUUID()}`);
    const signature = createHmac('sha512', SECRET_KEY).update(body).digest('hex').toUpperCase();
    const res = await request(`${stack.receiverUrl}/webhooks`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-service-encrypted-body': signature },
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`receiver answered ${res.statusCode}`);
  };
  const raw = async () => {
    const ref = `bi-${randomUUID()}`;
    const event: PaymentWebhookEvent = {
      event: 'charge_successful',
      transactionRef: ref,
      amount: 10000,
      currency: 'NGN',
      transactionStatus: 'Success',
      transactionType: 'Card',
      isRecurring: false,
      gatewayRef: `${ref}_1_1`,
      merchantAmount: 9850,
      receivedAt: new Date().toISOString(),
    };
    await stack.starters.client.workflow.signalWithStart('unmatchedPaymentWebhookWorkflow', {
      workflowId: paymentWorkflowId(ref),
      taskQueue: OURS_QUEUE,
      args: [{}],
      signal: paymentWebhookSignal,
      signalArgs: [event],
      typedSearchAttributes: paymentSearchAttributes({
        flow: 'unmatched-webhook',
        reference: ref,
        status: 'unmatched',
        amount: 10000,
        currency: 'NGN',
      }),
    });
  };
  // Both sides end in a holder workflow on our worker; only the receiver side passes our receiver.
  const ours = {
    n: 0,
    ms: 0,
    lat: [] as number[],
    cpu: noCpu(),
    procs: { worker: stack.ours, receiver: stack.receiver } as SideProcesses,
  };
  const base = { n: 0, ms: 0, lat: [] as number[], cpu: noCpu(), procs: { worker: stack.ours } as SideProcesses };
  const errors: string[] = [];
  await closedLoop(o.concurrency, o.concurrency, viaReceiver); // warm-up
  await closedLoop(o.concurrency, o.concurrency, raw);
  for (let round = 0; round < o.rounds; round++) {
    const side = (fn: () => Promise<void>, acc: typeof ours) => async () => {
      const r = await meterStackCpu(stack, acc.procs, acc.cpu, () => closedLoop(o.perRound, o.concurrency, fn));
      acc.n += r.latencies.length;
      acc.ms += r.wallMs;
      acc.lat.push(...r.latencies);
      errors.push(...r.errors);
    };
    const [first, second] = interleave(round, side(viaReceiver, ours), side(raw, base));
    await first();
    await second();
    log(
      `  ingress round ${round + 1}/${o.rounds}: receiver ${throughput(ours.n, ours.ms).toFixed(0)}/s, raw ${throughput(base.n, base.ms).toFixed(0)}/s`,
    );
  }
  return {
    rows: [
      row(
        'ingress',
        'webhooks per second',
        'webhooks/s',
        throughput(ours.n, ours.ms),
        throughput(base.n, base.ms),
        { op: '>=', value: 0.9 },
        topErrors(errors).join(' | ') || undefined,
      ),
      row('ingress', 'p50 latency', 'ms', summarize(ours.lat).p50, summarize(base.lat).p50),
      ...stackCpuRows(
        'ingress',
        'webhook (receiver vs direct signal)',
        { cpu: ours.cpu, flows: ours.n },
        { cpu: base.cpu, flows: base.n },
      ),
    ],
    distributions: [],
  };
}
