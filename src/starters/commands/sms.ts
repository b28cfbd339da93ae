// CLI: `npm run cli -- sms <command>`.
//
//   sms send --file sms.json [--reference R] [--sender-id S] [--batch-size 100] [--no-follow]
//   sms status --reference R
//   sms templates list [--page 1] [--per-page 20] [--dir DSC]
//   sms templates create --name N --description D --message M
//   sms templates update --id UUID [--name N] [--description D] [--message M] [--file-name F]
//   sms templates delete --id UUID
//   sms campaigns list [--status pending|failed|success] [--name N] [--page 1] [--per-page 20]
//   sms campaigns create --reference R --name N --bucket UUID --sender-id S --template UUID [--scheduled-for ISO]
//   sms campaigns delete --id UUID
//   sms campaigns follow --id UUID [--name N] [--scheduled-for ISO] | --reference R
//
// Phone numbers come from a JSON file (or '-' for stdin), never from flags: command lines end up
// in shell history and process lists. Progress lines show counts only; the final JSON result
// (the caller's own list) names each number with its outcome.
import type { WorkflowHandle } from '@temporalio/client';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { PaymentsApiError } from '../../api';
import {
  SMS_CAMPAIGN_FINAL_STATUSES,
  SMS_SEND_FINAL_STATUSES,
  smsCampaignStateQuery,
  smsSendStateQuery,
  type SmsCampaignResult,
  type SmsCampaignState,
  type SmsSendInput,
  type SmsSendResult,
  type SmsSendState,
} from '../../shared/sms';
import { StarterInputError } from '../../shared/input-error';
import { followToResult, lineAndJson, startedFlow, startsFlow } from './run-options';
import {
  createSmsTemplate,
  deleteSmsCampaign,
  deleteSmsTemplate,
  followSmsCampaign,
  listSmsCampaigns,
  listSmsTemplates,
  smsCampaignHandle,
  smsSendHandle,
  startSmsCampaign,
  startSmsSend,
  updateSmsTemplate,
} from '../sms';
import { currentIo, withApi, type ContextFactory } from './context';
import { parkedForAPerson, printResult, progress, settle } from './output';

export function renderSmsSendState(s: SmsSendState | SmsSendResult): string {
  const done = s.batches.filter((b) => !['waiting', 'sending'].includes(b.outcome)).length;
  const c = s.counts;
  const cost = Object.entries(s.costByCurrency)
    .map(([cur, v]) => `${v} ${cur}`)
    .join(' + ');
  const others = (['failed', 'invalid', 'duplicate', 'not_sent', 'outcome_unknown'] as const)
    .filter((k) => c[k] > 0)
    .map((k) => ` ${k}=${c[k]}`)
    .join('');
  const final = SMS_SEND_FINAL_STATUSES.includes(s.status) ? ' (final)' : '';
  return `[sms-send ${s.reference}] ${s.status} batches=${done}/${s.batches.length} sent=${c.sent}/${c.total}${others}${cost ? ` cost=${cost}` : ''}${final}`;
}

export function renderSmsCampaignState(s: SmsCampaignState | SmsCampaignResult): string {
  const who = s.reference ?? s.campaignId ?? '?';
  const id = s.campaignId && s.reference ? ` campaign=${s.campaignId}` : '';
  const service = s.serviceStatus ? ` service=${s.serviceStatus}` : '';
  const when = s.scheduledFor ? ` scheduled_for=${s.scheduledFor}` : '';
  const final = SMS_CAMPAIGN_FINAL_STATUSES.includes(s.status) ? ' (final)' : '';
  const message = 'message' in s ? ` — ${s.message}` : '';
  return `[sms-campaign ${who}] ${s.status}${id}${service}${when} polls=${s.polls}${final}${message}`;
}

/** Runs an action; a broken input rule or the service's refusal is an answer (exit code 2), not a crash. */
async function answered(action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (err instanceof StarterInputError) {
      printResult({ refused: { message: err.message, issues: err.issues } }, `refused: ${err.message}`);
      settle('badInput');
      return;
    }
    if (err instanceof PaymentsApiError && err.status !== undefined && err.status >= 400 && err.status < 500) {
      printResult(
        { refused: { status: err.status, message: err.message } },
        `refused by the service (${err.status}): ${err.message}`,
      );
      settle('badInput');
      return;
    }
    throw err;
  }
}

/** An integer flag as a number (anything else is passed on for the rules to name). */
const int = (v: string | undefined): number | undefined =>
  v === undefined ? undefined : /^-?\d+$/.test(v) ? Number(v) : (v as unknown as number);

function readJson(file: string): unknown {
  return JSON.parse(file === '-' ? currentIo().stdin.readAllSync() : readFileSync(file, 'utf8'));
}

/**
 * Follows a send until it ends and prints its result; numbers whose outcome is unknown park it for a
 * person, and the follow stops there with exit 3.
 */
async function followSend(handle: WorkflowHandle): Promise<void> {
  await followToResult(handle, smsSendStateQuery, renderSmsSendState, {
    until: parkedForAPerson,
    text: (r: SmsSendResult) => lineAndJson(`${renderSmsSendState(r)} — ${r.message ?? r.status}`, r),
  });
}

