// Operator tools: what needs a person, found through the search attributes every flow keeps, and
// the actions that settle it (each recorded with who and why on the flow itself).
//
// The same lists are Web UI queries (docs/cli.md, "Operator tools"): the CLI only runs them.
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowExecutionInfo } from '@temporalio/client';
import { resolveOutcomeUpdate, type OutcomeResolution, type ResolveOutcomeInput } from '../shared/outcome';
import {
  paymentWebhookSignal,
  releaseUnmatchedSignal,
  unmatchedWebhookQuery,
  type PaymentWebhookEvent,
} from '../shared/payment-webhook';
import type { StarterContext } from './connect';
import { retryTransient } from './temporal-retry';
import { StarterInputError } from '../shared/input-error';
import {
  FINDING_KINDS,
  RECONCILIATION_MARK_FLOW,
  reconciliationMarkWorkflowId,
  type ReconciliationMark,
} from '../shared/reconciliation';
import { PaymentFlow, PaymentReference, ReconciliationStatus } from '../shared/search-attributes';
import { flowStartMetadata } from '../shared/flow-summary';

/** The statuses that mean "the service could not say whether money moved": a person decides. */
export const UNKNOWN_STATUSES = [
  'outcome_unknown',
  'create_outcome_unknown',
  'expired_unobserved',
  'poll_error',
] as const;

const inList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** Each list an operator works through, as a visibility query (also usable in the Web UI). */
export const ATTENTION_QUERIES = {
  /** Payment webhooks no flow claimed, held by unmatchedPaymentWebhookWorkflow. */
  'unmatched-webhooks': `PaymentFlow = 'unmatched-webhook' AND ExecutionStatus = 'Running'`,
  /** Money flows whose outcome the service could not confirm (running ones take resolve). */
  'outcome-unknown': `PaymentStatus IN (${inList(UNKNOWN_STATUSES)})`,
  /** Payments that arrived after the flow had given up on them: a POS approval after a cancel, or a reconciliation finding. */
  'late-payments': `PaymentStatus = 'success_after_cancel' OR (PaymentFlow = '${RECONCILIATION_MARK_FLOW}' AND ReconciliationStatus = 'late_payment')`,
  /** Reconciliation findings (money without success, success without money, amounts or currencies that differ). */
  'reconciliation-mismatches': `PaymentFlow = '${RECONCILIATION_MARK_FLOW}' AND ReconciliationStatus IN (${inList(FINDING_KINDS.filter((k) => k !== 'late_payment'))})`,
  /** Virtual-account credits the merchant's handler would not take (retry-handoff). */
  'handoff-failed': `PaymentStatus = 'handoff_failed' AND ExecutionStatus = 'Running'`,
  /** Virtual-account credits the service holds. */
  'frozen-credits': `PaymentStatus = 'frozen'`,
} as const;

export type AttentionKind = keyof typeof ATTENTION_QUERIES;
export const ATTENTION_KINDS = Object.keys(ATTENTION_QUERIES) as AttentionKind[];

export interface AttentionItem {
  workflowId: string;
  runId?: string;
  flow?: string;
  reference?: string;
  status?: string;
  amount?: number;
  currency?: string;
  running: boolean;
  startTime: string;
  closeTime?: string;
}

const first = (info: WorkflowExecutionInfo, key: string): unknown =>
  (info.searchAttributes?.[key] as unknown[] | undefined)?.[0];

function toItem(info: WorkflowExecutionInfo): AttentionItem {
  const amount = first(info, 'PaymentAmount');
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    ...(typeof first(info, 'PaymentFlow') === 'string' ? { flow: first(info, 'PaymentFlow') as string } : {}),
    ...(typeof first(info, 'PaymentReference') === 'string'
      ? { reference: first(info, 'PaymentReference') as string }
      : {}),
    ...(typeof first(info, 'PaymentStatus') === 'string' ? { status: first(info, 'PaymentStatus') as string } : {}),
    ...(typeof amount === 'number' ? { amount } : {}),
    ...(typeof first(info, 'PaymentCurrency') === 'string'
      ? { currency: first(info, 'PaymentCurrency') as string }
      : {}),
    running: info.status.name === 'RUNNING',
    startTime: info.startTime.toISOString(),
    ...(info.closeTime ? { closeTime: info.closeTime.toISOString() } : {}),
  };
}

/** One list of what needs a person (newest first), at most `limit` items. */
export async function listAttention(
  ctx: Pick<StarterContext, 'client'>,
  kind: AttentionKind,
  opts: { limit?: number } = {},
): Promise<AttentionItem[]> {
  const items: AttentionItem[] = [];
  const limit = opts.limit ?? 100;
  for await (const info of ctx.client.workflow.list({ query: ATTENTION_QUERIES[kind] })) {
    const item = toItem(info);
    // A reconciliation mark is current only while it is its reference's latest (a later run may have resolved it).
    if (item.flow === RECONCILIATION_MARK_FLOW && !(await isLatestMark(ctx, item))) continue;
    items.push(item);
    if (items.length >= limit) break;
  }
  return items;
}

async function isLatestMark(ctx: Pick<StarterContext, 'client'>, item: AttentionItem): Promise<boolean> {
  const latest = await ctx.client.workflow.getHandle(item.workflowId).describe();
  return latest.runId === item.runId;
}

/**
 * Resolves a reconciliation finding by hand: a new mark for the reference with status `resolved`,
 * the status it replaces, and who and why (the flow's own record cannot change once closed).
 */
