// CLI: `npm run cli -- mandate <command>`.
//
//   mandate start --file mandate.json [--follow] (a MandateRequest; the BVN stays out of argv and
//                                               is sealed into the claim-check store, never sent to Temporal)
//   echo 123456 | mandate otp --ref M1          (stdin or a silent prompt; sealed too; only its handle reaches the flow)
//   mandate resend-otp --ref M1
//   mandate debit --ref M1 --amount 250000 [--narration text] [--key <idempotency key>]
//                                               (the same key again answers the same debit; without
//                                               --key one is made and printed: rerun with it)
//   mandate resolve-debit --ref M1 --debit <key or reference> --outcome debited|not_debited
//                         --reason text --operator name
//   mandate cancel --ref M1 [--signal]
//   mandate status --ref M1 [--follow] [--debits]
//   mandate list [--status approved] [--account 0123456789] [--debit-type fixed] ... [--page-size 20]
//                [--cursor <next_cursor>] [--all]
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import {
  FINAL_MANDATE_STATUSES,
  mandateStateQuery,
  mandateWorkflowId,
  type MandateRequest,
  type MandateState,
} from '../../shared/mandate';
import { followUntilDone } from '../progress';
import { followFlow, startedFlow, startsFlow } from './run-options';
import {
  cancelMandate,
  debitMandate,
  getMandateState,
  listAllMandates,
  listMandates,
  requestMandateCancel,
  resendMandateOtp,
  resolveMandateDebit,
  startMandate,
  submitMandateOtp,
  type MandateListFilters,
} from '../mandate';
import { openRunPaymentsClient, type ContextFactory } from './context';
import { StarterInputError } from '../../shared/input-error';
import { printResult, progress, readSecret, settleState } from './output';

export function renderMandateState(s: MandateState): string {
  const next = s.nextDebitAt ? ` next=${s.nextDebitAt}` : '';
  const end = s.endReason ? ` (${s.endReason})` : '';
  return `[mandate ${s.mandateRef}] ${s.status} balance=${s.balance} debited=${s.totalDebited} debits=${s.debitCount}${next}${end}`;
}

/** An update's refusal carries its reason in the cause; the CLI prints that, not "Workflow Update failed". */
async function explained<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof StarterInputError) throw err; // a refused input keeps its class: exit 2
    const cause = (err as { cause?: unknown }).cause;
    // The original stays the cause: its kind decides the exit code (output.ts).
    throw new Error(cause instanceof Error && cause.message ? cause.message : (err as Error).message, { cause: err });
  }
}

function renderMandateRecord(r: Record<string, unknown>): string {
  return `${String(r.mandate_id)} ${String(r.status)} ${String(r.debit_type)} amount=${String(r.amount)} balance=${String(r.balance)} debited=${String(r.total_debited)} ref=${String(r.reference)}`;
}

export function registerMandateCommands(program: Command, context: ContextFactory): void {
  const mandate = program.command('mandate').description('direct-debit mandates (D1-D6)');
  registerMandateSetUp(mandate, context);
  registerMandateDebits(mandate, context);
  registerMandateCancelAndStatus(mandate, context);
  registerMandateList(mandate);
}

/** start, otp and resend-otp: the mandate until the customer approved it. */
function registerMandateSetUp(mandate: Command, context: ContextFactory): void {
  startsFlow(
    mandate
      .command('start')
      .requiredOption('--file <path>', 'JSON file with the mandate input')
      .option('--follow', 'print each change until the mandate ends (it waits for the OTP first)'),
    { followByDefault: false },
  ).action(async (o: { file: string }) => {
    const ctx = await context();
    const input = JSON.parse(readFileSync(o.file, 'utf8')) as MandateRequest;
    const handle = await startMandate(ctx, input);
    const line = `started ${handle.workflowId}; send the customer's OTP on stdin: echo <code> | mandate otp --ref ${input.mandateRef}`;
    if (startedFlow(handle, line)) await followFlow(handle, mandateStateQuery, renderMandateState, { out: progress });
  });

  mandate
    .command('otp')
    .requiredOption('--ref <mandateRef>')
    .description("the customer's OTP: read from stdin, or typed at a prompt that does not echo")
    .option('--otp <code>', 'refused: an OTP on the command line stays in shell history')
    .action(async (o: { ref: string; otp?: string }) => {
      const otp = await readSecret('OTP', o.otp);
      const ctx = await context();
      progress(renderMandateState(await explained(submitMandateOtp(ctx, o.ref, otp))));
    });

  mandate
    .command('resend-otp')
    .description('send the customer a new OTP (D6)')
    .requiredOption('--ref <mandateRef>')
    .action(async (o: { ref: string }) => {
      const ctx = await context();
      progress(renderMandateState(await explained(resendMandateOtp(ctx, o.ref))));
    });
}

