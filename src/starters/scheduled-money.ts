// Recurring money on Temporal Schedules, for backends: create (validated), pause, resume, trigger,
// backfill, describe (next runs, recent runs), delete. Every run keys its money request by its
// nominal period (src/workflows/scheduled-money.ts), so a catch-up, a backfill or a double trigger
// never moves money for a period twice. Paused/resumed from the Web UI too ("Schedules").
import { ScheduleOverlapPolicy, type ScheduleDescription, type ScheduleHandle } from '@temporalio/client';
import { z } from 'zod';
import {
  mandateDebitScheduleId,
  recurringChargeScheduleId,
  type ScheduledChargeInput,
  type ScheduledMandateDebitInput,
} from '../shared/scheduled-money';
import { moveRecurringToScheduleSignal, recurringStateQuery, recurringWorkflowId } from '../shared/recurring';
import type { StarterContext } from './connect';
import { retryTransient } from './temporal-retry';
import { StarterInputError, parseStarterInput } from '../shared/input-error';
import { flowStartMetadata } from '../shared/flow-summary';
import type { PaymentSearchFields } from '../shared/search-attributes';

const reference = z.string().regex(/^[A-Za-z0-9_.:-]{1,60}$/, 'must be 1-60 of letters, digits, _ . : -');
const when = z.object({
  /** Cron (UTC), e.g. "0 9 1 * *" (09:00 on the 1st). */
  cron: z.string().min(9, 'must be a 5-field cron expression').optional(),
  /** Or an interval in ms (at least 1 s). */
  everyMs: z.number().int().min(1_000, 'must be at least 1000 ms').optional(),
  /** How far back missed runs are caught up after an outage (ms; default 1 day). Each caught-up run is its own period. */
  catchupWindowMs: z.number().int().min(60_000, 'must be at least 60000 ms').optional(),
  /** Stop after this many runs (Schedule `remainingActions`). */
  maxRuns: z.number().int().min(1, 'must be at least 1').optional(),
  startAt: z.iso.datetime({ error: 'must be an ISO date-time' }).optional(),
  endAt: z.iso.datetime({ error: 'must be an ISO date-time' }).optional(),
  /** Create paused (resume later). */
  paused: z.boolean().optional(),
});

export const recurringChargeScheduleSchema = when
  .extend({
    planRef: reference,
    tokenId: z.string().min(1, 'is required (the token from the first payment)'),
    amount: z.number().int('must be an integer in the lowest unit').positive('must be greater than 0'),
    currency: z.enum(['NGN', 'USD'], { error: 'must be NGN or USD' }),
  })
  .refine((v) => (v.cron === undefined) !== (v.everyMs === undefined), {
    message: 'give exactly one of cron and everyMs',
    path: ['cron'],
  });

export const mandateDebitScheduleSchema = when
  .extend({
    mandateRef: reference,
    amount: z.number().int('must be an integer in kobo').positive('must be greater than 0'),
    narration: z.string().max(100, 'must be at most 100 characters').optional(),
  })
  .refine((v) => (v.cron === undefined) !== (v.everyMs === undefined), {
    message: 'give exactly one of cron and everyMs',
    path: ['cron'],
  });

/** A schedule's input, validated (StarterInputError 'invalid schedule input: ...' naming every broken rule). */
const parse = <S extends z.ZodType>(schema: S, raw: unknown): z.output<S> => parseStarterInput(schema, raw, 'schedule');

type When = z.output<typeof when>;

/** Schedules count in whole seconds: a start is rounded up to the next second. */
const startMs = (iso: string): number => Math.ceil(Date.parse(iso) / 1000) * 1000;

function scheduleParts(w: When) {
  return {
    spec: {
      // An interval counts from startAt when one is given (a moved plan keeps its cadence), else from the epoch.
      ...(w.cron
        ? { cronExpressions: [w.cron] }
        : { intervals: [{ every: w.everyMs!, ...(w.startAt ? { offset: startMs(w.startAt) % w.everyMs! } : {}) }] }),
      ...(w.startAt ? { startAt: new Date(startMs(w.startAt)) } : {}),
      ...(w.endAt ? { endAt: new Date(w.endAt) } : {}),
    },
    // Each period is its own run (its own key): runs may overlap (a parked charge does not hold the next period back).
    policies: {
      overlap: ScheduleOverlapPolicy.ALLOW_ALL,
      catchupWindow: w.catchupWindowMs ?? 24 * 3_600_000,
      pauseOnFailure: false,
    },
    state: { paused: w.paused ?? false, ...(w.maxRuns ? { remainingActions: w.maxRuns } : {}) },
  };
}

/**
 * Validates a schedule's input and creates a Schedule whose every run starts `workflowType` under
 * the schedule's own id, with its Web UI summary. Async, so an invalid input is a rejection too.
 */
