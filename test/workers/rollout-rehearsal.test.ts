// The rollout rehearsed with real processes (issue #41 §3): a dev server whose versions drain within
// seconds, the sandbox, and each worker version as its own OS process (the production entry,
// `node dist/workers/main.js`; version 2's "image" is a copy of dist/ with its own workflow bundle).
// Version 1 runs a card payment waiting for its OTP, a POS remote request polling its terminal and a
// vend whose purchase is in flight (PINNED), and AUTO_UPGRADE flows: an approved mandate waiting for
// its next debit, a recurring plan waiting for its next cycle, and a virtual-account credit whose
// hand-over to the merchant's endpoint (down until version 1 is stopped) is being retried (the POS
// request's terminal lock is another). Version 2 changes the vend (no patch: it is pinned), the
// mandate and the recurring plan (behind a patch each): test/workers/fixtures/rehearsal. A version 2
// whose mandate change is not patched is refused by the replay gate; the good one is ramped, made
// current, and version 1 drains before its process is stopped. The deployment is named as the worker
// controller names one, `<Kubernetes namespace>/<name>`.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../../src/codec/data-converter';
import { SANDBOX_OTP, MANDATE_OTP, TEST_CARDS } from '../../src/sandbox';
import { PROJECT_ROOT } from '../../src/stack/temporal-binaries';
import type { RunningServices } from '../../src/stack/services';
import type { AppConfig } from '../../src/config/config';
import { getCardPaymentState, startCardPayment, submitOtp } from '../../src/starters/card-payment';
import { debitMandate, getMandateState, startMandate, submitMandateOtp } from '../../src/starters/mandate';
import { waitForState } from '../../src/starters/payment-common';
import { startVend } from '../../src/starters/vending';
import { startPosRemoteRequest } from '../../src/starters/pos-remote';
import {
  cancelRecurring,
  firstPaymentCheckoutUrl,
  getRecurringState,
  startRecurring,
} from '../../src/starters/recurring';
import { virtualAccountCreditHandle } from '../../src/starters/virtual-account-credit';
import type { VirtualAccountCreditOutcome } from '../../src/shared/virtual-account-credit';
import { paymentWorkflowId } from '../../src/shared/payment-webhook';
import { cycleReference } from '../../src/shared/recurring';
import { posRemoteStateQuery } from '../../src/shared/pos-remote';
import { downloadHistories, replayAll } from '../../src/workers/replay';
import {
  autoUpgradeTypes,
  describeRouting,
  rollout,
  RolloutStopped,
  stuckFlows,
  type RolloutIo,
  type RolloutPlan,
} from '../../src/workers/rollout';
import { PLAIN_BUNDLE_INTERCEPTOR_MODULES, PRELOADED_WORKFLOW_MODULES } from '../../src/workers/worker';
import { diskCachedBundle } from '../support/bundle-cache';
import { cardPayment, electricityVend, newMandateRequest, vaCustomer } from '../support/flow-inputs';
import { eventually } from '../support/polling';
import { payCheckoutByCard, SandboxAdmin } from '../support/sandbox-admin';
import { startServices, testConfig } from '../support/stack';
import { DIST, ensureBuilt } from '../ship/build';
import { startWorkerProcess, stopWorkerProcess, workerEnvironment, type WorkerProcess } from '../ship/processes';
import { MANDATE_PATCH_ID, RECURRING_PATCH_ID } from './fixtures/rehearsal/shared';
import { startFastDrainServer } from './fast-drain-server';
import { MerchantEndpoint } from './merchant-endpoint';

jest.setTimeout(180_000);

const { EventType, PendingActivityState, WorkflowTaskFailedCause } = temporal.api.enums.v1;
const VEND_PATH = '^/vending/utilities/electricity$';
const POS_COMPLETE_AFTER_MS = 60_000;
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };
// As the worker controller names it: `<Kubernetes namespace>/<name>`.
const deploymentName = `rehearsal-${randomUUID().slice(0, 8)}/payflow-worker`;
const CREDIT_RECEIVED = 'virtual_account.credit.received';
const V1 = '1.0.0';
const V2 = '2.0.0';
const V2_UNPATCHED = '2.0.0-unpatched';

