// Concurrent VARIABLE debits over the balance (issue #29, behaviour 5), on the time-skipping server
// with activities that behave like the service and count every D3. Two debitMandate Updates with
// different idempotency keys, each within the remaining balance but together over it, are both
// ACCEPTED (each passed the Update validator, which sees the balance before either debit) before
// either debit has finished; the balance re-check under the mandate's lock is then the only guard.
// Exactly one D3 is sent; the other Update fails OverBalance and no money moves for it.
//
// Determinism: the first D3 is held at a gate until both Updates are accepted, so both validators
// certainly ran while the balance was still whole, whichever Update took the lock first.
import { randomBytes, randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import {
  cancelMandateUpdate,
  debitKeyReference,
  debitMandateUpdate,
  mandateStateQuery,
  mandateWorkflowId,
  submitMandateOtpUpdate,
  type MandateDebit,
  type MandateInput,
  type MandateState,
} from '../../src/shared/mandate';
import { createWorkerGroup } from '../../src/workers/worker-group';
import type { MandateDebitAnswer, MandateDebitRequest } from '../../src/activities/mandate';
import { eventually } from '../support/polling';
import { workflowBundle } from '../support/stack';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { applyFakeDebit, DAY, type MandateTestActivities as Activities } from './helpers';

const env = useTimeSkippingEnv({ quietRuntime: true });
let now: number;
beforeEach(async () => {
  now = await env.currentTimeMs();
});

/** A claim-check handle's shape; these fake activities never open one. */
const handle = () => `cc_${randomBytes(16).toString('base64url')}`;

/** The service for one mandate: OTP 123456 approves it; D3 debits its balance (and refuses beyond it); every D3 recorded. */
function fakeService() {
  const d3: MandateDebitRequest[] = [];
  const applied = new Map<string, number>();
  const mandate = { id: '', ref: '', balance: 0, total: 0, status: 'none' };
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const activities: Partial<Activities> = {
    async createMandate(input: MandateInput) {
      Object.assign(mandate, {
        id: `MD-${input.mandateRef}`,
        ref: input.mandateRef,
        balance: input.amount,
        status: 'initiated',
      });
      return { mandateId: mandate.id, sessionToken: 'session' };
    },
    async validateMandateOtp() {
      mandate.status = 'approved';
      return { mandateReferenceNumber: 'MRN1' };
    },
    async resendMandateOtp() {},
    async debitMandate(req): Promise<MandateDebitAnswer> {
      d3.push(req);
      await gate; // held until the test has both Updates accepted
      applyFakeDebit(mandate, req, applied);
      return { status: 'success', serviceStatus: 'success', amount: req.amount };
    },
    async lookupTransaction(ref) {
      const amount = applied.get(ref);
      return amount !== undefined ? { found: true, status: 'Success', amount } : { found: false };
    },
    async cancelMandate() {
      mandate.status = 'cancelled';
      return { cancelled: true, alreadyCancelled: false };
    },
    async getMandate(id) {
      return { mandateId: id, status: mandate.status, balance: mandate.balance, totalDebited: mandate.total };
    },
    async findMandateByRef() {
      return mandate.id
        ? { mandateId: mandate.id, status: mandate.status, balance: mandate.balance, totalDebited: mandate.total }
        : undefined;
    },
  };
  return { activities, d3, mandate, open };
}

const variableMandate = (amount: number): MandateInput => ({
  mandateRef: `M${randomUUID().slice(0, 8)}`,
  debitType: 'variable',
  amount,
  accountNumber: '0123456789',
  bankCode: '058',
  description: 'Gym',
  startDate: new Date(now).toISOString().slice(0, 10),
  endDate: new Date(now + 80 * 365 * DAY).toISOString().slice(0, 10),
  customerEmail: 'c@example.com',
  customer: { bvnHandle: handle(), firstName: 'Ada', lastName: 'Obi', address: '1 Way', phone: '08012345678' },
});

const state = (h: WorkflowHandle) => h.query(mandateStateQuery);

async function approvedMandate(taskQueue: string, input: MandateInput): Promise<WorkflowHandle> {
  const h = await env.client.workflow.start('mandateWorkflow', {
    workflowId: mandateWorkflowId(input.mandateRef),
    taskQueue,
    args: [input],
  });
  await eventually(
    () => state(h),
    (s: MandateState) => s.status === 'awaiting_otp',
    { timeoutMs: 30_000, intervalMs: 25, description: 'awaiting_otp' },
  );
  await h.executeUpdate(submitMandateOtpUpdate, { args: [handle()] });
  return h;
}

/** The debitMandate Updates the workflow accepted (their validator passed), from its history, by key. */
async function acceptedDebits(h: WorkflowHandle): Promise<unknown[]> {
  const history = await h.fetchHistory();
  const converter = env.client.options.loadedDataConverter.payloadConverter;
  return (history.events ?? [])
    .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input)
    .filter((i) => i?.name === debitMandateUpdate.name)
    .map((i) => converter.fromPayload(i!.args!.payloads![0]!))
    .sort((x, y) =>
      String((x as { idempotencyKey: string }).idempotencyKey).localeCompare(
        (y as { idempotencyKey: string }).idempotencyKey,
      ),
    );
}