function registerMandateDebits(mandate: Command, context: ContextFactory): void {
  mandate
    .command('debit')
    .requiredOption('--ref <mandateRef>')
    .requiredOption('--amount <kobo>', 'integer, kobo')
    .option('--narration <text>')
    .option(
      '--key <idempotencyKey>',
      'the same key again answers the same debit (never a second one); made and printed when absent',
    )
    .action(async (o: { ref: string; amount: string; narration?: string; key?: string }) => {
      if (!/^\d+$/.test(o.amount))
        throw new StarterInputError('mandate debit', [{ field: '--amount', rule: 'must be an integer in kobo' }]);
      const ctx = await context();
      const key = o.key ?? randomUUID();
      if (!o.key) progress(`idempotency key ${key} (run again with --key ${key} to retry this debit safely)`);
      const d = await explained(
        debitMandate(ctx, o.ref, Number(o.amount), { narration: o.narration, idempotencyKey: key }),
      );
      printResult(d, `${d.reference} ${d.status} ${d.amount} key=${d.key ?? key}${d.error ? ` (${d.error})` : ''}`);
      settleState(d);
    });

  mandate
    .command('resolve-debit')
    .description('an operator settles a debit whose outcome stayed unknown (recorded in the flow)')
    .requiredOption('--ref <mandateRef>')
    .requiredOption('--debit <keyOrReference>', "the debit's idempotency key or its reference")
    .requiredOption('--outcome <outcome>', 'debited | not_debited')
    .requiredOption('--reason <text>')
    .requiredOption('--operator <name>')
    .action(async (o: { ref: string; debit: string; outcome: string; reason: string; operator: string }) => {
      if (o.outcome !== 'debited' && o.outcome !== 'not_debited')
        throw new StarterInputError('debit resolution', [
          { field: '--outcome', rule: 'must be debited or not_debited' },
        ]);
      const ctx = await context();
      const d = await explained(
        resolveMandateDebit(ctx, o.ref, {
          debitKey: o.debit,
          outcome: o.outcome,
          reason: o.reason,
          operator: o.operator,
        }),
      );
      progress(`${d.reference} ${d.status} ${d.amount} (resolved by ${d.resolution?.operator ?? o.operator})`);
    });
}

function registerMandateCancelAndStatus(mandate: Command, context: ContextFactory): void {
  mandate
    .command('cancel')
    .description('cancel (D4); a cancelled mandate answers its state again')
    .requiredOption('--ref <mandateRef>')
    .option('--signal', 'ask by signal and return at once')
    .action(async (o: { ref: string; signal?: boolean }) => {
      const ctx = await context();
      if (o.signal) {
        await requestMandateCancel(ctx, o.ref);
        progress(`cancel requested for ${mandateWorkflowId(o.ref)}`);
        return;
      }
      progress(renderMandateState(await explained(cancelMandate(ctx, o.ref))));
    });

  mandate
    .command('status')
    .requiredOption('--ref <mandateRef>')
    .option('--follow', 'print each change until the mandate ends')
    .option('--debits', 'list the recent debits with their references and outcomes')
    .action(async (o: { ref: string; follow?: boolean; debits?: boolean }) => {
      const ctx = await context();
      const state = await getMandateState(ctx, o.ref);
      progress(renderMandateState(state));
      if (o.debits) {
        for (const d of state.recentDebits)
          progress(
            `  ${d.reference} ${d.kind} ${d.amount} ${d.status}${d.confirmedBy && d.confirmedBy !== 'response' ? ` (by ${d.confirmedBy})` : ''}${d.error ? ` ${d.error}` : ''}`,
          );
        for (const f of state.failures) progress(`  failure: ${f}`);
      }
      if (o.follow && !FINAL_MANDATE_STATUSES.includes(state.status)) {
        await followUntilDone(
          ctx.client.workflow.getHandle(mandateWorkflowId(o.ref)),
          mandateStateQuery,
          renderMandateState,
          { out: progress },
        );
      }
    });
}

