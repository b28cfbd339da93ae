// A mandate that runs to its end tells the merchant: `mandate.ended` (docs/events.md), with why in
// data.status (balance_spent, end_date_reached; schedule_finished is in mandate-fixed-observe) and
// the total debited, once, under a stable id, behind the patch `mandate-ended-event`. A mandate
// that ends otherwise (cancelled) sends none; one without a target asks no patch; one that completed
// before the patch replays without the event (test/replay/histories/mandate-completed-before-ended-event,
// recorded on d205cf6, before the patch, by a one-off run of a mandate like this file's balance-spent case).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { MerchantEvent } from '../../src/notify';
import { merchantEventId } from '../../src/shared/merchant-event';
import {
  cancelMandateUpdate,
  debitMandateUpdate,
  mandateStateQuery,
  mandateWorkflowId,
  resolveDebitUpdate,
  submitMandateOtpUpdate,
  type MandateInput,
  type MandateState,
} from '../../src/shared/mandate';
import type { mandateWorkflow } from '../../src/workflows/mandate';
import { rawHistoryText } from '../support/history';
import { eventually } from '../support/polling';
import { HISTORIES_DIR, replayHistory } from '../support/replay';
import { useFixedMandateWithEvents } from './fixed-service-env';
import { DAY, day, mandateInput } from './helpers';

const PATCH = 'mandate-ended-event';
const { taskQueue, service, env, listener } = useFixedMandateWithEvents('mandate-ended');

let now: number;
beforeEach(async () => {
  now = await env.currentTimeMs();
});
afterEach(() => expect(listener.refused).toEqual([]));

const handle = () => `cc_${randomUUID().replace(/-/g, '').slice(0, 22)}`;
const input = (over: Partial<MandateInput> = {}): MandateInput =>
  mandateInput(now, handle(), {
    mandateRef: `ME${randomUUID().slice(0, 8)}`,
    amount: 100_000,
    notify: { url: listener.url },
    ...over,
  });

async function approved(i: MandateInput): Promise<WorkflowHandle<typeof mandateWorkflow>> {
  const h = await env.client.workflow.start<typeof mandateWorkflow>('mandateWorkflow', {
    workflowId: mandateWorkflowId(i.mandateRef),
    taskQueue,
    args: [i],
  });
  await eventually(
    () => h.query(mandateStateQuery),
    (s: MandateState) => s.status === 'awaiting_otp',
    { timeoutMs: 30_000, intervalMs: 25, description: 'awaiting the OTP' },
  );
  await h.executeUpdate(submitMandateOtpUpdate, { args: [handle()] });
  return h;
}

const debit = (h: WorkflowHandle, amount: number, key: string) =>
  h.executeUpdate(debitMandateUpdate, { args: [{ amount, idempotencyKey: key }] });

/** The mandate's verified events in sequence order, once `count` arrived and a few deliveries' time passed. */
async function eventsOf(mandateRef: string, count: number): Promise<MerchantEvent[]> {
  await listener.delivered(mandateRef, count);
  await new Promise((r) => setTimeout(r, 300));
  return listener.eventsOf(mandateRef).sort((a, b) => a.data.sequence - b.data.sequence);
}

const summary = (es: MerchantEvent[]) => es.map((e) => [e.type, e.data.status, e.data.amount, e.data.sequence]);

/** The local-activity markers (event hand-overs) and patch markers of a flow's history. */
async function markers(h: WorkflowHandle): Promise<string[]> {
  return ((await h.fetchHistory()).events ?? []).flatMap((e) =>
    e.markerRecordedEventAttributes?.markerName ? [e.markerRecordedEventAttributes.markerName] : [],
  );
}