export function registerSmsCommands(program: Command, context: ContextFactory): void {
  const sms = program
    .command('sms')
    .description('SMS (G1-G8): instant sends in batches, campaigns followed to success or failed, templates');
  registerSend(sms, context);
  registerTemplates(sms.command('templates').description('message templates (G5-G8)'));
  const campaigns = sms
    .command('campaigns')
    .description('campaigns over a bucket with a template (G2-G4), followed until success or failed');
  registerCampaignList(campaigns);
  registerCampaignCreate(campaigns, context);
  campaigns
    .command('delete')
    .description('delete a campaign (G4); a follower of it then ends not_found')
    .requiredOption('--id <uuid>')
    .action((o: { id: string }) =>
      answered(async () => {
        await withApi((api) => deleteSmsCampaign({ api }, o.id));
        progress(`deleted campaign ${o.id}`);
      }),
    );
  registerCampaignFollow(campaigns, context);
}

function registerSend(sms: Command, context: ContextFactory): void {
  const send = sms
    .command('send')
    .description('send a list of messages (G1) in batches, each batch once, and print the outcome per number')
    .requiredOption(
      '--file <path>',
      "JSON {reference, sender_id, messages: [{phone_number, message}], options?} ('-' for stdin)",
    )
    .option('--reference <ref>', 'your reference for this send (overrides the file; one send per reference)')
    .option('--sender-id <id>', 'sender_id (overrides the file)')
    .option('--batch-size <n>', 'messages per send request (G1; default 100)')
    .option('--no-follow', 'start and return without following');
  startsFlow(send).action((o: { file: string; reference?: string; senderId?: string; batchSize?: string }) =>
    answered(async () => {
      const fromFile = readJson(o.file) as Partial<SmsSendInput>;
      const input = {
        ...fromFile,
        ...(o.reference ? { reference: o.reference } : {}),
        ...(o.senderId ? { sender_id: o.senderId } : {}),
        ...(o.batchSize ? { options: { ...(fromFile.options ?? {}), batchSize: int(o.batchSize) } } : {}),
      } as SmsSendInput;
      const ctx = await context();
      const handle = await startSmsSend(ctx, input);
      if (startedFlow(handle)) await followSend(handle);
    }),
  );

  sms
    .command('status')
    .description('follow a send until it ends and print its result')
    .requiredOption('--reference <ref>', 'the send reference')
    .action(async (o: { reference: string }) => {
      const ctx = await context();
      await followSend(smsSendHandle(ctx, o.reference));
    });
}

/** The paging flags of the list commands (G3, G6). */
interface PageFlags {
  page?: string;
  perPage?: string;
  dir?: string;
  dateFrom?: string;
  dateTo?: string;
}

function withPageFlags(command: Command): Command {
  return command
    .option('--page <n>')
    .option('--per-page <n>')
    .option('--dir <dir>', 'DSC or ASC')
    .option('--date-from <date>', 'YYYY-MM-DD')
    .option('--date-to <date>', 'YYYY-MM-DD');
}

function pageQuery(o: PageFlags) {
  return {
    ...(o.page ? { page: int(o.page) } : {}),
    ...(o.perPage ? { perPage: int(o.perPage) } : {}),
    ...(o.dir ? { dir: o.dir as 'DSC' } : {}),
    ...(o.dateFrom ? { date_from: o.dateFrom } : {}),
    ...(o.dateTo ? { date_to: o.dateTo } : {}),
  };
}

function registerTemplates(templates: Command): void {
  withPageFlags(templates.command('list').description('list templates (G6)')).action((o: PageFlags) =>
    answered(async () => {
      const page = await withApi((api) => listSmsTemplates({ api }, pageQuery(o)));
      progress(`${page.count} template(s)`);
      for (const t of page.rows)
        progress(`${t.uuid}  ${t.name ?? ''}  pages=${t.pages ?? '?'}  ${JSON.stringify(t.message ?? '')}`);
    }),
  );
  templates
    .command('create')
    .description('create a template (G5)')
    .requiredOption('--name <name>')
    .requiredOption('--description <text>')
    .requiredOption('--message <text>')
    .action((o: { name: string; description: string; message: string }) =>
      answered(async () => {
        const t = await withApi((api) => createSmsTemplate({ api }, o));
        printResult(t, [`created template ${t.uuid}`, JSON.stringify(t, null, 2)]);
      }),
    );
  templates
    .command('update')
    .description('update a template (G7): name, description, message, file_name')
    .requiredOption('--id <uuid>')
    .option('--name <name>')
    .option('--description <text>')
    .option('--message <text>')
    .option('--file-name <name>')
    .action((o: { id: string; name?: string; description?: string; message?: string; fileName?: string }) =>
      answered(async () => {
        const t = await withApi((api) =>
          updateSmsTemplate(
            { api },
            {
              id: o.id,
              ...(o.name !== undefined ? { name: o.name } : {}),
              ...(o.description !== undefined ? { description: o.description } : {}),
              ...(o.message !== undefined ? { message: o.message } : {}),
              ...(o.fileName !== undefined ? { file_name: o.fileName } : {}),
            },
          ),
        );
        printResult(t, [`updated template ${t.uuid}`, JSON.stringify(t, null, 2)]);
      }),
    );
  templates
    .command('delete')
    .description('delete a template (G8)')
    .requiredOption('--id <uuid>')
    .action((o: { id: string }) =>
      answered(async () => {
        await withApi((api) => deleteSmsTemplate({ api }, o.id));
        progress(`deleted template ${o.id}`);
      }),
    );
}

