// The two kinds of operation of the `payments` Nexus service, and what they share. A start operation
// (flowOperation) starts one flow under its starter's id, search attributes and duplicate rule, with
// its caller in the memo; cancelling it reaches the flow only for that caller. A step (ownStep) acts
// on a flow the caller started and answers at once; on any other flow it answers as for an unknown
// reference (./caller.ts). Bad input is a BAD_REQUEST naming each field and rule; a step the flow
// refuses fails the operation with the flow's reason; neither is retried.
import * as nexus from 'nexus-rpc';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { getClient, TemporalOperationHandler, type TemporalOperationResult } from '@temporalio/nexus';
import type { z } from 'zod';
import { flowStartMetadata } from '../shared/flow-summary';
import { StarterInputError, parseStarterInput } from '../shared/input-error';
import { paymentSearchAttributes, type PaymentSearchFields } from '../shared/search-attributes';
import type { StarterContext } from '../starters/connect';
import { PosPreAuthRefusedError } from '../starters/pos-preauth';
import { callerOf, NEXUS_CALLER_MEMO, notFoundForCaller, requireOwnFlow, type NexusCaller } from './caller';

export interface FlowStartSpec {
  workflowType: string;
  workflowId: string;
  input: unknown;
  search: PaymentSearchFields;
}

/** Input refused by its schema: BAD_REQUEST naming every broken rule (the caller's workflow sees it, no retry). */
export function parsed<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.output<S> {
  try {
    return parseStarterInput(schema, raw, what);
  } catch (err) {
    if (err instanceof StarterInputError) throw new nexus.HandlerError('BAD_REQUEST', err.message);
    throw err;
  }
}

export const badRequest = (message: string) => new nexus.HandlerError('BAD_REQUEST', message);

/** A flow refused a step (an Update's validator or handler): the operation fails with its reason, never retried. */
export async function refusalsAsFailures<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof StarterInputError) throw badRequest(err.message);
    if (err instanceof WorkflowUpdateFailedError)
      throw new nexus.OperationError('failed', err.cause instanceof Error ? err.cause.message : err.message);
    if (err instanceof PosPreAuthRefusedError) throw new nexus.OperationError('failed', err.message);
    throw err;
  }
}

/** A start whose workflow takes the caller's input as it came (the workflow parses it again); `v` is it parsed. */
export function asGiven<V>(raw: unknown, v: V, start: (v: V) => Omit<FlowStartSpec, 'input'>): FlowStartSpec {
  return { ...start(v), input: raw };
}

/** How a flow hears its caller's cancel: by default a Temporal cancel of its run; a flow with a cancel of its own uses that. */
export type CancelFlow = (workflowId: string) => Promise<void>;

/** The answer to a cancel of a flow this caller did not start (or a token that names none of ours). */
const notOurFlow = () => notFoundForCaller('token', 'flow');

/**
 * A workflow-run operation: the flow started under its starter's id and attributes, its caller in
 * the memo; a taken reference refused. Cancelling it reaches the flow only for the caller that
 * started it. The SDK's public TemporalOperationHandler writes the operation token at start and reads
 * it back at cancel (no SDK internals here); only a workflow run's token names one of our flows.
 */
export function flowOperation<I, O>(spec: (input: I) => FlowStartSpec, cancelFlow?: CancelFlow) {
  return new TemporalOperationHandler<I, O>({
    start: async (ctx, client, input) => {
      const s = spec(input);
      const caller: NexusCaller = callerOf(ctx);
      try {
        return (await client.startWorkflow(s.workflowType, {
          workflowId: s.workflowId,
          args: [s.input],
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          workflowIdConflictPolicy: 'FAIL',
          typedSearchAttributes: paymentSearchAttributes(s.search),
          memo: { [NEXUS_CALLER_MEMO]: caller },
          ...flowStartMetadata(s.workflowType, s.search),
        })) as TemporalOperationResult<O>;
      } catch (err) {
        // A Nexus retry of the same request is deduplicated by the server (its request id); this is
        // another start. References are one space with the service's, so a taken one cannot be
        // answered as a free one; the answer names no owner and no state (docs/nexus.md).
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          throw badRequest(`reference already started: ${s.workflowId}`);
        throw err;
      }
    },
    cancelWorkflowRun: async (ctx, { workflowId }) => {
      await requireOwnFlow(workflowId, callerOf(ctx), notOurFlow);
      if (cancelFlow) return cancelFlow(workflowId);
      await getClient().workflow.getHandle(workflowId).cancel();
    },
    // We never answer with an Update's or an activity's token: such a token names none of our flows
    // (the SDK's default would cancel any activity by its id, unchecked).
    cancelWorkflowUpdate: async () => {
      throw notOurFlow();
    },
    cancelActivity: async () => {
      throw notOurFlow();
    },
  });
}

/** A step on a flow: runs only if this caller started `workflowId`; else the answer of an unknown reference. */
export function ownStep<I, O>(
  schema: z.ZodType<I>,
  what: string,
  target: (v: I) => { workflowId: string; field: string; flow: string },
  step: (v: I, ctx: nexus.StartOperationContext) => Promise<O>,
) {
  return async (ctx: nexus.StartOperationContext, raw: unknown): Promise<O> => {
    const v = parsed(schema, raw, what);
    const t = target(v);
    await requireOwnFlow(t.workflowId, callerOf(ctx), () => notFoundForCaller(t.field, t.flow));
    return refusalsAsFailures(() => step(v, ctx));
  };
}

/** The starters' helpers, on the handler's own client. */
export const onClient = (): StarterContext => ({ client: getClient() }) as unknown as StarterContext;
