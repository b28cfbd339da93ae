// Recurring money on Temporal Schedules, against the dev server, the worker and the sandbox over
// HTTP: every run keys its money request by its nominal period, so a backfill over periods already
// run (a catch-up after an outage, an operator's mistake) and a manual trigger move no money twice.
import { randomUUID } from 'node:crypto';
import type { ScheduleHandle } from '@temporalio/client';
import type { RunningServices } from '../../src/stack/services';
import { waitForState } from '../../src/starters/payment-common';
import { firstPaymentCheckoutUrl, startRecurring } from '../../src/starters/recurring';
import { getMandateState, startMandate, submitMandateOtp } from '../../src/starters/mandate';
import {
  createMandateDebitSchedule,
  createRecurringChargeSchedule,
  describeSchedule,
  moveRecurringPlanToSchedule,
} from '../../src/starters/scheduled-money';
import { StarterInputError } from '../../src/starters/input-error';
import { getRecurringState } from '../../src/starters/recurring';
import { MANDATE_OTP, SANDBOX_OTP, SANDBOX_PIN, TEST_CARDS } from '../../src/sandbox';
import { scheduledChargeReference, type ScheduledRunResult } from '../../src/shared/scheduled-money';
import { startServices, testConfig } from '../support/stack';
import { SandboxAdmin } from '../support/sandbox-admin';
import { recordHistory } from '../support/replay';
import { newMandateRequest } from '../support/flow-inputs';

jest.setTimeout(120_000);

const config = testConfig();
let services: RunningServices;
let admin: SandboxAdmin;
beforeAll(async () => {
  services = await startServices(config);
  admin = new SandboxAdmin(services.sandboxUrl!);
}, 60_000);
afterAll(() => services?.stop());

const HOUR = 3_600_000;
const post = async (url: string, body: unknown) =>
  fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

/** A card token, the way a merchant gets one: the first payment of a recurring plan (one cycle). */
async function cardToken(): Promise<string> {
  const planRef = `tok-${randomUUID().slice(0, 8)}`;
  const handle = await startRecurring(services.starters, {
    planRef,
    amount: 100_000,
    currency: 'NGN',
    email: 'ada@example.com',
    intervalMs: 1_000,
    maxCycles: 1,
  });
  const url = await firstPaymentCheckoutUrl(services.starters, planRef);
  await post(`${url}/card`, { number: TEST_CARDS.pinThenOtp, cvv: '123', expiry_month: '12', expiry_year: '29' });
  await post(`${url}/authorize`, { pin: SANDBOX_PIN });
  await post(`${url}/authorize`, { otp: SANDBOX_OTP });
  const state = await handle.result();
  expect(state.tokenId).toBeDefined();
  return state.tokenId!;
}

/**
 * Backfills [start, end) and returns the results of the runs it started (read from the Schedule's recent actions);
 * with `record`, the first run's history becomes the replay fixture of that name (when missing).
 */
async function backfill(
  handle: ScheduleHandle,
  start: Date,
  end: Date,
  before: number,
  runs: number,
  record?: string,
): Promise<ScheduledRunResult[]> {
  await handle.backfill([{ start, end, overlap: 'ALLOW_ALL' as never }]);
  const d = await waitForState(
    () => handle.describe(),
    (x) => x.info.recentActions.length >= before + runs,
    { timeoutMs: 30_000 },
  );
  const fresh = d.info.recentActions.slice(before, before + runs);
  const handles = fresh.map((a) =>
    services.client.workflow.getHandle(a.action.workflow.workflowId, a.action.workflow.firstExecutionRunId),
  );
  const results = await Promise.all(handles.map((h) => h.result() as Promise<ScheduledRunResult>));
  if (record) await recordHistory(handles[0], record);
  return results;
}