export async function resolveReconciliationFinding(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  reference: string,
  input: { operator: string; reason: string },
): Promise<ReconciliationMark> {
  const missing = (['operator', 'reason'] as const).filter((k) => !input[k]?.trim());
  if (missing.length > 0)
    throw new StarterInputError(
      'reconciliation resolution',
      missing.map((field) => ({ field, rule: 'is required' })),
    );
  const id = reconciliationMarkWorkflowId(reference);
  const current = await retryTransient('reconciliation mark', () => ctx.client.workflow.getHandle(id).describe());
  const previous = (current.searchAttributes?.ReconciliationStatus as string[] | undefined)?.[0];
  if (!previous || previous === 'resolved')
    throw new Error(`reference ${reference}: no open reconciliation finding (latest mark: ${previous ?? 'none'})`);
  const mark: ReconciliationMark = {
    status: 'resolved',
    reference,
    reconciliationId: 'operator',
    previous,
    resolution: { operator: input.operator, reason: input.reason, at: new Date().toISOString() },
  };
  const handle = await ctx.client.workflow.start('reconciliationMarkWorkflow', {
    workflowId: id,
    taskQueue: ctx.taskQueue,
    args: [mark],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    typedSearchAttributes: [
      { key: PaymentFlow, value: RECONCILIATION_MARK_FLOW },
      { key: PaymentReference, value: reference },
      { key: ReconciliationStatus, value: 'resolved' },
    ],
    ...flowStartMetadata('reconciliationMarkWorkflow', { flow: RECONCILIATION_MARK_FLOW, reference }),
  });
  return (await handle.result()) as ReconciliationMark;
}

/** Counts per list: what the operator's day starts with. */
export async function attentionSummary(ctx: Pick<StarterContext, 'client'>): Promise<Record<AttentionKind, number>> {
  const out = {} as Record<AttentionKind, number>;
  // Marks count only while they are their reference's latest: the lists, not raw counts.
  for (const kind of ATTENTION_KINDS) out[kind] = (await listAttention(ctx, kind, { limit: 10_000 })).length;
  return out;
}

/** resolveOutcome reached a flow that is not running (closed) or does not exist: nothing was changed. */
export class ParkedFlowClosedError extends Error {
  override readonly name = 'ParkedFlowClosedError';
  constructor(
    readonly workflowId: string,
    /** The execution's status (COMPLETED, FAILED, …), or undefined when there is no such workflow. */
    readonly executionStatus: string | undefined,
    /** Its last PaymentStatus, when it has one. */
    readonly paymentStatus: string | undefined,
  ) {
    super(
      executionStatus === undefined
        ? `no workflow ${workflowId}: nothing to resolve (check the id with \`cli ops list outcome-unknown\`)`
        : `workflow ${workflowId} is closed (${executionStatus}${paymentStatus ? `, ended ${paymentStatus}` : ''}): only a running flow parked on an unknown outcome takes a resolution; nothing was changed`,
    );
  }
}

/**
 * Resolves a parked payment, POS sale or request, vend, SMS send or campaign, or recurring plan
 * (resolveOutcome), recorded on the flow; refused unless it is parked. A closed or unknown
 * workflow is answered with our own message (ParkedFlowClosedError), not the server's.
 */
export async function resolveParkedFlow(
  ctx: Pick<StarterContext, 'client'>,
  workflowId: string,
  input: ResolveOutcomeInput,
): Promise<OutcomeResolution> {
  const handle = ctx.client.workflow.getHandle(workflowId);
  try {
    return await retryTransient('resolve outcome', () => handle.executeUpdate(resolveOutcomeUpdate, { args: [input] }));
  } catch (err) {
    // The Update's own refusal (a running flow not parked, a wrong outcome) is the flow's message: kept.
    if (err instanceof WorkflowUpdateFailedError) throw err;
    const described = await retryTransient('describe workflow', () => handle.describe()).catch((e: unknown) =>
      e instanceof WorkflowNotFoundError ? null : undefined,
    );
    if (described === null) throw new ParkedFlowClosedError(workflowId, undefined, undefined);
    if (described && described.status.name !== 'RUNNING') {
      const status = described.searchAttributes?.PaymentStatus;
      throw new ParkedFlowClosedError(
        workflowId,
        described.status.name,
        Array.isArray(status) && typeof status[0] === 'string' ? status[0] : undefined,
      );
    }
    throw err;
  }
}

/**
 * Releases an unmatched webhook: its events are forwarded to `toWorkflowId` when given (the flow
 * takes them as hints and verifies its own reference with the service), and the holder ends.
 * Returns the events it held.
 */
export async function releaseUnmatchedWebhook(
  ctx: Pick<StarterContext, 'client'>,
  holderWorkflowId: string,
  opts: { toWorkflowId?: string } = {},
): Promise<PaymentWebhookEvent[]> {
  const holder = ctx.client.workflow.getHandle(holderWorkflowId);
  const events = await retryTransient('unmatched webhooks', () => holder.query(unmatchedWebhookQuery));
  if (opts.toWorkflowId) {
    const target = ctx.client.workflow.getHandle(opts.toWorkflowId);
    for (const event of events)
      await retryTransient('forward webhook', () => target.signal(paymentWebhookSignal, event));
  }
  await retryTransient('release unmatched', () => holder.signal(releaseUnmatchedSignal));
  return events;
}