let server: ChildProcess;
let address: string;
let services: RunningServices;
let admin: SandboxAdmin;
let config: AppConfig;
const images: string[] = [];
const workers: WorkerProcess[] = [];
/** The deployment's events endpoint (every worker's NOTIFY_URL): what the merchant saw. */
const merchant = new MerchantEndpoint();

async function startServer(): Promise<void> {
  const started = await startFastDrainServer();
  address = started.address;
  server = started.child;
  await started.connection.close();
}

/** A version's workflow bundle, as `npm run build` writes dist/workflow-bundle.js, kept on disk between runs. */
function versionBundle(fixture: string): Promise<WorkflowBundleWithSourceMap> {
  const workflowsPath = require.resolve(`./fixtures/rehearsal/${fixture}`);
  return diskCachedBundle(`rehearsal|${workflowsPath}`, workflowsPath, () =>
    bundleWorkflowCode({
      workflowsPath,
      failureConverterPath: FAILURE_CONVERTER_PATH,
      workflowInterceptorModules: PLAIN_BUNDLE_INTERCEPTOR_MODULES,
      preloadModules: PRELOADED_WORKFLOW_MODULES,
      logger: quiet,
    }),
  );
}

const PREBUILT = [join(DIST, 'workflow-bundle.js'), join(DIST, 'workflow-bundle-traced.js')];

/** Another version's image: dist/ with `bundle` as its workflow bundle (node_modules and package.json as here). */
function image(bundle: WorkflowBundleWithSourceMap): string {
  const root = mkdtempSync(join(tmpdir(), 'payflow-rehearsal-'));
  images.push(root);
  cpSync(DIST, join(root, 'dist'), { recursive: true, filter: (src) => !PREBUILT.includes(src) });
  writeFileSync(join(root, 'dist', 'workflow-bundle.js'), bundle.code);
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), readFileSync(join(PROJECT_ROOT, 'package.json')));
  return join(root, 'dist');
}

function worker(buildId: string, distDir?: string, extra: Record<string, string> = {}): WorkerProcess {
  const env = workerEnvironment(config, services.sandboxUrl!, {
    WORKER_DEPLOYMENT_NAME: deploymentName,
    WORKER_BUILD_ID: buildId,
    WORKER_MAKE_CURRENT: 'off',
    NOTIFY_URL: merchant.url,
    NOTIFY_SECRET: merchant.secret,
    ...extra,
  });
  const w = startWorkerProcess(`worker ${buildId}`, env, distDir ? { distDir } : 'dist');
  workers.push(w);
  return w;
}

let setUp: Promise<void> | undefined;
afterAll(async () => {
  // A set-up still running (its hook timed out) would start the server after this: wait for it first.
  await setUp?.catch(() => undefined);
  await Promise.all(workers.map((w) => stopWorkerProcess(w, 5_000)));
  await services?.stop();
  await merchant.close().catch(() => undefined);
  server?.kill('SIGTERM');
  for (const root of images) rmSync(root, { recursive: true, force: true });
});

let v2Bundle: WorkflowBundleWithSourceMap;
let unpatchedBundle: WorkflowBundleWithSourceMap;
// Set-up that a warm CI run has cached (dist/, the two bundles on disk): the server and the sandbox.
beforeAll(() => (setUp = setUpStack()), 600_000);
async function setUpStack(): Promise<void> {
  [v2Bundle, unpatchedBundle] = await Promise.all([
    versionBundle('v2-workflows'),
    versionBundle('v2-unpatched-workflows'),
    ensureBuilt().then(() => undefined),
    startServer(),
    merchant.start(),
  ]);
  config = testConfig({ TEMPORAL_ADDRESS: address, WORKER_VERSIONING: 'on' });
  // The POS terminal completes a remote request only when the test advances the sandbox's clock.
  services = await startServices(config, {
    withoutWorker: true,
    sandbox: { posRemoteCompleteAfterMs: POS_COMPLETE_AFTER_MS },
  });
  admin = new SandboxAdmin(services.sandboxUrl!);
}

