// FIXED mandates observed, and every mandate outcome told to the merchant, on the time-skipping
// server. D1 gives the service the FIXED schedule, so by default the flow sends no D3 of its own:
// after each date it reads D5 until the service's total_debited grows, and records that growth as
// the date's debit (kind observed). `fixedDebits: 'send'` keeps sending D3 from the flow's timers.
// Each outcome (approved, expired, cancelled, rejected, each debit's success / failure / park)
// reaches a real HTTP endpoint as an event whose signature `notify listen`'s listener verifies.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { MerchantEvent } from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import {
  cancelMandateUpdate,
  debitMandateUpdate,
  fixedSchedule,
  mandateStateQuery,
  mandateWorkflowId,
  resolveDebitUpdate,
  submitMandateOtpUpdate,
  type FixedMandateSettings,
  type MandateInput,
  type MandateState,
} from '../../src/shared/mandate';
import type { mandateWorkflow } from '../../src/workflows/mandate';
import { rawHistoryText } from '../support/history';
import { eventually } from '../support/polling';
import { useFixedMandateWithEvents } from './fixed-service-env';
import { DAY, day, mandateInput } from './helpers';

const HOUR = 3600 * 1000;
const { taskQueue, service, env, listener } = useFixedMandateWithEvents('mandate-observe');
const { received, refused } = listener;

let now: number;
beforeEach(async () => {
  now = await env.currentTimeMs();
});

const input = (over: Partial<MandateInput> = {}): MandateInput =>
  mandateInput(now, `cc_${randomUUID().replace(/-/g, '').slice(0, 22)}`, {
    mandateRef: `MO${randomUUID().slice(0, 8)}`,
    amount: 300_000,
    notify: { url: listener.url },
    ...over,
  });

/** A monthly FIXED mandate of three 100 000-kobo dates from tomorrow, ending the day after the third. */
function fixedInput(over: Partial<MandateInput> = {}): MandateInput & { fixed: FixedMandateSettings } {
  const fixed: FixedMandateSettings = {
    frequency: 'MONTHLY',
    interval: 1,
    initialDebitAmount: 100_000,
    initialDebitDate: day(now + DAY),
  };
  const endDate = day(fixedSchedule(fixed, '2199-12-31', 3)[2] + DAY);
  return { ...input({ debitType: 'fixed', fixed, endDate, ...over }), fixed };
}

const start = (i: MandateInput) =>
  env.client.workflow.start<typeof mandateWorkflow>('mandateWorkflow', {
    workflowId: mandateWorkflowId(i.mandateRef),
    taskQueue,
    args: [i],
  });

function waitFor(h: WorkflowHandle, ok: (s: MandateState) => boolean, what: string): Promise<MandateState> {
  return eventually(() => h.query(mandateStateQuery), ok, { timeoutMs: 30_000, intervalMs: 25, description: what });
}

async function approved(i: MandateInput): Promise<WorkflowHandle<typeof mandateWorkflow>> {
  const h = await start(i);
  await waitFor(h, (s) => s.status === 'awaiting_otp', 'awaiting the OTP');
  await h.executeUpdate(submitMandateOtpUpdate, { args: [`cc_${randomUUID().replace(/-/g, '').slice(0, 22)}`] });
  return h;
}

/** The verified events of a mandate, in the order of their sequence, once `count` have arrived. */
async function eventsOf(mandateRef: string, count: number): Promise<MerchantEvent[]> {
  const mine = () => received.filter((e) => e.data.reference === mandateRef);
  await eventually(mine, (es) => es.length >= count, {
    timeoutMs: 30_000,
    description: `${count} events for ${mandateRef}`,
  });
  // Nothing more arrives than expected (a few deliveries' time).
  await new Promise((r) => setTimeout(r, 300));
  return mine().sort((a, b) => a.data.sequence - b.data.sequence);
}

const summary = (es: MerchantEvent[]) =>
  es.map((e) => [e.type, e.data.status, e.data.part, e.data.amount, e.data.sequence] as const);

afterEach(() => expect(refused).toEqual([]));