describe('mandate.ended: an approved mandate that runs to its end tells the merchant why, once', () => {
  it('the balance spent: mandate.ended balance_spent after the last debit, with the total debited, under its stable id', async () => {
    const i = input();
    const h = await approved(i);
    expect((await debit(h, 60_000, 'k1')).status).toBe('success');
    expect((await debit(h, 40_000, 'k2')).status).toBe('success');
    expect(await h.result()).toMatchObject({ status: 'completed', endReason: 'balance spent', balance: 0 });

    const events = await eventsOf(i.mandateRef, 4);
    expect(summary(events)).toEqual([
      ['mandate.approved', 'approved', undefined, 1],
      ['mandate.debit.succeeded', 'success', 60_000, 2],
      ['mandate.debit.succeeded', 'success', 40_000, 3],
      ['mandate.ended', 'balance_spent', 100_000, 4],
    ]);
    expect(events[3]).toMatchObject({
      id: merchantEventId(mandateWorkflowId(i.mandateRef), 'mandate.ended'),
      data: { version: 1, flow: 'mandate', reference: i.mandateRef, reason: 'balance spent', currency: 'NGN' },
    });
    expect(events[3].data.part).toBeUndefined();
    // The patch's marker, and one hand-over per event.
    const names = await markers(h);
    expect(names.filter((n) => n === 'core_local_activity')).toHaveLength(4);
    expect(await rawHistoryText(h)).toContain(PATCH);
  });

  it('the end date reached: mandate.ended end_date_reached with what was debited, the balance left unspent', async () => {
    const i = input({ endDate: day(now) });
    const h = await approved(i);
    expect((await debit(h, 30_000, 'k1')).status).toBe('success');
    // The flow wakes at the end of the day (the test server skips to it once nothing else runs).
    expect(await h.result()).toMatchObject({ status: 'completed', endReason: 'end date reached', balance: 70_000 });
    const events = await eventsOf(i.mandateRef, 3);
    expect(summary(events)).toEqual([
      ['mandate.approved', 'approved', undefined, 1],
      ['mandate.debit.succeeded', 'success', 30_000, 2],
      ['mandate.ended', 'end_date_reached', 30_000, 3],
    ]);
    expect(events[2].data.reason).toBe('end date reached');
  });

  it('a debit parked when the end date passes: the mandate completes, and mandate.ended comes after the debit is settled', async () => {
    // No pause before a lost answer's requery: Updates do not skip time on the test server.
    const i = input({ endDate: day(now), debitSettleMs: 0 });
    const h = await approved(i);
    service.knobs.loseNextDebit = true;
    service.knobs.verifyDown = true;
    expect((await debit(h, 30_000, 'k1')).status).toBe('outcome_unknown');
    await env.sleep(2 * DAY); // past the end date: completed, held open by the parked debit
    expect(await h.query(mandateStateQuery)).toMatchObject({ status: 'completed', endReason: 'end date reached' });
    await new Promise((r) => setTimeout(r, 300));
    expect(listener.eventsOf(i.mandateRef).map((e) => e.type)).not.toContain('mandate.ended');
    service.knobs.verifyDown = false;
    await h.executeUpdate(resolveDebitUpdate, {
      args: [{ debitKey: 'k1', outcome: 'not_debited', reason: 'bank statement shows nothing', operator: 'ops-1' }],
    });
    expect(await h.result()).toMatchObject({ status: 'completed', totalDebited: 0, unresolvedDebits: [] });
    expect(summary(await eventsOf(i.mandateRef, 4))).toEqual([
      ['mandate.approved', 'approved', undefined, 1],
      ['mandate.debit.needs_attention', 'outcome_unknown', 30_000, 2],
      ['mandate.debit.failed', 'failed', 30_000, 3],
      ['mandate.ended', 'end_date_reached', 0, 4],
    ]);
  });

  it('a mandate cancelled before its end sends mandate.cancelled and no mandate.ended, and asks no patch', async () => {
    const i = input();
    const h = await approved(i);
    await debit(h, 30_000, 'k1');
    await h.executeUpdate(cancelMandateUpdate);
    expect((await h.result()).status).toBe('cancelled');
    const events = await eventsOf(i.mandateRef, 3);
    expect(summary(events).map(([type]) => type)).toEqual([
      'mandate.approved',
      'mandate.debit.succeeded',
      'mandate.cancelled',
    ]);
    expect(await rawHistoryText(h)).not.toContain(PATCH);
  });

  it('without a target (no notify, a worker without NOTIFY_URL): the flow learns it at its first event and asks no patch at its end', async () => {
    const { notify: _none, ...i } = input();
    const h = await approved(i);
    await debit(h, 100_000, 'k1');
    expect(await h.result()).toMatchObject({ status: 'completed', endReason: 'balance spent' });
    const names = await markers(h);
    expect(names.filter((n) => n === 'core_local_activity')).toHaveLength(1); // the approval's "not configured"
    expect(await rawHistoryText(h)).not.toContain(PATCH);
    expect(listener.eventsOf(i.mandateRef)).toEqual([]);
  });

  it('a mandate with a target that completed before the patch replays without the event', async () => {
    const name = 'mandate-completed-before-ended-event';
    const text = readFileSync(join(HISTORIES_DIR, `${name}.json`), 'utf8');
    // Recorded with events on (its approval and its debit were handed over), and no patch marker.
    expect(text.match(/"markerName": "core_local_activity"/g)).toHaveLength(2);
    expect(text).not.toContain(Buffer.from(`"${PATCH}"`).toString('base64'));
    await expect(replayHistory(name)).resolves.toBeUndefined();
  });
});