const buildIdsOfTasks = async (h: WorkflowHandle) =>
  ((await h.fetchHistory()).events ?? [])
    .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId ?? '');
const eventsOf = async (h: WorkflowHandle, type: temporal.api.enums.v1.EventType) =>
  ((await h.fetchHistory()).events ?? []).filter((e) => e.eventType === type);
/**
 * The flow's failed workflow tasks, but for UnhandledCommand: the server's "new events arrived while
 * the task completed, run it again" (a signal or Update racing the task), which is no code's failure.
 */
const failedTasksOf = async (h: WorkflowHandle) =>
  (await eventsOf(h, EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED))
    .map((e) => e.workflowTaskFailedEventAttributes)
    .filter((a) => a?.cause !== WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND)
    .map((a) => `${h.workflowId}: ${a?.failure?.message}`);
/** The ids of the patches the flow's code took (its core_patch markers). */
const patchIdsOf = async (h: WorkflowHandle) =>
  (await eventsOf(h, EventType.EVENT_TYPE_MARKER_RECORDED))
    .map((e) => e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data)
    .filter((d): d is Uint8Array => !!d)
    .map((d) => (JSON.parse(Buffer.from(d).toString('utf8')) as { id: string }).id);
const versionOf = async (h: WorkflowHandle) =>
  (await h.describe()).raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId;
/** Every flow that carries `reference` (PaymentReference): a credit's own, and any it handed work to. */
const flowsOfReference = async (reference: string): Promise<WorkflowHandle[]> => {
  const flows: WorkflowHandle[] = [];
  for await (const wf of services.client.workflow.list({ query: `PaymentReference = '${reference}'` }))
    flows.push(services.client.workflow.getHandle(wf.workflowId, wf.runId));
  return flows;
};
/** A plan charging every hour: nothing but its first payment happens during the rehearsal. */
const recurringPlan = (planRef: string) => ({
  planRef,
  amount: 120_000,
  currency: 'NGN' as const,
  email: 'ada@example.com',
  intervalMs: 3_600_000,
});
/** A payer's transfer into a new customer account: the credit's transaction reference. */
async function transferIntoVirtualAccount(amount: string): Promise<string> {
  const { api } = services;
  const account = await api.virtualAccounts.createCustomer(
    vaCustomer(`CUST${randomUUID().replace(/-/g, '').slice(0, 12)}`),
  );
  const accountNumber = account.data.virtual_account_number;
  await api.virtualAccounts.simulatePayment({ virtual_account_number: accountNumber, amount });
  const rows = (await api.virtualAccounts.merchantTransactionsFiltered({ virtualAccount: accountNumber, perPage: 5 }))
    .data.rows;
  return rows[0]!.transaction_reference;
}

