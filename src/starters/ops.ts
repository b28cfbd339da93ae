// Operator tools: what needs a person, found through the search attributes every flow keeps, and
// the actions that settle it (each recorded with who and why on the flow itself).
//
// The same lists are Web UI queries (README, "Operator tools"): the CLI only runs them.
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { resolveOutcomeUpdate, type OutcomeResolution, type ResolveOutcomeInput } from '../shared/outcome';
import { paymentWebhookSignal, releaseUnmatchedSignal, unmatchedWebhookQuery, type PaymentWebhookEvent } from '../shared/payment-webhook';
import type { StarterContext } from './connect';
import { retryTransient } from './temporal-retry';

/** The statuses that mean "the service could not say whether money moved": a person decides. */
export const UNKNOWN_STATUSES = ['outcome_unknown', 'create_outcome_unknown', 'expired_unobserved', 'poll_error'] as const;

const inList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** Each list an operator works through, as a visibility query (also usable in the Web UI). */
export const ATTENTION_QUERIES = {
  /** Payment webhooks no flow claimed, held by unmatchedPaymentWebhookWorkflow. */
  'unmatched-webhooks': `PaymentFlow = 'unmatched-webhook' AND ExecutionStatus = 'Running'`,
  /** Money flows whose outcome the service could not confirm (running ones take resolve). */
  'outcome-unknown': `PaymentStatus IN (${inList(UNKNOWN_STATUSES)})`,
  /** Payments that arrived after the flow had given up on them (a POS approval after a cancel). */
  'late-payments': `PaymentStatus = 'success_after_cancel'`,
  /** Virtual-account credits the merchant's handler would not take (retry-handoff). */
  'handoff-failed': `PaymentStatus = 'handoff_failed' AND ExecutionStatus = 'Running'`,
  /** Virtual-account credits the service holds. */
  'frozen-credits': `PaymentStatus = 'frozen'`,
} as const;

export type AttentionKind = keyof typeof ATTENTION_QUERIES;
export const ATTENTION_KINDS = Object.keys(ATTENTION_QUERIES) as AttentionKind[];

export interface AttentionItem {
  workflowId: string;
  flow?: string;
  reference?: string;
  status?: string;
  amount?: number;
  currency?: string;
  running: boolean;
  startTime: string;
  closeTime?: string;
}

const first = (info: WorkflowExecutionInfo, key: string): unknown => (info.searchAttributes?.[key] as unknown[] | undefined)?.[0];

function toItem(info: WorkflowExecutionInfo): AttentionItem {
  const amount = first(info, 'PaymentAmount');
  return {
    workflowId: info.workflowId,
    ...(typeof first(info, 'PaymentFlow') === 'string' ? { flow: first(info, 'PaymentFlow') as string } : {}),
    ...(typeof first(info, 'PaymentReference') === 'string' ? { reference: first(info, 'PaymentReference') as string } : {}),
    ...(typeof first(info, 'PaymentStatus') === 'string' ? { status: first(info, 'PaymentStatus') as string } : {}),
    ...(typeof amount === 'number' ? { amount } : {}),
    ...(typeof first(info, 'PaymentCurrency') === 'string' ? { currency: first(info, 'PaymentCurrency') as string } : {}),
    running: info.status.name === 'RUNNING',
    startTime: info.startTime.toISOString(),
    ...(info.closeTime ? { closeTime: info.closeTime.toISOString() } : {}),
  };
}

/** One list of what needs a person (newest first), at most `limit` items. */
export async function listAttention(ctx: Pick<StarterContext, 'client'>, kind: AttentionKind, opts: { limit?: number } = {}): Promise<AttentionItem[]> {
  const items: AttentionItem[] = [];
  const limit = opts.limit ?? 100;
  for await (const info of ctx.client.workflow.list({ query: ATTENTION_QUERIES[kind] })) {
    items.push(toItem(info));
    if (items.length >= limit) break;
  }
  return items;
}

/** Counts per list: what the operator's day starts with. */
export async function attentionSummary(ctx: Pick<StarterContext, 'client'>): Promise<Record<AttentionKind, number>> {
  const out = {} as Record<AttentionKind, number>;
  for (const kind of ATTENTION_KINDS) out[kind] = (await ctx.client.workflow.count(ATTENTION_QUERIES[kind])).count;
  return out;
}

/** Resolves a parked payment, POS sale or vend (resolveOutcome), recorded on the flow; refused unless it is parked. */
export function resolveParkedFlow(ctx: Pick<StarterContext, 'client'>, workflowId: string, input: ResolveOutcomeInput): Promise<OutcomeResolution> {
  return retryTransient('resolve outcome', () => ctx.client.workflow.getHandle(workflowId).executeUpdate(resolveOutcomeUpdate, { args: [input] }));
}

/**
 * Releases an unmatched webhook: its events are forwarded to `toWorkflowId` when given (the flow
 * takes them as hints and verifies its own reference with the service), and the holder ends.
 * Returns the events it held.
 */
export async function releaseUnmatchedWebhook(ctx: { client: Client }, holderWorkflowId: string, opts: { toWorkflowId?: string } = {}): Promise<PaymentWebhookEvent[]> {
  const holder = ctx.client.workflow.getHandle(holderWorkflowId);
  const events = await retryTransient('unmatched webhooks', () => holder.query(unmatchedWebhookQuery));
  if (opts.toWorkflowId) {
    const target = ctx.client.workflow.getHandle(opts.toWorkflowId);
    for (const event of events) await retryTransient('forward webhook', () => target.signal(paymentWebhookSignal, event));
  }
  await retryTransient('release unmatched', () => holder.signal(releaseUnmatchedSignal));
  return events;
}