describe('FIXED: the service debits on its own schedule; the flow observes (the default)', () => {
  it('sends no D3; each date is read in D5 until the service has debited, recorded and told as a debit; a date the service skipped is failed', async () => {
    const i = fixedInput();
    const dates = fixedSchedule(i.fixed, i.endDate);
    expect(dates).toHaveLength(3);
    const h = await approved(i);
    // The service debits 8 h into the first and third dates (read at 6 h: nothing yet; at 12 h: seen) and skips the second.
    service.debitsOnItsOwn(i.mandateRef, [
      { at: dates[0] + 8 * HOUR, amount: 100_000 },
      { at: dates[2] + 8 * HOUR, amount: 100_000 },
    ]);
    const final = await h.result();

    expect(service.d3.filter((d) => d.reference.startsWith(i.mandateRef))).toEqual([]);
    expect(final).toMatchObject({
      status: 'completed',
      endReason: 'schedule finished',
      totalDebited: 200_000,
      balance: 100_000,
      debitCount: 0,
      unresolvedDebits: [],
    });
    expect(service.record(i.mandateRef)).toMatchObject({ total: 200_000, balance: 100_000 });
    expect(
      final.recentDebits.map((d) => [d.reference, d.kind, d.status, d.amount, d.scheduledFor, d.confirmedBy]),
    ).toEqual([
      [`${i.mandateRef}-F1`, 'observed', 'success', 100_000, day(dates[0]), 'observed'],
      [`${i.mandateRef}-F2`, 'observed', 'failed', 100_000, day(dates[1]), 'observed'],
      [`${i.mandateRef}-F3`, 'observed', 'success', 100_000, day(dates[2]), 'observed'],
    ]);
    expect(final.recentDebits[1].error).toMatch(
      /did not show in the mandate list \(D5\) by .* no money moved as far as the service shows/,
    );
    // The patch marker is in the history: this run observes, and a replay of it does too.
    expect(await rawHistoryText(h)).toContain('mandate-fixed-observed');

    const events = await eventsOf(i.mandateRef, 5);
    expect(summary(events)).toEqual([
      ['mandate.approved', 'approved', undefined, undefined, 1],
      ['mandate.debit.succeeded', 'success', `${i.mandateRef}-F1`, 100_000, 2],
      ['mandate.debit.failed', 'failed', `${i.mandateRef}-F2`, 100_000, 3],
      ['mandate.debit.succeeded', 'success', `${i.mandateRef}-F3`, 100_000, 4],
      ['mandate.ended', 'schedule_finished', undefined, 200_000, 5],
    ]);
    expect(events[1]).toMatchObject({
      id: merchantEventId(mandateWorkflowId(i.mandateRef), 'mandate.debit.succeeded', `${i.mandateRef}-F1`),
      data: { version: 1, flow: 'mandate', reference: i.mandateRef, currency: 'NGN' },
    });
  });

  it('D5 down through a date: told as needs attention, and the next date counts what the service debited meanwhile', async () => {
    const i = fixedInput({ observeReadsMs: [HOUR, 2 * HOUR] });
    const dates = fixedSchedule(i.fixed, i.endDate);
    const h = await approved(i);
    service.debitsOnItsOwn(
      i.mandateRef,
      dates.map((at) => ({ at: at + 30 * 60 * 1000, amount: 100_000 })),
    );
    service.knobs.d5DownBefore = dates[0] + 3 * HOUR;
    const final = await h.result();
    expect(final).toMatchObject({ status: 'completed', totalDebited: 300_000, balance: 0 });
    expect(final.recentDebits.map((d) => [d.reference, d.status, d.amount])).toEqual([
      [`${i.mandateRef}-F2`, 'success', 200_000],
      [`${i.mandateRef}-F3`, 'success', 100_000],
    ]);
    expect(final.failures.join('\n')).toContain('the service debited 200000 kobo for');
    expect(final.failures.join('\n')).toContain(
      `${i.mandateRef}-F1: the mandate list (D5) could not be read after ${day(dates[0])}`,
    );
    const events = await eventsOf(i.mandateRef, 5);
    expect(summary(events).slice(1)).toEqual([
      ['mandate.debit.needs_attention', 'outcome_unknown', `${i.mandateRef}-F1`, undefined, 2],
      ['mandate.debit.succeeded', 'success', `${i.mandateRef}-F2`, 200_000, 3],
      ['mandate.debit.succeeded', 'success', `${i.mandateRef}-F3`, 100_000, 4],
      ['mandate.ended', 'balance_spent', undefined, 300_000, 5],
    ]);
  });

  it('a mandate the service rejected is seen at the next read: the flow ends, told as mandate.rejected', async () => {
    const i = fixedInput();
    const h = await approved(i);
    service.endAtService(i.mandateRef, 'rejected');
    const final = await h.result();
    expect(final).toMatchObject({ status: 'cancelled', endReason: 'rejected at the service', totalDebited: 0 });
    expect(service.d3.filter((d) => d.reference.startsWith(i.mandateRef))).toEqual([]);
    const events = await eventsOf(i.mandateRef, 2);
    expect(summary(events)).toEqual([
      ['mandate.approved', 'approved', undefined, undefined, 1],
      ['mandate.rejected', 'cancelled', undefined, undefined, 2],
    ]);
    expect(events[1].data.reason).toBe('rejected at the service');
  });
});

describe("FIXED with fixedDebits 'send': the flow sends each date's debit itself", () => {
  it('sends one D3 per date from its own timers (no patch marker), and tells each debit; the event sequence goes on across continue-as-new', async () => {
    const i = fixedInput({ fixedDebits: 'send', debitsPerRun: 2 });
    const h = await approved(i);
    const final = await h.result();
    expect(service.d3.filter((d) => d.reference.startsWith(i.mandateRef)).map((d) => d.reference)).toEqual([
      `${i.mandateRef}-D1`,
      `${i.mandateRef}-D2`,
      `${i.mandateRef}-D3`,
    ]);
    expect(final).toMatchObject({ status: 'completed', totalDebited: 300_000, balance: 0, debitCount: 3 });
    expect(final.recentDebits.every((d) => d.kind === 'scheduled' && d.status === 'success')).toBe(true);
    expect(await rawHistoryText(h)).not.toContain('mandate-fixed-observed');
    const desc = await h.describe();
    expect(desc.runId).not.toBe(desc.raw.workflowExecutionInfo?.firstRunId); // continued as new after two debits
    const events = await eventsOf(i.mandateRef, 5);
    expect(summary(events).slice(1)).toEqual([
      ...[1, 2, 3].map((n) => ['mandate.debit.succeeded', 'success', `${i.mandateRef}-D${n}`, 100_000, n + 1]),
      ['mandate.ended', 'balance_spent', undefined, 300_000, 5],
    ]);
  });
});