it('version 2 ships with flows in flight: pinned flows finish on 1; the mandate, the recurring plan and the credit hand-over move to 2; 1 drains before its workers stop; an unpatched 2 is refused', async () => {
  const startedAt = Date.now();
  const client = services.client;
  const taskQueue = config.temporal.taskQueue;

  // Version 1 runs and is current (the first deploy); the two candidates start beside it and poll.
  const v1 = worker(V1, undefined, { WORKER_MAKE_CURRENT: 'on' });
  const v2 = worker(V2, image(v2Bundle));
  const unpatched = worker(V2_UNPATCHED, image(unpatchedBundle));
  await v1.ready;
  await eventually(async () => (await describeRouting(client, deploymentName)).current === V1, {
    timeoutMs: 30_000,
    ignoreErrors: true,
    description: `${V1} is current`,
  });

  // On version 1: a card payment waiting for its OTP, an approved mandate waiting for its next debit
  // (and, below, a vend whose purchase is in flight as the rollout starts).
  const run = randomUUID().slice(0, 6);
  const card = cardPayment(`rehearsal-card-${run}`, TEST_CARDS.otpOnly, 5_000);
  const cardHandle = await startCardPayment(services.starters, { ...card, webhookGraceMs: 1_000 });
  const mandate = newMandateRequest();
  const oldMandate = await startMandate(services.starters, mandate);
  await waitForState(
    () => getCardPaymentState(services.starters, card.transactionRef),
    (s) => s.status === 'awaiting_otp',
  );
  await eventually(
    () => getMandateState(services.starters, mandate.mandateRef),
    (s) => s.status === 'awaiting_otp',
    {
      timeoutMs: 20_000,
      ignoreErrors: true,
      description: 'the mandate awaits its OTP',
    },
  );
  expect((await submitMandateOtp(services.starters, mandate.mandateRef, MANDATE_OTP)).status).toBe('approved');
  // A POS remote request polling its terminal (it starts the terminal's lock flow, AUTO_UPGRADE).
  const posRemote = await startPosRemoteRequest(services.starters, {
    terminal_id: '2SBX0001',
    reference: `rr${run}`,
    amount: 150_000,
    options: { pollIntervalMs: 200, heartbeatTimeout: '3s' },
  });
  const { requestRef } = await eventually(
    () => posRemote.query(posRemoteStateQuery),
    (st) => st.status === 'pending' && !!st.requestRef,
    { timeoutMs: 30_000, ignoreErrors: true, description: 'the POS remote request polls' },
  );
  // A recurring plan: its first payment made on 1 (it holds the token now), its next cycle an hour away.
  const planRef = `rehearsal-plan-${run}`;
  const oldPlan = await startRecurring(services.starters, recurringPlan(planRef));
  await payCheckoutByCard(await firstPaymentCheckoutUrl(services.starters, planRef));
  await eventually(
    () => getRecurringState(services.starters, planRef),
    (st) => st.status === 'active',
    { timeoutMs: 30_000, ignoreErrors: true, description: 'the recurring plan is active' },
  );
  for (const h of [cardHandle, oldMandate, posRemote, oldPlan]) expect(await versionOf(h)).toBe(V1);

  const lines: string[] = [];

  const io = (bundle: WorkflowBundleWithSourceMap): RolloutIo => ({
    client,
    say: (line) => void lines.push(line),
    // `npm run replay`'s gate (rollout-main.ts) with the candidate's bundle instead of this checkout's.
    replayGate: () =>
      replayAll(downloadHistories(client, { workflowTypes: autoUpgradeTypes(), perType: 20 }), {
        encryption: config.encryption,
        workflowBundle: bundle,
      }),
  });
  const plan = (to: string, over: Partial<RolloutPlan> = {}): RolloutPlan => ({
    deploymentName,
    to,
    ramp: [50],
    rampHoldMs: 1_000,
    maxFailureRate: 0.01,
    waitDrained: true,
    drainTimeoutMs: 60_000,
    pollersTimeoutMs: 30_000,
    pollMs: 500,
    ...over,
  });

  // The unpatched mandate change: refused before any ramp, version 1 stays current.
  await unpatched.ready;
  await expect(rollout(io(unpatchedBundle), plan(V2_UNPATCHED))).rejects.toThrow(RolloutStopped);
  const refused = lines.find((l) => l.startsWith('replay FAILED mandateWorkflow'));
  expect(refused).toMatch(/Nondeterminism|TMPRL1100/);
  expect(await describeRouting(client, deploymentName)).toMatchObject({ current: V1 });
  expect((await describeRouting(client, deploymentName)).ramping).toBeUndefined();
  await stopWorkerProcess(unpatched, 10_000);

  // Version 2: ramped, made current, version 1 drained. While it drains, the flows in flight go on.
  await v2.ready;
  // A vend on 1 whose purchase the service answers late: in flight when the rollout starts.
  await admin.fault({ method: 'POST', path: VEND_PATH, kind: 'latency', latencyMs: 15_000, count: 1 });
  const oldVend = await startVend(services.starters, electricityVend(`rehearsal-vend-1-${run}`));
  await eventually(
    async () => (await oldVend.describe()).raw.pendingActivities ?? [],
    (pending) =>
      pending.some(
        (p) =>
          p.activityType?.name === 'vendPurchase' && p.state === PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
      ),
    { timeoutMs: 30_000, description: 'the vend purchase is in flight' },
  );
  expect(await versionOf(oldVend)).toBe(V1);
  // A transfer into a virtual account, credited on 1; the merchant's endpoint is down for it, so its
  // hand-over is retried across the rollout (it comes back only once version 1 is gone).
  merchant.downFor.add(CREDIT_RECEIVED);
  const creditRef = await transferIntoVirtualAccount('2500.00');
  await eventually(
    () => merchant.attempts(creditRef, CREDIT_RECEIVED),
    (a) => a.length >= 1,
    { timeoutMs: 30_000, description: "the credit's first hand-over attempt (answered 503)" },
  );
  lines.length = 0;
  const shipped = rollout(io(v2Bundle), plan(V2));
  await eventually(() => lines.some((l) => l.startsWith(`${V2} is current`)), {
    timeoutMs: 60_000,
    description: `${V2} made current`,
  });
  const currentAt = Date.now();
  const openOnV1WhenCurrent = await Promise.all(
    [cardHandle, oldVend, posRemote].map(async (h) => (await h.describe()).status.name),
  );
  const newVend = await startVend(services.starters, electricityVend(`rehearsal-vend-2-${run}`));
  const newMandate = await startMandate(services.starters, newMandateRequest());
  const newPlanRef = `rehearsal-plan-2-${run}`;
  const newPlan = await startRecurring(services.starters, recurringPlan(newPlanRef));
  await firstPaymentCheckoutUrl(services.starters, newPlanRef); // its first task ran (2's code)
  await submitOtp(services.starters, card.transactionRef, SANDBOX_OTP);
  await admin.advanceClock(POS_COMPLETE_AFTER_MS); // the payer taps the card on the terminal
  await shipped;
  const drainedAt = Date.now();
  expect(v1.child.exitCode).toBeNull(); // it served its pinned flows to their end
  await stopWorkerProcess(v1, 30_000);
  const v1StoppedAt = Date.now();
  // The mandate and the plan started on 1 had no task since: 1 drained without them. The mandate's
  // next debit and the plan's cancellation run on 2; the merchant's endpoint is back, with 1 gone.
  for (const h of [oldMandate, oldPlan]) expect(await versionOf(h)).toBe(V1);
  merchant.downFor.delete(CREDIT_RECEIVED);
  await cancelRecurring(services.starters, planRef);
  const debit = await debitMandate(services.starters, mandate.mandateRef, 30_000, { idempotencyKey: `r-${run}` });

  expect(lines).toEqual(
    expect.arrayContaining([
      'ramping 50 % of new flows to 2.0.0; watching it for 1 s',
      `${V2} is current (was ${V1}): new flows start on it`,
      `${V1} is drained: its workers (payflow-worker-${V1}) may be stopped`,
    ]),
  );
  expect(lines.some((l) => /^replay: [1-9]\d* histories replayed, none failed$/.test(l))).toBe(true);
  // Pinned: the card payment and the vend were in flight when 2 became current, and finished on 1 (v1 code: no pause).
  expect(openOnV1WhenCurrent).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
  const [cardResult, oldVendResult, newVendResult, posResult] = await Promise.all([
    cardHandle.result(),
    oldVend.result(),
    newVend.result(),
    posRemote.result(),
  ]);
  expect(posResult.status).toBe('success');
  expect(cardResult.status).toBe('success');
  expect(oldVendResult.status).toBe('vended');
  expect(newVendResult.status).toBe('vended');
  for (const h of [cardHandle, oldVend, posRemote]) expect(new Set(await buildIdsOfTasks(h))).toEqual(new Set([V1]));
  expect(await eventsOf(oldVend, EventType.EVENT_TYPE_TIMER_STARTED)).toHaveLength(0);
  // New flows on 2, with version 2's code: the vend's pause, the mandate's patch.
  for (const h of [newVend, newMandate]) expect(new Set(await buildIdsOfTasks(h))).toEqual(new Set([V2]));
  expect(await eventsOf(newVend, EventType.EVENT_TYPE_TIMER_STARTED)).toHaveLength(1);
  expect(await patchIdsOf(newMandate)).toContain(MANDATE_PATCH_ID);
  // AUTO_UPGRADE: the mandate started on 1 moved to 2 with its next debit, kept its old path, and replays on 2.
  expect(await versionOf(oldMandate)).toBe(V2);
  const oldMandateTasks = await buildIdsOfTasks(oldMandate);
  expect(oldMandateTasks[0]).toBe(V1);
  expect(oldMandateTasks.at(-1)).toBe(V2);
  expect(await patchIdsOf(oldMandate)).not.toContain(MANDATE_PATCH_ID);
  const replayed = await replayAll(
    [{ name: mandate.mandateRef, workflowType: 'mandateWorkflow', history: await oldMandate.fetchHistory() }],
    { encryption: config.encryption, workflowBundle: v2Bundle },
  );
  expect(replayed).toEqual([{ name: mandate.mandateRef, workflowType: 'mandateWorkflow' }]);
  // AUTO_UPGRADE: the plan started on 1 moved to 2 with its cancellation (the token cancelled there),
  // kept its old path, and replays on 2; its first payment (a PINNED checkout) ran on 1 only. A new
  // plan runs 2's code.
  const planResult = await oldPlan.result();
  expect(planResult).toMatchObject({ status: 'cancelled', reason: 'token cancelled (A5)', cycle: 1 });
  const oldPlanTasks = await buildIdsOfTasks(oldPlan);
  expect([oldPlanTasks[0], oldPlanTasks.at(-1)]).toEqual([V1, V2]);
  expect(await patchIdsOf(oldPlan)).not.toContain(RECURRING_PATCH_ID);
  const firstPayment = client.workflow.getHandle(paymentWorkflowId(cycleReference(planRef, 1)));
  expect(new Set(await buildIdsOfTasks(firstPayment))).toEqual(new Set([V1]));
  expect(
    await replayAll(
      [{ name: planRef, workflowType: 'recurringChargeWorkflow', history: await oldPlan.fetchHistory() }],
      { encryption: config.encryption, workflowBundle: v2Bundle },
    ),
  ).toEqual([{ name: planRef, workflowType: 'recurringChargeWorkflow' }]);
  expect(new Set(await buildIdsOfTasks(newPlan))).toEqual(new Set([V2]));
  expect(await patchIdsOf(newPlan)).toContain(RECURRING_PATCH_ID);
  // The merchant is told of the plan's end once.
  const planEnded = await eventually(
    () => merchant.attempts(planRef, 'recurring.cancelled'),
    (a) => a.length > 0,
    { timeoutMs: 30_000, description: 'recurring.cancelled reaches the merchant' },
  );
  expect(planEnded.map((a) => a.status)).toEqual([204]);
  // The credit: recorded on 1, handed over once the merchant's endpoint was back (after 1 stopped),
  // so on 2; every attempt carried the same event id, one was taken. Whichever of its flows
  // carried the hand-over started on 1 and moved to 2.
  const creditOutcome = (await virtualAccountCreditHandle(
    services.starters,
    creditRef,
  ).result()) as VirtualAccountCreditOutcome;
  expect(creditOutcome).toMatchObject({ status: 'credited', credit: { transactionReference: creditRef } });
  await eventually(
    () => merchant.attempts(creditRef),
    (a) => a.some((r) => r.status === 204),
    { timeoutMs: 120_000, description: 'the credit handed over once the endpoint is back' },
  );
  const creditFlows = await flowsOfReference(creditRef);
  await Promise.all(creditFlows.map((h) => h.result()));
  const creditAttempts = merchant.attempts(creditRef); // all of them: its flows have ended
  expect(creditAttempts.map((a) => a.event!.type)).toEqual(creditAttempts.map(() => CREDIT_RECEIVED));
  expect(new Set(creditAttempts.map((a) => a.event!.id)).size).toBe(1);
  expect(creditAttempts.filter((a) => a.status === 204)).toHaveLength(1);
  expect(creditAttempts[0]).toMatchObject({ status: 503 });
  expect(creditAttempts[0]!.at).toBeLessThan(currentAt);
  expect(creditAttempts.find((a) => a.status === 204)!.at).toBeGreaterThan(v1StoppedAt);
  const movedCreditFlows: string[] = [];
  for (const h of creditFlows) {
    const tasks = await buildIdsOfTasks(h);
    if (tasks[0] === V1 && tasks.at(-1) === V2) movedCreditFlows.push(h.workflowId);
  }
  expect(movedCreditFlows).not.toEqual([]);
  // Nothing stuck, nothing paid twice.
  expect(await stuckFlows(client, [taskQueue], new Date(startedAt - 60_000))).toEqual([]);
  for (const h of [cardHandle, oldVend, newVend, oldMandate, newMandate, posRemote, oldPlan, newPlan, ...creditFlows])
    expect(await failedTasksOf(h)).toEqual([]);
  expect(merchant.unverified()).toEqual([]);
  expect(await admin.ledger({ reference: card.transactionRef })).toHaveLength(1);
  expect(await admin.ledger({ reference: oldVendResult.reference!, kind: 'vend' })).toHaveLength(1);
  expect(await admin.ledger({ reference: newVendResult.reference!, kind: 'vend' })).toHaveLength(1);
  expect(await admin.ledger({ reference: debit.reference })).toHaveLength(1);
  expect(await admin.ledger({ reference: requestRef!, kind: 'pos_remote' })).toHaveLength(1);
  expect(await admin.ledger({ reference: cycleReference(planRef, 1) })).toHaveLength(1);
  expect(await admin.ledger({ reference: cycleReference(planRef, 2) })).toHaveLength(0);
  expect(v1StoppedAt).toBeGreaterThanOrEqual(drainedAt);

  const onV1 = [cardHandle, oldVend, posRemote, firstPayment].map((h) => h.workflowId);
  const onV2 = [newVend, newMandate, newPlan].map((h) => h.workflowId);
  const moved = [oldMandate.workflowId, oldPlan.workflowId, ...movedCreditFlows];
  console.log(
    [
      `rollout rehearsal (${Math.round((Date.now() - startedAt) / 1000)} s):`,
      `  ${V2_UNPATCHED} refused by the replay gate: ${/\[TMPRL1100\][^:]*/.exec(refused!)?.[0]} (${oldMandate.workflowId})`,
      `  finished on ${V1} (pinned): ${onV1.join(', ')}`,
      `  on ${V2}: ${onV2.join(', ')}`,
      `  moved from ${V1} to ${V2} (auto-upgrade): ${moved.join(', ')} (the mandate and the plan replay on ${V2})`,
      `  the credit ${creditRef}: ${creditAttempts.length} hand-over attempts under one event id, taken once, after ${V1} stopped`,
      `  ${V1} drained, then its process stopped; no stuck flow; every payment once in the ledger`,
    ].join('\n'),
  );
  for (const h of [oldMandate, newMandate, newPlan]) await h.terminate('the rehearsal is over').catch(() => undefined);
});
