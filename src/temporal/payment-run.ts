// The payment flow's own run under `payment-<reference>`. A webhook that arrives after the flow
// closed (a late redelivery) starts a holder under the same id (src/workflows/webhook-inbox.ts),
// which then is the id's latest run; whoever asks about the payment wants the flow's run instead.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { paymentWorkflowId } from '../shared/payment-webhook';

export const WEBHOOK_HOLDER_TYPE = 'unmatchedPaymentWebhookWorkflow';

/** References that may go into a visibility query as they are (anything else is never looked up by type). */
const QUERYABLE_REFERENCE = /^[A-Za-z0-9_.:-]{1,100}$/;

/**
 * The flow's run: the latest one, unless that is a webhook holder, then the newest run of another
 * type (`behindHolder`: a holder stood in front of it).
 */
export async function paymentFlowRun(
  client: Client,
  reference: string,
): Promise<{ handle: WorkflowHandle; behindHolder: boolean }> {
  const workflowId = paymentWorkflowId(reference);
  const latest = client.workflow.getHandle(workflowId);
  const d = await latest.describe();
  if (d.type !== WEBHOOK_HOLDER_TYPE || !QUERYABLE_REFERENCE.test(reference))
    return { handle: latest, behindHolder: false };
  for await (const run of client.workflow.list({
    query: `WorkflowId = '${workflowId}' AND WorkflowType != '${WEBHOOK_HOLDER_TYPE}'`,
  })) {
    return { handle: client.workflow.getHandle(workflowId, run.runId), behindHolder: true };
  }
  return { handle: latest, behindHolder: false };
}
