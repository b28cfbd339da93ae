// Who called, and whose flow it is (issue #42 §4, docs/nexus.md "Who owns a flow").
//
// The TS SDK (1.24.0) gives a Nexus handler no caller namespace: operationInfo() names our own
// namespace, task queue and the endpoint the request came through. The endpoint is set by the
// server's routing, not by the caller, and is known on every request (start and cancel), so it is the
// caller's identity: one endpoint per caller namespace. A start also carries the server-written link
// to the caller's workflow event; its namespace is recorded too and, where a request carries one,
// must match as well (two namespaces sharing an endpoint still cannot reach each other's flows).
//
// A flow started through Nexus records its caller in its memo at start (`nexusCaller`). An operation
// on a flow (a debit, an OTP, a state, a cancel...) first checks that record; a flow that is unknown,
// ended without trace, started by the starters or by another caller gets one and the same refusal, so
// the answer never tells whether the reference exists.
import { WorkflowNotFoundError } from '@temporalio/client';
import { getClient, operationInfo } from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';

/** The memo field that binds a flow to the caller that started it. */
export const NEXUS_CALLER_MEMO = 'nexusCaller';

export interface NexusCaller {
  /** The Nexus endpoint the request came through (one per caller namespace). */
  endpoint: string;
  /** The caller's namespace, from the server's link to the calling workflow (start requests only). */
  namespace?: string;
}

/** The caller of the request being handled: its endpoint, and its namespace when the request links one. */
export function callerOf(ctx: nexus.OperationContext): NexusCaller {
  const { endpoint } = operationInfo();
  const links = 'inboundLinks' in ctx ? (ctx as nexus.StartOperationContext).inboundLinks : [];
  if (!endpoint) throw new nexus.HandlerError('INTERNAL', 'the Nexus request names no endpoint (server 1.30 or later)');
  for (const link of links ?? []) {
    const namespace = workflowEventNamespace(link);
    if (namespace) return { endpoint, namespace };
  }
  return { endpoint };
}

/**
 * The namespace of a workflow event link, the form the server writes for the calling workflow's event:
 * `temporal:///namespaces/<namespace>/workflows/<workflow id>/<run id>/history?<event reference>`
 * (each part URI-encoded). Any other link names no caller (undefined). Read here rather than with the
 * SDK's converter, which is not public in 1.24.0; test/nexus/caller-links.test.ts reads the links the
 * SDK itself writes, so a change of form in an SDK upgrade fails there.
 */
export function workflowEventNamespace(link: nexus.Link): string | undefined {
  if (link.url.protocol !== 'temporal:') return undefined;
  const parts = link.url.pathname.split('/');
  if (parts.length !== 7 || parts[0] !== '' || parts[1] !== 'namespaces' || parts[3] !== 'workflows') return undefined;
  if (parts[6] !== 'history' || !parts[4] || !parts[5]) return undefined;
  try {
    return decodeURIComponent(parts[2]) || undefined;
  } catch {
    return undefined; // a malformed escape names no one
  }
}

/** Whether `recorded` (a flow's memo field) is this caller. */
export function isCaller(recorded: unknown, caller: NexusCaller): boolean {
  if (typeof recorded !== 'object' || recorded === null) return false;
  const r = recorded as Partial<NexusCaller>;
  if (r.endpoint !== caller.endpoint) return false;
  return r.namespace === undefined || caller.namespace === undefined || r.namespace === caller.namespace;
}

/** The one answer for a flow this caller may not reach, whether or not it exists. */
export function notFoundForCaller(field: string, what: string): nexus.HandlerError {
  return new nexus.HandlerError(
    'BAD_REQUEST',
    `${field}: no ${what} by this reference was started through this endpoint`,
  );
}

/**
 * Goes on only if `workflowId` is a flow this caller started; otherwise throws notFoundForCaller
 * (an unknown id and another caller's flow are answered alike).
 */
export async function requireOwnFlow(
  workflowId: string,
  caller: NexusCaller,
  refusal: () => nexus.HandlerError,
): Promise<void> {
  let recorded: unknown;
  try {
    recorded = (await getClient().workflow.getHandle(workflowId).describe()).memo?.[NEXUS_CALLER_MEMO];
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw refusal();
    throw err;
  }
  if (!isCaller(recorded, caller)) throw refusal();
}
