// POS remote requests in reconciliation (#26 s4), end to end on the dev server against the sandbox:
// a remote request flow publishes its request_ref (PaymentServiceReference), under which A6 lists
// the request, so reconciliation compares the two: a request approved on the terminal matches its
// flow; a flow that says failed while the service shows the request paid is a finding; a request
// no flow of ours published (made outside our flows) is named not comparable, never guessed.
import { randomUUID } from 'node:crypto';
import { startPosRemoteRequest } from '../../src/starters/pos-remote';
import { reconcile } from '../../src/starters/reconciliation';
import { posRemoteStateQuery } from '../../src/shared/pos-remote';
import { formatDay, type ReconciliationReport } from '../../src/shared/reconciliation';
import { PaymentServiceReference, paymentSearchAttributes } from '../../src/shared/search-attributes';
import { eventually } from '../support/polling';
import { testConfig, useServices } from '../support/stack';

const COMPLETE_AFTER_MS = 60_000;
const config = testConfig();
const env = useServices(config, undefined, { sandbox: { posRemoteCompleteAfterMs: COMPLETE_AFTER_MS } });
const tq = () => config.temporal.taskQueue;
const ctx = () => ({ client: env.services.client, taskQueue: tq() });
const run = (): Promise<ReconciliationReport> =>
  reconcile(ctx(), { from: formatDay(Date.now()), to: formatDay(Date.now()), currencies: ['NGN'], markFlows: false });

/** Waits until visibility lists `query` on this task queue (it is eventually consistent). */
const visible = (query: string) =>
  eventually(
    async () => {
      for await (const w of env.services.client.workflow.list({ query: `TaskQueue = "${tq()}" AND ${query}` }))
        return w;
      return undefined;
    },
    { timeoutMs: 20_000 },
  );

let approvedRef: string;

it('a request approved on the terminal: the flow publishes its request_ref, and reconciliation matches the two', async () => {
  const h = await startPosRemoteRequest(env.services.starters, {
    reference: `rr-${randomUUID().slice(0, 8)}`,
    terminal_id: '2SBX0001',
    amount: 123_400,
    options: { pollIntervalMs: 200, heartbeatTimeout: '3s' },
  });
  const { requestRef } = await eventually(
    async () => {
      const s = await h.query(posRemoteStateQuery);
      return s.status === 'pending' && s.requestRef ? s : undefined;
    },
    { timeoutMs: 30_000, description: 'the request pending at the service' },
  );
  await env.admin.advanceClock(COMPLETE_AFTER_MS); // the payer taps the card
  expect((await h.result()).status).toBe('success');
  approvedRef = requestRef!;
  expect((await h.describe()).typedSearchAttributes.get(PaymentServiceReference)).toBe(approvedRef);
  await visible(`PaymentServiceReference = "${approvedRef}" AND ExecutionStatus = "Completed"`);

  const report = await run();
  expect(report.findings.filter((f) => f.reference === approvedRef)).toEqual([]);
  expect(report.totals).toMatchObject({ rows: 1, matched: 1, notComparable: 0, ourSuccessesChecked: 1 });
});

it('a flow that says failed while the service shows its request paid is a finding; a request no flow published is not comparable', async () => {
  // A request made outside our flows, approved on the terminal.
  // The service's records made from here on are dated ahead of real time (a finding below depends on
  // it), whether or not the case above ran.
  await env.admin.advanceClock(COMPLETE_AFTER_MS);
  const outside = await env.services.api.posRemote.create({ terminal_id: '2SBX0002', amount: 5_000 });
  // A request whose flow ended failed (its state forced through its search attributes), approved at the service.
  const forced = await env.services.api.posRemote.create({ terminal_id: '2SBX0002', amount: 7_700 });
  await env.admin.advanceClock(COMPLETE_AFTER_MS);
  const workflowId = `forced-pos-remote-${randomUUID().slice(0, 8)}`;
  const handle = await env.services.client.workflow.start('forcedStateFlow', {
    workflowId,
    taskQueue: tq(),
    args: [],
    startDelay: '1 hour', // never runs: only its search attributes matter
    typedSearchAttributes: paymentSearchAttributes({
      flow: 'pos-remote',
      reference: `rr-${randomUUID().slice(0, 8)}`,
      status: 'failed',
      amount: 7_700,
      currency: 'NGN',
      serviceReference: forced.data.request_ref,
    }),
  });
  await handle.terminate('test: a POS remote flow forced to failed');
  await visible(`WorkflowId = "${workflowId}" AND ExecutionStatus = "Terminated"`);

  const report = await run();
  // Every window read, and no request left pending at the service: otherwise the finding below cannot be (and a
  // failure here says which, where the finding's absence alone would not).
  expect(report.windows.filter((w) => w.error)).toEqual([]);
  expect(report.totals.open).toBe(0);
  // The sandbox's clock was moved ahead before the request was made, so the service's record is younger
  // than the forced flow's end: money that came after the flow's verdict (late_payment), the finding the rule gives.
  expect(report.findings.find((f) => f.reference === forced.data.request_ref)).toMatchObject({
    kind: 'late_payment',
    flow: 'pos-remote',
    serviceStatus: 'success',
    serviceAmount: 7_700,
  });
  expect(report.findings.filter((f) => f.reference === outside.data.request_ref)).toEqual([]);
  expect(report.findings.filter((f) => f.reference === approvedRef)).toEqual([]);
  expect(report.windows[0].notComparableReasons).toEqual({
    'POS remote request that no flow of ours published (PaymentServiceReference)': 1,
  });
});
