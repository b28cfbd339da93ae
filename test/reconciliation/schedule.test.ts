// The daily reconciliation Schedule on the dev server: created once, updated (not duplicated) by
// a second start, its action the reconciliation workflow for the previous day with the documented
// catch-up policy; triggered, it runs the workflow on the worker for the day before its scheduled
// time. And the configuration that drives it.
import { randomUUID } from 'node:crypto';
import { ScheduleOverlapPolicy, type ScheduleHandle } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { ensureReconciliationSchedule } from '../../src/starters/reconciliation';
import { ConfigError, loadConfig } from '../../src/config/config';
import { previousDayOf, reconciliationScheduleId, type ReconciliationReport } from '../../src/shared/reconciliation';
import { testConfig } from '../support/stack';
import { useServices } from '../support/stack';
import { eventually } from '../support/polling';

const config = testConfig();
const env = useServices(config);
const scheduleId = `reconciliation-daily-test-${randomUUID().slice(0, 8)}`;
let schedule: ScheduleHandle | undefined;
afterAll(() => schedule?.delete().catch(() => undefined));

const TemporalScheduledStartTime = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

describe('the daily reconciliation Schedule on the dev server', () => {
  it('is created once and updated by a second start; its action is the reconciliation of the previous day, with catch-up', async () => {
    const client = env.services.client;
    expect(await ensureReconciliationSchedule(env.services.starters, { scheduleId })).toEqual({
      scheduleId,
      created: true,
    });
    schedule = client.schedule.getHandle(scheduleId);
    const first = await schedule.describe();
    expect(first.spec.calendars).toEqual([
      expect.objectContaining({ hour: [{ start: 2, end: 2, step: 1 }], minute: [{ start: 0, end: 0, step: 1 }] }),
    ]);

    expect(await ensureReconciliationSchedule(env.services.starters, { scheduleId, dailyAt: '07:30' })).toEqual({
      scheduleId,
      created: false,
    });
    const d = await schedule.describe();
    expect(d.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'reconciliationWorkflow',
      taskQueue: config.temporal.taskQueue,
      workflowId: scheduleId,
      args: [{ previousDay: true }],
    });
    expect(d.spec.calendars).toEqual([
      expect.objectContaining({ hour: [{ start: 7, end: 7, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }] }),
    ]);
    expect(d.policies).toMatchObject({
      overlap: ScheduleOverlapPolicy.BUFFER_ALL,
      catchupWindow: 7 * 24 * 3600 * 1000,
      pauseOnFailure: false,
    });
    expect(d.state.paused).toBe(false);
    await expect(ensureReconciliationSchedule(env.services.starters, { scheduleId, dailyAt: '7:3' })).rejects.toThrow(
      'dailyAt must be HH:MM (UTC)',
    );
    // An operator's pause survives a restart (the update keeps the Schedule's state).
    await schedule.pause('month-end freeze');
    await ensureReconciliationSchedule(env.services.starters, { scheduleId, dailyAt: '07:30' });
    expect((await schedule.describe()).state).toMatchObject({ paused: true, note: 'month-end freeze' });
    await schedule.unpause();
  });

  it('triggered, it reconciles the day before its scheduled time on the worker', async () => {
    const client = env.services.client;
    await schedule!.trigger();
    const workflowId = await eventually(
      async () => (await schedule!.describe()).info.recentActions.at(-1)?.action.workflow.workflowId,
      { timeoutMs: 30_000, description: 'the triggered action', returnLastOnTimeout: true },
    );
    expect(workflowId).toMatch(new RegExp(`^${scheduleId}-`));
    const handle = client.workflow.getHandle(workflowId!);
    const report = (await handle.result()) as ReconciliationReport;
    const scheduledAt = (await handle.describe()).typedSearchAttributes.get(TemporalScheduledStartTime);
    expect(scheduledAt).toBeInstanceOf(Date);
    const day = previousDayOf(scheduledAt!.getTime());
    expect(report).toMatchObject({ from: day, to: day, currencies: ['NGN', 'USD'], status: 'clean' });
    expect(report.windows.map((w) => `${w.start}..${w.end} ${w.currency}`)).toEqual([
      `${day}..${day} NGN`,
      `${day}..${day} USD`,
    ]);
  }, 60_000);

  it('runs taken late (a backfill, as after an outage) each reconcile the day before their own scheduled time, one after another', async () => {
    const client = env.services.client;
    const DAY = 24 * 3600 * 1000;
    const midnight = Math.floor(Date.now() / DAY) * DAY;
    // Two missed 07:30 runs: four and three days ago.
    await schedule!.backfill({
      start: new Date(midnight - 4 * DAY),
      end: new Date(midnight - 3 * DAY + 8 * 3600 * 1000),
      overlap: ScheduleOverlapPolicy.BUFFER_ALL,
    });
    /** The completed runs scheduled before yesterday: workflow id by scheduled time. */
    const completedLateRuns = async () => {
      const runs = new Map<string, string>();
      for await (const w of client.workflow.list({
        query: `TemporalScheduledById = "${scheduleId}" AND ExecutionStatus = "Completed"`,
      })) {
        const at = w.typedSearchAttributes.get(TemporalScheduledStartTime);
        if (at && at.getTime() < midnight - DAY) runs.set(at.toISOString(), w.workflowId);
      }
      return runs;
    };
    const seen = await eventually(completedLateRuns, (runs) => runs.size >= 2, {
      timeoutMs: 30_000,
      description: 'both backfilled runs completed',
      returnLastOnTimeout: true,
    });
    expect([...seen.keys()].sort()).toEqual([
      new Date(midnight - 4 * DAY + 7.5 * 3600 * 1000).toISOString(),
      new Date(midnight - 3 * DAY + 7.5 * 3600 * 1000).toISOString(),
    ]);
    for (const [at, workflowId] of seen) {
      const report = (await client.workflow.getHandle(workflowId).result()) as ReconciliationReport;
      expect(report.from).toBe(previousDayOf(Date.parse(at)));
      expect(report.to).toBe(report.from);
    }
  }, 60_000);

  it('one Schedule per deployment: the default task queue has the plain id, another queue its own', () => {
    expect(reconciliationScheduleId('payments')).toBe('reconciliation-daily');
    expect(reconciliationScheduleId('payments-eu')).toBe('reconciliation-daily-payments-eu');
  });

  it('configuration: on by default at 02:00 UTC; a bad time is refused naming the variable', () => {
    expect(loadConfig({}).reconciliation).toEqual({ schedule: true, dailyAt: '02:00' });
    expect(loadConfig({ RECONCILIATION_SCHEDULE: 'false', RECONCILIATION_DAILY_AT: '23:15' }).reconciliation).toEqual({
      schedule: false,
      dailyAt: '23:15',
    });
    expect(() => loadConfig({ RECONCILIATION_DAILY_AT: '25:00' })).toThrow(ConfigError);
    expect(() => loadConfig({ RECONCILIATION_DAILY_AT: '25:00' })).toThrow(
      /RECONCILIATION_DAILY_AT: must be HH:MM \(UTC\)/,
    );
  });
});