describe('two VARIABLE debits at once, each within the balance, together over it', () => {
  it('both pass the validator; exactly one D3 is sent, the other is refused as over the balance', async () => {
    const service = fakeService();
    const input = variableMandate(500_000);
    const taskQueue = `mandate-concurrent-${randomUUID()}`;
    // A worker per queue (the mandate's D3 runs on <queue>-money): the project's worker group.
    const worker = await createWorkerGroup({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: service.activities,
    });
    await worker.runUntil(async () => {
      const h = await approvedMandate(taskQueue, input);
      expect(await state(h)).toMatchObject({ status: 'approved', balance: 500_000 });

      // Both requested at the same moment, each 300,000 of the 500,000 left.
      const [a, b] = await Promise.all(
        ['order-a', 'order-b'].map((idempotencyKey) =>
          h.startUpdate(debitMandateUpdate, {
            args: [{ amount: 300_000, idempotencyKey }],
            waitForStage: WorkflowUpdateStage.ACCEPTED,
          }),
        ),
      );
      // One D3 is in flight, held at the gate; both Updates are accepted (a validator's refusal
      // would leave no accepted event): each passed the validator against the whole balance.
      await eventually(() => service.d3.length >= 1, { description: 'the first D3' });
      expect(await acceptedDebits(h)).toEqual([
        { amount: 300_000, idempotencyKey: 'order-a' },
        { amount: 300_000, idempotencyKey: 'order-b' },
      ]);
      service.open();

      const outcomes = await Promise.all(
        [a, b].map((u) =>
          u.result().then(
            (debit: MandateDebit) => ({ debit }),
            (err: unknown) => ({ err }),
          ),
        ),
      );
      // Exactly one D3 was sent.
      expect(service.d3.map((r) => r.reference)).toHaveLength(1);
      const debited = outcomes.filter((o): o is { debit: MandateDebit } => 'debit' in o);
      const refused = outcomes.filter((o): o is { err: unknown } => 'err' in o);
      expect(debited).toHaveLength(1);
      expect(refused).toHaveLength(1);

      // It was the debit that succeeded.
      const won = debited[0]!.debit;
      expect(won).toMatchObject({ status: 'success', amount: 300_000, kind: 'requested' });
      expect(['order-a', 'order-b'].map((k) => debitKeyReference(input.mandateRef, k))).toContain(won.reference);
      expect(service.d3[0]).toMatchObject({ reference: won.reference, amount: 300_000 });

      // The other: refused as over the balance, by the workflow (not by the service).
      const err = refused[0]!.err;
      expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((err as WorkflowUpdateFailedError).cause).toMatchObject({
        type: 'OverBalance',
        message: 'amount 300000 exceeds the remaining balance 200000',
      });

      expect(await state(h)).toMatchObject({ balance: 200_000, totalDebited: 300_000, debitCount: 1 });
      expect(service.mandate).toMatchObject({ balance: 200_000, total: 300_000 });
      await h.executeUpdate(cancelMandateUpdate);
    });
  });
});