function registerMandateList(mandate: Command): void {
  mandate
    .command('list')
    .description("the service's mandates (D5), with its filters and cursor")
    .option('--status <status>', 'initiated | approved | cancelled | rejected')
    .option('--account <number>', 'account_number')
    .option('--mandate-id <id>')
    .option('--merchant-ref <ref>')
    .option('--customer-name <name>')
    .option('--mandate-type <type>', 'emandate')
    .option('--debit-type <type>', 'variable | fixed')
    .option('--amount <kobo>')
    .option('--approved <bool>', 'is_approved: true | false')
    .option('--ready <bool>', 'ready_to_debit: true | false')
    .option('--from <date>', 'start_date YYYY-MM-DD')
    .option('--to <date>', 'end_date YYYY-MM-DD')
    .option('--page-size <n>')
    .option('--cursor <cursor>', "a page's next_cursor or prev_cursor")
    .option('--all', 'follow next_cursor to the last page')
    .action(async (o: MandateListFlags) => {
      const filters = mandateListFilters(o);
      const api = openRunPaymentsClient();
      try {
        await printMandates(api, filters, o);
      } finally {
        await api.close();
      }
    });
}

type MandateListFlags = Record<string, string | boolean | undefined>;

/** The list flags as the service's filters; a flag that breaks its rule is an input error naming it. */
function mandateListFilters(o: MandateListFlags): MandateListFilters {
  const bool = (v: unknown, name: string) => {
    if (v !== 'true' && v !== 'false')
      throw new StarterInputError('mandate list', [{ field: `--${name}`, rule: 'must be true or false' }]);
    return v === 'true';
  };
  const int = (v: unknown, name: string) => {
    if (!/^\d+$/.test(String(v)))
      throw new StarterInputError('mandate list', [{ field: `--${name}`, rule: 'must be a whole number' }]);
    return Number(v);
  };
  const filters: MandateListFilters = {
    status: str(o.status) as MandateListFilters['status'],
    account_number: str(o.account),
    mandate_id: str(o.mandateId),
    merchant_ref: str(o.merchantRef),
    customer_name: str(o.customerName),
    mandate_type: str(o.mandateType),
    debit_type: str(o.debitType),
    amount: o.amount === undefined ? undefined : int(o.amount, 'amount'),
    is_approved: o.approved === undefined ? undefined : bool(o.approved, 'approved'),
    ready_to_debit: o.ready === undefined ? undefined : bool(o.ready, 'ready'),
    start_date: str(o.from),
    end_date: str(o.to),
    page_size: o.pageSize === undefined ? undefined : int(o.pageSize, 'page-size'),
  };
  for (const k of Object.keys(filters) as (keyof MandateListFilters)[]) if (filters[k] === undefined) delete filters[k];
  return filters;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** One page (with its cursors), or with --all every page to the last. */
async function printMandates(
  api: ReturnType<typeof openRunPaymentsClient>,
  filters: MandateListFilters,
  o: MandateListFlags,
): Promise<void> {
  if (o.all) {
    let n = 0;
    for await (const r of listAllMandates({ api }, filters)) {
      progress(renderMandateRecord(r));
      n += 1;
    }
    progress(`${n} mandate(s)`);
    return;
  }
  const page = await listMandates({ api }, filters, str(o.cursor));
  for (const r of page.records) progress(renderMandateRecord(r));
  if (page.prev_cursor !== undefined && page.prev_cursor !== null) progress(`prev_cursor=${String(page.prev_cursor)}`);
  progress(page.has_more ? `more: next_cursor=${String(page.next_cursor)}` : 'end of list');
}