function registerCampaignList(campaigns: Command): void {
  const list = campaigns
    .command('list')
    .description('list campaigns (G3); items carry no status: filter with --status')
    .option('--status <status>', 'pending, failed or success')
    .option('--name <name>');
  withPageFlags(list).action((o: PageFlags & { status?: string; name?: string }) =>
    answered(async () => {
      const page = await withApi((api) =>
        listSmsCampaigns(
          { api },
          {
            ...(o.status ? { status: o.status as 'pending' } : {}),
            ...(o.name ? { name: o.name } : {}),
            ...pageQuery(o),
          },
        ),
      );
      progress(`${page.total} campaign(s)${o.status ? ` with status ${o.status}` : ''}`);
      for (const c of page.items)
        progress(
          `${c.id}  ${c.name ?? ''}  template=${c.template_id ?? '?'}  bucket=${c.bucket_id ?? '?'}  created_at=${c.created_at ?? '?'}`,
        );
    }),
  );
}

interface CampaignCreateFlags {
  reference: string;
  name: string;
  bucket: string;
  senderId: string;
  template: string;
  scheduledFor?: string;
  pollInterval?: string;
  followFor?: string;
}

function registerCampaignCreate(campaigns: Command, context: ContextFactory): void {
  const create = campaigns
    .command('create')
    .description('create a campaign (G2) and follow it until success or failed; a scheduled one waits for its time')
    .requiredOption('--reference <ref>', 'your reference (one campaign per reference)')
    .requiredOption('--name <name>')
    .requiredOption('--bucket <uuid>', 'bucket_id')
    .requiredOption('--sender-id <id>', 'sender_id')
    .requiredOption('--template <uuid>', 'template_id')
    .option('--scheduled-for <iso>', 'send time (ISO 8601 with a zone): is_scheduled=true, sent as sscheduled_dor')
    .option('--poll-interval <duration>', 'first wait between campaign-list reads (G3; default 30s)')
    .option('--follow-for <duration>', 'how long a pending campaign is followed (default 24 hours)')
    .option('--no-follow', 'start and return without following');
  startsFlow(create).action((o: CampaignCreateFlags) =>
    answered(async () => {
      const ctx = await context();
      const handle = await startSmsCampaign(ctx, {
        reference: o.reference,
        campaign: {
          name: o.name,
          bucket_id: o.bucket,
          sender_id: o.senderId,
          is_scheduled: o.scheduledFor !== undefined,
          ...(o.scheduledFor !== undefined ? { sscheduled_dor: o.scheduledFor } : {}),
          template_id: o.template,
        },
        options: {
          ...(o.pollInterval ? { pollInterval: o.pollInterval } : {}),
          ...(o.followFor ? { followFor: o.followFor } : {}),
        },
      });
      if (!startedFlow(handle)) return;
      await followToResult(handle, smsCampaignStateQuery, renderSmsCampaignState);
    }),
  );
}

function registerCampaignFollow(campaigns: Command, context: ContextFactory): void {
  campaigns
    .command('follow')
    .description(
      'follow a campaign until success or failed: by uuid (starts a follower) or by the reference of a create',
    )
    .option('--id <uuid>', 'campaign uuid')
    .option('--name <name>', 'its name (narrows the campaign-list reads)')
    .option('--scheduled-for <iso>', 'its send time, when scheduled (the follower waits for it)')
    .option('--reference <ref>', 'the reference given to campaigns create')
    .option('--poll-interval <duration>', 'first wait between campaign-list reads (G3; default 30s)')
    .action((o: { id?: string; name?: string; scheduledFor?: string; reference?: string; pollInterval?: string }) =>
      answered(async () => {
        if ((o.id === undefined) === (o.reference === undefined))
          throw new StarterInputError('SMS campaign follow', [
            { field: 'id', rule: 'give either --id or --reference' },
          ]);
        const ctx = await context();
        const handle =
          o.reference !== undefined
            ? smsCampaignHandle(ctx, o.reference)
            : await followSmsCampaign(ctx, {
                campaign_id: o.id!,
                ...(o.name ? { name: o.name } : {}),
                ...(o.scheduledFor ? { scheduled_for: o.scheduledFor } : {}),
                ...(o.pollInterval ? { options: { pollInterval: o.pollInterval } } : {}),
              });
        progress(`following ${handle.workflowId}`);
        await followToResult(handle, smsCampaignStateQuery, renderSmsCampaignState);
      }),
    );
}