async function createFlowSchedule<S extends z.ZodType<When>>(
  ctx: StarterContext,
  schema: S,
  raw: unknown,
  workflowType: string,
  run: (v: z.output<S>) => { scheduleId: string; args: [unknown]; search: PaymentSearchFields },
): Promise<ScheduleHandle> {
  const v = parse(schema, raw);
  const { scheduleId, args, search } = run(v);
  return retryTransient('create schedule', () =>
    ctx.client.schedule.create({
      scheduleId,
      ...scheduleParts(v),
      action: {
        type: 'startWorkflow',
        workflowType,
        workflowId: scheduleId,
        taskQueue: ctx.taskQueue,
        args,
        ...flowStartMetadata(workflowType, search),
      },
    }),
  );
}

export const createRecurringChargeSchedule = (ctx: StarterContext, raw: unknown): Promise<ScheduleHandle> =>
  createFlowSchedule(ctx, recurringChargeScheduleSchema, raw, 'scheduledTokenChargeWorkflow', (v) => ({
    scheduleId: recurringChargeScheduleId(v.planRef),
    args: [
      { planRef: v.planRef, tokenId: v.tokenId, amount: v.amount, currency: v.currency } satisfies ScheduledChargeInput,
    ],
    search: { reference: v.planRef, amount: v.amount, currency: v.currency },
  }));

export const createMandateDebitSchedule = (ctx: StarterContext, raw: unknown): Promise<ScheduleHandle> =>
  createFlowSchedule(ctx, mandateDebitScheduleSchema, raw, 'scheduledMandateDebitWorkflow', (v) => ({
    scheduleId: mandateDebitScheduleId(v.mandateRef),
    args: [
      {
        mandateRef: v.mandateRef,
        amount: v.amount,
        ...(v.narration ? { narration: v.narration } : {}),
      } satisfies ScheduledMandateDebitInput,
    ],
    search: { reference: v.mandateRef },
  }));

export const scheduleHandle = (ctx: Pick<StarterContext, 'client'>, scheduleId: string): ScheduleHandle =>
  ctx.client.schedule.getHandle(scheduleId);

export interface ScheduleView {
  scheduleId: string;
  paused: boolean;
  note?: string;
  remainingRuns?: number;
  nextRuns: string[];
  recentRuns: { scheduledAt: string; workflowId: string }[];
}

export function viewSchedule(scheduleId: string, d: ScheduleDescription): ScheduleView {
  return {
    scheduleId,
    paused: d.state.paused,
    ...(d.state.note ? { note: d.state.note } : {}),
    ...(d.state.remainingActions !== undefined ? { remainingRuns: d.state.remainingActions } : {}),
    nextRuns: d.info.nextActionTimes.map((t) => t.toISOString()),
    recentRuns: d.info.recentActions.map((a) => ({
      scheduledAt: a.scheduledAt.toISOString(),
      workflowId: a.action.workflow.workflowId,
    })),
  };
}

export async function describeSchedule(ctx: Pick<StarterContext, 'client'>, scheduleId: string): Promise<ScheduleView> {
  return viewSchedule(
    scheduleId,
    await retryTransient('describe schedule', () => scheduleHandle(ctx, scheduleId).describe()),
  );
}

/**
 * Moves a running timer-based recurring plan (recurringChargeWorkflow) to a Schedule: the plan stops
 * charging without cancelling its token (it ends `completed`, "moved to a Schedule"), and a
 * Schedule with the plan's token starts at the plan's next charge time (or `startAt`). The plan is
 * stopped first, so no period is charged by both.
 */
export async function moveRecurringPlanToSchedule(
  ctx: StarterContext,
  planRef: string,
  raw: {
    amount: number;
    currency: 'NGN' | 'USD';
    cron?: string;
    everyMs?: number;
    startAt?: string;
    catchupWindowMs?: number;
    maxRuns?: number;
  },
): Promise<ScheduleHandle> {
  const plan = ctx.client.workflow.getHandle(recurringWorkflowId(planRef));
  const state = await retryTransient('recurring state', () => plan.query(recurringStateQuery));
  if (state.status !== 'active' || !state.tokenId)
    throw new StarterInputError('schedule', [
      {
        field: 'planRef',
        rule: `the plan is ${state.status}${state.tokenId ? '' : ' without a token'}: only an active plan moves`,
      },
    ]);
  // Validated before anything changes.
  parse(recurringChargeScheduleSchema, { ...raw, planRef, tokenId: state.tokenId });
  await retryTransient('move plan', () => plan.signal(moveRecurringToScheduleSignal));
  const stopped = await plan.result();
  return createRecurringChargeSchedule(ctx, {
    ...raw,
    planRef,
    tokenId: stopped.tokenId,
    ...((raw.startAt ?? state.nextChargeAt) ? { startAt: raw.startAt ?? state.nextChargeAt } : {}),
  });
}