describe('every mandate outcome is told to the merchant', () => {
  it('VARIABLE: a debit succeeded, one refused, one parked then resolved by an operator, then cancelled', async () => {
    // No pause before a lost answer's requery: Updates do not skip time on the test server.
    const i = input({ debitSettleMs: 0 });
    const h = await approved(i);
    const debit = (key: string, amount: number) =>
      h.executeUpdate(debitMandateUpdate, { args: [{ amount, idempotencyKey: key }] });
    const first = await debit('k1', 50_000);
    expect(first.status).toBe('success');
    service.knobs.refuseNextDebit = 'Mandate balance is lesser than debit amount';
    const refusedDebit = await debit('k2', 40_000);
    expect(refusedDebit.status).toBe('failed');
    service.knobs.loseNextDebit = true;
    service.knobs.verifyDown = true;
    const parked = await debit('k3', 30_000);
    expect(parked.status).toBe('outcome_unknown');
    service.knobs.verifyDown = false;
    await h.executeUpdate(resolveDebitUpdate, {
      args: [{ debitKey: 'k3', outcome: 'not_debited', reason: 'bank statement shows nothing', operator: 'ops-1' }],
    });
    await h.executeUpdate(cancelMandateUpdate);
    const final = await h.result();
    expect(final.status).toBe('cancelled');

    const events = await eventsOf(i.mandateRef, 6);
    expect(summary(events)).toEqual([
      ['mandate.approved', 'approved', undefined, undefined, 1],
      ['mandate.debit.succeeded', 'success', first.reference, 50_000, 2],
      ['mandate.debit.failed', 'failed', refusedDebit.reference, 40_000, 3],
      ['mandate.debit.needs_attention', 'outcome_unknown', parked.reference, 30_000, 4],
      ['mandate.debit.failed', 'failed', parked.reference, 30_000, 5],
      ['mandate.cancelled', 'cancelled', undefined, undefined, 6],
    ]);
    expect(events[4].data.reason).toContain('resolved by ops-1: bank statement shows nothing');
    expect(events[2].data.reason).toContain('Mandate balance is lesser than debit amount');
    // Two events of one debit (parked, then settled) have their own ids.
    expect(new Set(events.map((e) => e.id)).size).toBe(6);
  });

  it('a cancel the service refuses: mandate.needs_attention (the mandate goes on); the next cancel: mandate.cancelled', async () => {
    const i = input();
    const h = await approved(i);
    service.knobs.cancelRefusal = 'Mandate has a debit in progress';
    await expect(h.executeUpdate(cancelMandateUpdate)).rejects.toThrow();
    service.knobs.cancelRefusal = undefined;
    expect((await h.query(mandateStateQuery)).status).toBe('approved');
    await h.executeUpdate(cancelMandateUpdate);
    expect((await h.result()).status).toBe('cancelled');
    const events = await eventsOf(i.mandateRef, 3);
    expect(summary(events)).toEqual([
      ['mandate.approved', 'approved', undefined, undefined, 1],
      ['mandate.needs_attention', 'approved', undefined, undefined, 2],
      ['mandate.cancelled', 'cancelled', undefined, undefined, 3],
    ]);
    expect(events[1].data.reason).toBe(
      'cancel requested, but the service did not cancel the mandate: Mandate has a debit in progress',
    );
  });

  it('no OTP in time: mandate.expired', async () => {
    const i = input({ otpTimeoutMs: 60_000 });
    const final = await (await start(i)).result();
    expect(final.status).toBe('expired');
    expect(summary(await eventsOf(i.mandateRef, 1))).toEqual([['mandate.expired', 'expired', undefined, undefined, 1]]);
  });

  it('without notify, on a worker without NOTIFY_URL: the flow asks once where events go, and sends none', async () => {
    const { notify: _none, ...i } = input({ otpTimeoutMs: 60_000 });
    const h = await start(i);
    expect((await h.result()).status).toBe('expired');
    // One hand-over (a local activity) that answers "not configured"; the flow asks no more.
    const handOvers = ((await h.fetchHistory()).events ?? []).filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    expect(handOvers).toHaveLength(1);
    expect(await rawHistoryText(h)).toContain('emitMerchantEvent');
    await new Promise((r) => setTimeout(r, 300));
    expect(received.filter((e) => e.data.reference === i.mandateRef)).toEqual([]);
  });
});
