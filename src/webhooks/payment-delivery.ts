// Where a verified payment webhook (E-1) goes, cheapest first:
//  1. a signal to payment-<reference>: lands in the running flow that owns the reference;
//  2. no running workflow there: a look-up (describe) of that id. A payment flow that closed as
//     success already had the service's answer (it confirms by verify, not by the webhook): the
//     webhook is acknowledged and starts nothing;
//  3. otherwise a holder workflow starts under that id with the event (signalWithStart), so nothing
//     is lost: an early webhook (the flow has not started yet), an orphan one (no flow owns the
//     reference), or a late one for a flow that ended without success (expired, failed, cancelled):
//     money that arrived after the flow's verdict, which reconciliation reports as a late payment.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { paymentWebhookSignal, paymentWorkflowId, type PaymentWebhookEvent } from '../shared/payment-webhook';
import { PaymentStatus } from '../shared/search-attributes';
import { flowStartOptions } from '../shared/flow-summary';
import { WEBHOOK_HOLDER_TYPE } from '../temporal/payment-run';
import type { unmatchedPaymentWebhookWorkflow } from '../workflows/webhook-inbox';

/** Where the event went: the running flow, nowhere (its flow had closed as success), or a new holder. */
export type PaymentDelivery = 'signalled' | 'flow-closed' | 'held';

export async function deliverPaymentWebhook(
  client: Client,
  taskQueue: string,
  event: PaymentWebhookEvent,
): Promise<PaymentDelivery> {
  const workflowId = paymentWorkflowId(event.transactionRef);
  const handle = client.workflow.getHandle(workflowId);
  try {
    await handle.signal(paymentWebhookSignal, event);
    return 'signalled';
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  const latest = await handle.describe().catch((err: unknown) => {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  });
  // Closed as success (the signal found nothing running): late, and nothing to add.
  if (
    latest &&
    latest.type !== WEBHOOK_HOLDER_TYPE &&
    latest.status.name !== 'RUNNING' &&
    latest.typedSearchAttributes.get(PaymentStatus) === 'success'
  )
    return 'flow-closed';
  // No flow owns it, or one started between the two calls: signalWithStart lands in whichever runs.
  await client.workflow.signalWithStart<typeof unmatchedPaymentWebhookWorkflow, [PaymentWebhookEvent]>(
    WEBHOOK_HOLDER_TYPE,
    {
      workflowId,
      taskQueue,
      args: [{}],
      signal: paymentWebhookSignal,
      signalArgs: [event],
      ...flowStartOptions(WEBHOOK_HOLDER_TYPE, {
        flow: 'unmatched-webhook',
        reference: event.transactionRef,
        status: 'unmatched',
        amount: event.amount,
        currency: event.currency,
      }),
    },
  );
  return latest && latest.status.name === 'RUNNING' ? 'signalled' : 'held';
}
