// A FIXED mandate observed end to end against the sandbox: the project's workflow and its real
// activities (D1, D2, D5 over HTTP to the sandbox the stack starts, the BVN through the claim-check
// PostgreSQL), the merchant events delivered to `notify listen`'s listener. The sandbox debits each
// scheduled date on its own clock; the flow sends no D3 and records what D5 shows.
// The flow's dates are days apart on the workflow clock, which a dev server cannot move (its clock
// is real time): the workflow runs on the time-skipping server, and the sandbox's clock is moved
// (admin API) to the server's time before each D5 read, so the service and the flow share one clock.
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { createActivities } from '../../src/activities';
import { newNotifySecret } from '../../src/notify';
import { MANDATE_OTP } from '../../src/sandbox';
import { fixedSchedule, type MandateState } from '../../src/shared/mandate';
import { getMandateState, startMandate, submitMandateOtp } from '../../src/starters/mandate';
import { useEventReceiver } from '../notify/receiver';
import { newMandateRequest } from '../support/flow-inputs';
import { eventually } from '../support/polling';
import { sandboxAdminCall } from '../support/sandbox-admin';
import { quietLogger, testConfig, useServices } from '../support/stack';
import { useTimeSkippingEnv } from '../support/time-skipping';
import { DAY, day } from './helpers';

const HOUR = 3600 * 1000;
const secret = newNotifySecret();
const taskQueue = `mandate-fixed-sandbox-${randomUUID()}`;
// The worker's task queue is config's: the event deliveries the activities start run there too.
const config = testConfig({ NOTIFY_SECRET: secret, TEMPORAL_TASK_QUEUE: taskQueue });
// The sandbox, the claim-check store and the API client first: the worker's activities use them.
const stack = useServices(config, quietLogger(), { withoutWorker: true });
const env = useTimeSkippingEnv({
  worker: {
    taskQueue,
    activities: () => {
      const real = createActivities({
        api: stack.services.api,
        logger: quietLogger(),
        config,
        claimCheck: stack.services.claimCheck,
        temporal: env.client,
      });
      return {
        ...real,
        // D5 as the real activity sends it, once the sandbox's clock has reached the read's time.
        getMandate: async (mandateId: string) => {
          clockMoves.push(await sandboxClockTo(Context.current().info.currentAttemptScheduledTimestampMs));
          return real.getMandate(mandateId);
        },
      };
    },
  },
});
/** Where each D5 read moved the sandbox's clock to (ISO). */
const clockMoves: string[] = [];
const listener = useEventReceiver(secret);
const starters = () => ({ ...stack.services.starters, client: env.client, taskQueue });

/** Moves the sandbox's clock (real time plus the admin's advances) on to `at`; its new time. */
async function sandboxClockTo(at: number): Promise<string> {
  const { now } = await stack.admin.advanceClock(0);
  return (await stack.admin.advanceClock(Math.max(at - Date.parse(now), 0))).now;
}

afterEach(() => expect(listener.refused).toEqual([]));

it('the sandbox debits each of three dates on its clock; the flow observes them (no D3) and tells each to the merchant', async () => {
  const tomorrow = Math.floor((await env.currentTimeMs()) / DAY) * DAY + DAY;
  const fixed = {
    frequency: 'WEEKLY' as const,
    interval: 7,
    initialDebitAmount: 100_000,
    initialDebitDate: day(tomorrow),
  };
  const i = newMandateRequest({
    debitType: 'fixed',
    amount: 300_000,
    fixed,
    endDate: day(tomorrow + 2 * DAY),
    notify: { url: listener.url },
  });
  const dates = fixedSchedule(fixed, i.endDate);
  expect(dates).toEqual([tomorrow, tomorrow + DAY, tomorrow + 2 * DAY]);
  const handle = await startMandate(starters(), i);
  const state = () => getMandateState(starters(), i.mandateRef);
  const waitFor = (ok: (s: MandateState) => boolean, what: string) =>
    eventually(state, ok, { timeoutMs: 30_000, intervalMs: 50, description: what, ignoreErrors: true });
  await waitFor((s) => s.status === 'awaiting_otp', 'awaiting the OTP');
  expect((await submitMandateOtp(starters(), i.mandateRef, MANDATE_OTP)).status).toBe('approved');
  const { mandateId } = await state();

  // The test server skips to each read (6 h into each date); the sandbox debits each date as its clock passes it.
  const final = await handle.result();
  expect(clockMoves.length).toBeGreaterThanOrEqual(3);
  expect(clockMoves.every((at) => dates.some((d) => Date.parse(at) >= d + 6 * HOUR))).toBe(true);
  expect(final).toMatchObject({ status: 'completed', totalDebited: 300_000, balance: 0, debitCount: 0 });
  expect(final.recentDebits.map((d) => [d.reference, d.kind, d.status, d.amount, d.scheduledFor])).toEqual(
    dates.map((at, n) => [`${i.mandateRef}-F${n + 1}`, 'observed', 'success', 100_000, day(at)]),
  );
  // The sandbox made the three debits (each date once), and the worker sent no D3.
  const scheduled = await sandboxAdminCall<{ date: string; reference: string; status: string; amount: number }[]>(
    stack.admin.url,
    'GET',
    `/mandates/${mandateId}/scheduled-debits`,
  );
  expect(scheduled.map((d) => [d.date, d.status, d.amount])).toEqual(dates.map((at) => [day(at), 'success', 100_000]));
  expect(await stack.admin.ledger({ kind: 'mandate_debit' })).toEqual(
    expect.arrayContaining(scheduled.map((d) => expect.objectContaining({ reference: d.reference, amount: 100_000 }))),
  );
  const log = await stack.admin.requests();
  expect(log.filter((r) => r.path === '/transaction/mandate/debit')).toEqual([]);
  expect(log.filter((r) => r.path === '/transaction/mandate/get-mandates').length).toBeGreaterThanOrEqual(3);

  const events = await listener.delivered(i.mandateRef, 4);
  expect(events.filter((e) => e.type === 'mandate.debit.succeeded').map((e) => [e.data.part, e.data.amount])).toEqual(
    dates.map((_, n) => [`${i.mandateRef}-F${n + 1}`, 100_000]),
  );
}, 120_000);
