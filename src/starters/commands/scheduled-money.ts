// CLI: `npm run cli -- schedule <command>`: recurring money on Temporal Schedules.
//
//   schedule charge --plan P1 --token AUTH_1 --amount 150000 --currency NGN --cron "0 9 1 * *"
//   schedule debit --mandate M1 --amount 200000 --every-ms 86400000
//   schedule move-plan P1 --amount 150000 --currency NGN --every-ms 2592000000
//   schedule show <scheduleId> | pause <id> [--note] | resume <id> | trigger <id> | backfill <id> --from --to | delete <id>
import type { Command } from 'commander';
import {
  createMandateDebitSchedule,
  createRecurringChargeSchedule,
  describeSchedule,
  moveRecurringPlanToSchedule,
  scheduleHandle,
} from '../scheduled-money';
import type { ContextFactory } from './context';
import { progress } from './output';
import { StarterInputError } from '../../shared/input-error';

const when = (o: { cron?: string; everyMs?: string; startAt?: string; paused?: boolean; maxRuns?: string }) => ({
  ...(o.cron ? { cron: o.cron } : {}),
  ...(o.everyMs ? { everyMs: Number(o.everyMs) } : {}),
  ...(o.startAt ? { startAt: o.startAt } : {}),
  ...(o.paused ? { paused: true } : {}),
  ...(o.maxRuns ? { maxRuns: Number(o.maxRuns) } : {}),
});

function timing(cmd: Command): Command {
  return cmd
    .option('--cron <expr>', 'when, as a 5-field cron (UTC)')
    .option('--every-ms <ms>', 'or every this many milliseconds')
    .option('--start-at <iso>', 'first run not before')
    .option('--max-runs <n>', 'stop after this many runs')
    .option('--paused', 'create paused');
}

export function registerScheduledMoneyCommands(program: Command, context: ContextFactory): void {
  const schedule = program
    .command('schedule')
    .description(
      'recurring charges and mandate debits on Temporal Schedules (one money request per period, never two)',
    );
  registerScheduleCreation(schedule, context);
  registerScheduleControl(schedule, context);
}

/** charge, debit and move-plan: a Schedule made, then shown. */
function registerScheduleCreation(schedule: Command, context: ContextFactory): void {
  timing(schedule.command('charge').description('charge a card token every period (A4, reference <plan>-S<period>)'))
    .requiredOption('--plan <ref>', 'plan reference')
    .requiredOption('--token <id>', 'the token from the first payment')
    .requiredOption('--amount <n>', 'lowest unit')
    .option('--currency <c>', 'NGN or USD', 'NGN')
    .action(
      async (o: { plan: string; token: string; amount: string; currency: string } & Parameters<typeof when>[0]) => {
        const h = await createRecurringChargeSchedule(await context(), {
          planRef: o.plan,
          tokenId: o.token,
          amount: Number(o.amount),
          currency: o.currency,
          ...when(o),
        });
        await showSchedule(context, h.scheduleId);
      },
    );

  timing(
    schedule
      .command('debit')
      .description(
        'debit an approved mandate every period (the mandate debit through the mandate flow, the period as idempotency key)',
      ),
  )
    .requiredOption('--mandate <ref>', 'mandate reference')
    .requiredOption('--amount <n>', 'kobo')
    .option('--narration <text>', 'narration')
    .action(async (o: { mandate: string; amount: string; narration?: string } & Parameters<typeof when>[0]) => {
      const h = await createMandateDebitSchedule(await context(), {
        mandateRef: o.mandate,
        amount: Number(o.amount),
        ...(o.narration ? { narration: o.narration } : {}),
        ...when(o),
      });
      await showSchedule(context, h.scheduleId);
    });

  schedule
    .command('move-plan <planRef>')
    .description(
      'move a running timer-based recurring plan to a Schedule (the token stays active; the cadence goes on)',
    )
    .requiredOption('--amount <n>', 'lowest unit')
    .option('--currency <c>', 'NGN or USD', 'NGN')
    .option('--cron <expr>', 'when, as a cron (UTC)')
    .option('--every-ms <ms>', 'or every this many milliseconds')
    .action(
      async (planRef: string, o: { amount: string; currency: 'NGN' | 'USD'; cron?: string; everyMs?: string }) => {
        const h = await moveRecurringPlanToSchedule(await context(), planRef, {
          amount: Number(o.amount),
          currency: o.currency,
          ...when(o),
        });
        await showSchedule(context, h.scheduleId);
      },
    );
}

/** show, pause, resume, trigger, backfill and delete one Schedule. */
function registerScheduleControl(schedule: Command, context: ContextFactory): void {
  schedule
    .command('show <scheduleId>')
    .description('paused?, next runs, recent runs')
    .action(async (id: string) => {
      await showSchedule(context, id);
    });
  schedule
    .command('pause <scheduleId>')
    .option('--note <text>', 'why')
    .action(async (id: string, o: { note?: string }) => {
      await scheduleHandle(await context(), id).pause(o.note);
      progress(`paused ${id}`);
    });
  schedule.command('resume <scheduleId>').action(async (id: string) => {
    await scheduleHandle(await context(), id).unpause();
    progress(`resumed ${id}`);
  });
  schedule
    .command('trigger <scheduleId>')
    .description('run now (the current minute is the period)')
    .action(async (id: string) => {
      await scheduleHandle(await context(), id).trigger();
      progress(`triggered ${id}`);
    });
  schedule
    .command('backfill <scheduleId>')
    .description('run the periods of a past range (periods already run move no money again)')
    .requiredOption('--from <iso>', 'start (inclusive)')
    .requiredOption('--to <iso>', 'end (inclusive)')
    .action(async (id: string, o: { from: string; to: string }) => {
      const [from, to] = [new Date(o.from), new Date(o.to)];
      if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || to < from)
        throw new StarterInputError('schedule backfill', [
          { field: 'from/to', rule: 'must be ISO date-times with from ≤ to' },
        ]);
      await scheduleHandle(await context(), id).backfill([{ start: from, end: to }]);
      progress(`backfilled ${id} from ${from.toISOString()} to ${to.toISOString()}`);
    });
  schedule.command('delete <scheduleId>').action(async (id: string) => {
    await scheduleHandle(await context(), id).delete();
    progress(`deleted ${id}`);
  });
}

async function showSchedule(context: ContextFactory, scheduleId: string): Promise<void> {
  progress(JSON.stringify(await describeSchedule(await context(), scheduleId), null, 2));
}