describe('recurring money on Temporal Schedules', () => {
  it('recurring card charges: one A4 per period under <plan>-S<period>; the same periods backfilled again charge nothing (duplicate); pause and the next runs show', async () => {
    const tokenId = await cardToken();
    const planRef = `sch-${randomUUID().slice(0, 8)}`;
    const handle = await createRecurringChargeSchedule(services.starters, {
      planRef,
      tokenId,
      amount: 120_000,
      currency: 'NGN',
      everyMs: HOUR,
      startAt: '2026-01-01T00:00:00Z',
    });
    try {
      const start = new Date(Date.UTC(2026, 0, 1, 0, 0)); // three hourly periods long past
      const end = new Date(start.getTime() + 3 * HOUR - 60_000); // a backfill's end is inclusive
      const first = await backfill(handle, start, end, 0, 3, 'scheduled-token-charge');
      expect(first.map((r) => r.status).sort()).toEqual(['success', 'success', 'success']);
      const refs = first.map((r) => r.reference).sort();
      expect(refs).toEqual(
        [0, 1, 2].map((h) => scheduledChargeReference(planRef, new Date(start.getTime() + h * HOUR))).sort(),
      );
      for (const ref of refs) expect(await admin.ledger({ reference: ref })).toHaveLength(1);

      // A catch-up over the same periods (an outage, a second backfill): the periods are taken.
      const again = await backfill(handle, start, end, 3, 3);
      expect(again.map((r) => r.status)).toEqual(['duplicate', 'duplicate', 'duplicate']);
      for (const ref of refs) expect(await admin.ledger({ reference: ref })).toHaveLength(1);

      await handle.pause('holiday');
      const view = await describeSchedule(services.starters, handle.scheduleId);
      expect(view).toMatchObject({ paused: true, note: 'holiday' });
      expect(view.recentRuns).toHaveLength(6);
      await handle.unpause();
      expect((await describeSchedule(services.starters, handle.scheduleId)).nextRuns.length).toBeGreaterThan(0);
    } finally {
      await handle.delete();
    }
  });

  it('fixed mandate debits: one D3 per period through the mandate flow (the period is the idempotency key); a second backfill debits nothing more', async () => {
    const input = newMandateRequest({ description: 'Gym' });
    await startMandate(services.starters, input);
    await waitForState(
      () => getMandateState(services.starters, input.mandateRef),
      (s) => s.status === 'awaiting_otp',
      { timeoutMs: 30_000 },
    );
    await submitMandateOtp(services.starters, input.mandateRef, MANDATE_OTP);
    const handle = await createMandateDebitSchedule(services.starters, {
      mandateRef: input.mandateRef,
      amount: 200_000,
      cron: '0 9 1 * *',
      paused: true,
    });
    try {
      const start = new Date(Date.UTC(2026, 0, 1, 0, 0));
      const end = new Date(Date.UTC(2026, 2, 2, 0, 0)); // 1 Jan, 1 Feb, 1 Mar at 09:00
      const first = await backfill(handle, start, end, 0, 3, 'scheduled-mandate-debit');
      expect(first.map((r) => r.status)).toEqual(['success', 'success', 'success']);
      const again = await backfill(handle, start, end, 3, 3);
      expect(again.map((r) => r.reference)).toEqual(first.map((r) => r.reference)); // the same debits answer
      const state = await getMandateState(services.starters, input.mandateRef);
      expect(state).toMatchObject({ totalDebited: 600_000 });
      for (const r of first) expect(await admin.ledger({ reference: r.reference })).toHaveLength(1);
    } finally {
      await handle.delete();
    }
  });

  it('a running timer-based plan moves to a Schedule: the plan stops without cancelling its token (no A5), the Schedule starts at its next charge and charges the same token', async () => {
    const planRef = `mv-${randomUUID().slice(0, 8)}`;
    await startRecurring(services.starters, {
      planRef,
      amount: 90_000,
      currency: 'NGN',
      email: 'ada@example.com',
      intervalMs: HOUR,
    });
    const url = await firstPaymentCheckoutUrl(services.starters, planRef);
    await post(`${url}/card`, { number: TEST_CARDS.pinThenOtp, cvv: '123', expiry_month: '12', expiry_year: '29' });
    await post(`${url}/authorize`, { pin: SANDBOX_PIN });
    await post(`${url}/authorize`, { otp: SANDBOX_OTP });
    const active = await waitForState(
      () => getRecurringState(services.starters, planRef),
      (s) => s.status === 'active' && s.nextChargeAt !== undefined,
      { timeoutMs: 30_000 },
    );

    const handle = await moveRecurringPlanToSchedule(services.starters, planRef, {
      amount: 90_000,
      currency: 'NGN',
      everyMs: HOUR,
    });
    try {
      const plan = await getRecurringState(services.starters, planRef);
      expect(plan).toMatchObject({
        status: 'completed',
        movedToSchedule: true,
        cycle: 1,
        reason: expect.stringContaining('moved to a Schedule'),
      });
      const d = await handle.describe();
      const next = new Date(Math.ceil(Date.parse(active.nextChargeAt!) / 1000) * 1000); // Schedules count whole seconds
      expect(d.spec.startAt?.toISOString()).toBe(next.toISOString());
      expect(d.action).toMatchObject({
        workflowType: 'scheduledTokenChargeWorkflow',
        args: [{ planRef, tokenId: active.tokenId, amount: 90_000 }],
      });
      // The token was not cancelled: the Schedule's first period charges it.
      expect(d.info.nextActionTimes[0]?.toISOString()).toBe(next.toISOString()); // the plan's cadence goes on
      const [run] = await backfill(handle, next, new Date(next.getTime() + 60_000), 0, 1);
      expect(run).toMatchObject({ status: 'success' });
      // Moving again is refused: the plan is no longer active.
      await expect(
        moveRecurringPlanToSchedule(services.starters, planRef, { amount: 90_000, currency: 'NGN', everyMs: HOUR }),
      ).rejects.toThrow(/only an active plan moves/);
    } finally {
      await handle.delete();
    }
  });

  it('a schedule is validated before it exists: each field named with its rule', async () => {
    const bad = createRecurringChargeSchedule(services.starters, {
      planRef: 'bad ref',
      tokenId: '',
      amount: 1.5,
      currency: 'EUR',
    });
    await expect(bad).rejects.toThrow(StarterInputError);
    await expect(bad).rejects.toThrow(
      /invalid schedule input: planRef must be 1-60.*tokenId is required.*amount must be an integer.*currency must be NGN or USD/,
    );
    await expect(
      createMandateDebitSchedule(services.starters, {
        mandateRef: 'M1',
        amount: 100,
        cron: '0 9 1 * *',
        everyMs: 5_000,
      }),
    ).rejects.toThrow(/give exactly one of cron and everyMs/);
  });
});
