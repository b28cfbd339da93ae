// The credit workflow's waits on the time-skipping server, with scripted activities: a freeze
// watched for hours or days, a hand-over that keeps failing for days, an operator's retry.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type {
  createVirtualAccountCreditActivities,
  CreditFreezeLookup,
} from '../../src/activities/virtual-account-credit';
import {
  retryCreditHandoffUpdate,
  VA_CREDIT_DEFAULTS,
  virtualAccountCreditStateQuery,
  virtualAccountCreditWorkflowId,
  type CreditedVirtualAccountTransaction,
  type CreditHandoff,
  type VirtualAccountCredit,
  type VirtualAccountCreditOutcome,
} from '../../src/shared/virtual-account-credit';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { activitiesByWorkflow } from '../support/activities-by-workflow';
import { vaCredit } from '../support/flow-inputs';

type Activities = ReturnType<typeof createVirtualAccountCreditActivities>;

// One worker for the file: a credit's activities are those of the scripted service its test started it with.
const byFlow = activitiesByWorkflow<Activities>([
  'recordVirtualAccountCredit',
  'readVirtualAccountCreditFreeze',
  'handOverVirtualAccountCredit',
]);
const TASK_QUEUE = `va-ts-${randomUUID()}`;
const env = useTimeSkippingEnv({ worker: { taskQueue: TASK_QUEUE, activities: () => byFlow.activities } });

function service(script: {
  freeze: (n: number) => CreditFreezeLookup | 'down';
  handoff?: (n: number) => 'ok' | 'fail';
}) {
  const calls = { freeze: 0, handoff: 0, freezeTimes: [] as number[], handoffKeys: [] as string[] };
  const activities: Partial<Activities> = {
    async recordVirtualAccountCredit(credit) {
      const record: CreditedVirtualAccountTransaction = {
        ...credit,
        fieldsSource: 'service-query',
        creditedAt: new Date().toISOString(),
      };
      return { status: 'credited', credit: record, deliveries: 1 };
    },
    async readVirtualAccountCreditFreeze() {
      calls.freeze += 1;
      calls.freezeTimes.push(await env.currentTimeMs());
      const answer = script.freeze(calls.freeze);
      if (answer === 'down')
        throw ApplicationFailure.create({ type: 'ServiceError', message: 'C5 down', nonRetryable: true });
      return answer;
    },
    async handOverVirtualAccountCredit(req): Promise<CreditHandoff> {
      calls.handoff += 1;
      calls.handoffKeys.push(req.credit.transactionReference);
      if ((script.handoff?.(calls.handoff) ?? 'ok') === 'fail')
        throw ApplicationFailure.create({ type: 'CreditHandoffFailed', message: 'merchant backend down' });
      return {
        status: 'delivered',
        idempotencyKey: req.credit.transactionReference,
        attempts: calls.handoff,
        at: new Date().toISOString(),
      };
    },
  };
  return { activities, calls };
}

const credit = (over: Partial<VirtualAccountCredit> = {}) => vaCredit(`REF${randomUUID().slice(0, 8)}`, over);

/** Starts the credit `c` on the file's worker, its activities those of `s`. */
const start = (s: ReturnType<typeof service>, c: VirtualAccountCredit) =>
  env.client.workflow.start('virtualAccountCreditWorkflow', {
    workflowId: byFlow.script(virtualAccountCreditWorkflowId(c.transactionReference), s.activities),
    taskQueue: TASK_QUEUE,
    args: [c],
  });

const frozen: CreditFreezeLookup = {
  known: true,
  frozen: { freezeTransactionRef: 'FRZ1', reason: 'Suspicious transaction' },
};

describe("the credit workflow's waits on the time-skipping server, with scripted activities", () => {
  it('frozen at the service: held back, asked again every hour, handed over once the service shows it released', async () => {
    const s = service({ freeze: (n) => (n < 4 ? frozen : { known: true }) });
    const c = credit();
    const result = (await (await start(s, c)).result()) as VirtualAccountCreditOutcome;
    expect(result).toMatchObject({
      status: 'credited',
      freeze: { freezeTransactionRef: 'FRZ1', confirmedBy: 'service', releasedAt: expect.any(String) },
      handoff: { status: 'delivered' },
    });
    expect(s.calls.handoff).toBe(1);
    expect(s.calls.freeze).toBe(4);
    expect(s.calls.freezeTimes[1]! - s.calls.freezeTimes[0]!).toBeGreaterThanOrEqual(
      VA_CREDIT_DEFAULTS.freezeCheckEveryMs,
    );
  });

  it('still frozen when the watch period ends: ends frozen, never handed over', async () => {
    const s = service({ freeze: () => frozen });
    const result = (await (await start(s, credit())).result()) as VirtualAccountCreditOutcome;
    expect(result).toMatchObject({ status: 'frozen', freeze: { confirmedBy: 'service' } });
    expect(result.freeze?.releasedAt).toBeUndefined();
    expect(s.calls.handoff).toBe(0);
    // The default 30-day watch is 720 hourly checks, each an activity: CPU-bound, so slow on a loaded machine.
  }, 180_000);

  it('a freeze named only by the (unsigned) notification while C5 cannot answer is believed: held back until the service answers "not frozen"', async () => {
    const s = service({ freeze: (n) => (n < 3 ? 'down' : { known: true }) });
    const result = (await (
      await start(s, credit({ frozenHint: { freezeTransactionRef: 'FRZ9', reason: 'AML review' } }))
    ).result()) as VirtualAccountCreditOutcome;
    expect(result).toMatchObject({
      status: 'credited',
      freeze: { freezeTransactionRef: 'FRZ9', confirmedBy: 'notification', releasedAt: expect.any(String) },
    });
    expect(s.calls.handoff).toBe(1);
  });

  it('a freeze hint the service contradicts ("not frozen") is ignored: handed over at once', async () => {
    const s = service({ freeze: () => ({ known: true }) });
    const result = (await (
      await start(s, credit({ frozenHint: { freezeTransactionRef: 'FORGED' } }))
    ).result()) as VirtualAccountCreditOutcome;
    expect(result.freeze).toBeUndefined();
    expect(result).toMatchObject({ status: 'credited', handoff: { status: 'delivered' } });
    expect(s.calls.freeze).toBe(1);
  });

  it('a hand-over that fails for its whole retry period: handoff_failed, until an operator asks again; the same idempotency key every time', async () => {
    let down = true;
    const s = service({ freeze: () => ({ known: true }), handoff: () => (down ? 'fail' : 'ok') });
    const c = credit();
    const handle = await start(s, c);
    // The retries run for days of workflow time; skip ahead until the workflow gives up.
    await env.sleep(VA_CREDIT_DEFAULTS.handoffRetryForMs + 60_000);
    const state = await handle.query(virtualAccountCreditStateQuery);
    expect(state.status).toBe('handoff_failed');
    await expect(
      handle.executeUpdate(retryCreditHandoffUpdate, { args: [{ operator: '', reason: 'x' }] }),
    ).rejects.toMatchObject({ cause: { message: expect.stringMatching(/operator: required/) } });
    down = false;
    await handle.executeUpdate(retryCreditHandoffUpdate, {
      args: [{ operator: 'ops@merchant', reason: 'backend fixed' }],
    });
    const result = (await handle.result()) as VirtualAccountCreditOutcome;
    expect(result).toMatchObject({ status: 'credited', handoff: { status: 'delivered' } });
    expect(new Set(s.calls.handoffKeys)).toEqual(new Set([c.transactionReference]));
    expect(s.calls.handoff).toBeGreaterThan(2);
  });
});
