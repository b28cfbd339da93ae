// Merchant events from a backend's side (docs/events.md): where a flow's events go, and the
// operator's tools over the deliveries (`cli notify list | redeliver | replay`).
//  - Where events go is the deployment's (the worker's NOTIFY_URL, read at delivery), unless a
//    starter input gives its own `notify.url`: a process that only starts flows needs neither.
//  - Deliveries are merchantEventDeliveryWorkflow runs, one per event id, found by the search
//    attributes every flow keeps: PaymentFlow = 'merchant-event', PaymentReference = the flow's
//    reference, PaymentStatus = delivering / delivered / delivery_failed / gone / not_configured.
//  - redeliver starts a new run under the same id, with the same event (the closed run's result):
//    the merchant gets the same id again and acts on it once.
import { WorkflowNotFoundError, type WorkflowExecutionInfo } from '@temporalio/client';
import {
  MERCHANT_EVENT_FLOW,
  type MerchantEventDeliveryState,
  type MerchantEventDeliveryStatus,
} from '../shared/merchant-event';
import { PaymentReference, PaymentStatus } from '../shared/search-attributes';
import { StarterInputError } from '../shared/input-error';
import { flowStartOptions } from '../shared/flow-summary';
import type { StarterContext } from './connect';
import { retryTransient } from './temporal-retry';

export interface MerchantEventRow {
  eventId: string;
  reference?: string;
  status?: string;
  startedAt: string;
  closedAt?: string;
}

export interface ListMerchantEventsInput {
  /** Only deliveries that gave up (delivery_failed). */
  failed?: boolean;
  /** Only deliveries started at or after this time. */
  since?: Date;
  /** Only this flow's reference. */
  reference?: string;
  limit?: number;
}

const quoted = (v: string) => `'${v.replace(/'/g, "\\'")}'`;

/** The visibility query of a listing (also usable in the Web UI). */
export function merchantEventQuery(input: ListMerchantEventsInput): string {
  const parts = [`PaymentFlow = '${MERCHANT_EVENT_FLOW}'`];
  if (input.failed) parts.push(`PaymentStatus = 'delivery_failed'`);
  if (input.reference) parts.push(`PaymentReference = ${quoted(input.reference)}`);
  if (input.since) parts.push(`StartTime >= '${input.since.toISOString()}'`);
  return parts.join(' AND ');
}

const rowOf = (info: WorkflowExecutionInfo): MerchantEventRow => ({
  eventId: info.workflowId,
  reference: info.typedSearchAttributes.get(PaymentReference),
  status: info.typedSearchAttributes.get(PaymentStatus),
  startedAt: info.startTime.toISOString(),
  ...(info.closeTime ? { closedAt: info.closeTime.toISOString() } : {}),
});

export async function listMerchantEvents(
  ctx: Pick<StarterContext, 'client'>,
  input: ListMerchantEventsInput = {},
): Promise<MerchantEventRow[]> {
  const limit = input.limit ?? 100;
  const rows: MerchantEventRow[] = [];
  for await (const info of ctx.client.workflow.list({ query: merchantEventQuery(input) })) {
    rows.push(rowOf(info));
    if (rows.length >= limit) break;
  }
  return rows;
}

/** What a redelivery did: started a new run, or why not. */
export interface Redelivery {
  eventId: string;
  outcome: 'started' | 'still-delivering';
  previous?: MerchantEventDeliveryStatus;
}

/**
 * Delivers an event again under the same id. A delivery still running is left alone (it is
 * retrying already); an unknown id is a StarterInputError naming the id.
 */
export async function redeliverMerchantEvent(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  eventId: string,
): Promise<Redelivery> {
  const handle = ctx.client.workflow.getHandle(eventId);
  const described = await retryTransient('describe merchant event', () => handle.describe()).catch((err: unknown) => {
    if (err instanceof WorkflowNotFoundError)
      throw new StarterInputError('merchant event', [{ field: 'id', rule: 'must name a merchant event' }]);
    throw err;
  });
  if (described.status.name === 'RUNNING') return { eventId, outcome: 'still-delivering' };
  const last = (await handle.result().catch(() => undefined)) as MerchantEventDeliveryState | undefined;
  if (!last?.input)
    throw new StarterInputError('merchant event', [
      { field: 'id', rule: 'must name a delivery that ended on its own (this one was terminated or failed)' },
    ]);
  await retryTransient('redeliver merchant event', () =>
    ctx.client.workflow.start('merchantEventDeliveryWorkflow', {
      workflowId: eventId,
      taskQueue: ctx.taskQueue,
      args: [last.input],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      ...flowStartOptions('merchantEventDeliveryWorkflow', {
        flow: MERCHANT_EVENT_FLOW,
        reference: last.reference,
        status: 'delivering',
      }),
    }),
  );
  return { eventId, outcome: 'started', previous: last.status };
}

/** Delivers again every event whose delivery started since `since` and has ended (merchant restored from a backup). */
export async function replayMerchantEvents(
  ctx: Pick<StarterContext, 'client' | 'taskQueue'>,
  since: Date,
): Promise<Redelivery[]> {
  const rows = await listMerchantEvents(ctx, { since, limit: 10_000 });
  // One row per run: an event redelivered before has several, and is delivered again once.
  const eventIds = [...new Set(rows.map((r) => r.eventId))];
  const done: Redelivery[] = [];
  for (const eventId of eventIds) done.push(await redeliverMerchantEvent(ctx, eventId));
  return done;
}
