// Registers the project's custom search attributes on a Temporal namespace: whatever
// SEARCH_ATTRIBUTE_REGISTRATION holds (src/shared/search-attributes.ts), never a second list.
// Used by the one-shot `search-attributes` service in docker-compose.yml and the Kubernetes Job
// (deploy/k8s), both running `node dist/workers/register-search-attributes.js`. Idempotent: an
// attribute already registered with the same type is left alone; one with another type is an error
// (a workflow upserting it would fail), reported by name.
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_REGISTRATION } from '../shared/search-attributes';

const { IndexedValueType } = temporal.api.enums.v1;
type IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** 'Keyword' → INDEXED_VALUE_TYPE_KEYWORD, 'KeywordList' → INDEXED_VALUE_TYPE_KEYWORD_LIST, … */
export function indexedValueType(cliType: string): IndexedValueType {
  const key =
    `INDEXED_VALUE_TYPE_${cliType.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}` as keyof typeof IndexedValueType;
  const value = IndexedValueType[key];
  if (typeof value !== 'number' || value === IndexedValueType.INDEXED_VALUE_TYPE_UNSPECIFIED)
    throw new Error(`unknown search attribute type ${cliType}`);
  return value;
}

export class SearchAttributeConflictError extends Error {
  constructor(readonly conflicts: { name: string; wanted: string; registered: string }[]) {
    super(
      `search attributes registered with another type: ${conflicts.map((c) => `${c.name} is ${c.registered}, the workflows need ${c.wanted}`).join('; ')}`,
    );
    this.name = 'SearchAttributeConflictError';
  }
}

export interface SearchAttributeSetupResult {
  namespace: string;
  added: string[];
  alreadyPresent: string[];
}

export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  registration: Readonly<Record<string, string>> = SEARCH_ATTRIBUTE_REGISTRATION,
): Promise<SearchAttributeSetupResult> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const registered: Record<string, IndexedValueType> = { ...(existing.customAttributes ?? {}) };
  const added: string[] = [];
  const alreadyPresent: string[] = [];
  const conflicts: { name: string; wanted: string; registered: string }[] = [];
  const missing: Record<string, IndexedValueType> = {};
  for (const [name, type] of Object.entries(registration)) {
    const wanted = indexedValueType(type);
    const have = registered[name];
    if (have === undefined || have === null) missing[name] = wanted;
    else if (have === wanted) alreadyPresent.push(name);
    else conflicts.push({ name, wanted: type, registered: IndexedValueType[have] ?? String(have) });
  }
  if (conflicts.length > 0) throw new SearchAttributeConflictError(conflicts);
  if (Object.keys(missing).length > 0) {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
    added.push(...Object.keys(missing));
  }
  return { namespace, added, alreadyPresent };
}

/** gRPC status codes the namespace check tells apart (@grpc/grpc-js `status`). */
const GRPC_NOT_FOUND = 5;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;

/** The worker's namespace check: `problem` is the one line to refuse with; `unchecked` why it could not look. */
export interface NamespaceCheck {
  problem?: string;
  unchecked?: string;
}

/** `temporal operator search-attribute create` for `names`, one command per type (the CLI takes one --type). */
export function searchAttributeCreateCommand(
  target: { address: string; namespace: string },
  names: readonly string[],
  registration: Readonly<Record<string, string>> = SEARCH_ATTRIBUTE_REGISTRATION,
): string {
  const byType = new Map<string, string[]>();
  for (const name of names) byType.set(registration[name], [...(byType.get(registration[name]) ?? []), name]);
  return [...byType]
    .map(
      ([type, ofType]) =>
        `temporal operator search-attribute create --address ${target.address} --namespace ${target.namespace} ${ofType.map((n) => `--name ${n}`).join(' ')} --type ${type}`,
    )
    .join(' && ');
}

const grpcCode = (err: unknown): number | undefined => (err as { code?: number } | null)?.code;

/**
 * Checks, at worker start, that `target.namespace` exists and holds every search attribute the flows
 * write, with its type: a missing one fails each workflow task that upserts it
 * (WorkflowTaskFailedCauseBadSearchAttributes) and its flows sit, so the worker refuses to start instead.
 * A server that does not let this connection list attributes (a restricted API key) leaves it unchecked.
 */
export async function checkNamespace(
  connection: Pick<Connection, 'workflowService' | 'operatorService'>,
  target: { address: string; namespace: string },
  registration: Readonly<Record<string, string>> = SEARCH_ATTRIBUTE_REGISTRATION,
): Promise<NamespaceCheck> {
  const { address, namespace } = target;
  let registered: Record<string, IndexedValueType>;
  try {
    await connection.workflowService.describeNamespace({ namespace });
    registered = { ...((await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {}) };
  } catch (err) {
    const code = grpcCode(err);
    if (code === GRPC_NOT_FOUND)
      return {
        problem: `TEMPORAL_NAMESPACE: namespace ${namespace} does not exist on ${address}; create it: temporal operator namespace create --address ${address} --namespace ${namespace}, then register the search attributes: ${searchAttributeCreateCommand(target, Object.keys(registration), registration)}`,
      };
    if (code === GRPC_PERMISSION_DENIED || code === GRPC_UNIMPLEMENTED) return { unchecked: (err as Error).message };
    throw err;
  }
  const missing = Object.keys(registration).filter(
    (name) => registered[name] === undefined || registered[name] === null,
  );
  const conflicts = Object.entries(registration).filter(
    ([name, type]) => !missing.includes(name) && registered[name] !== indexedValueType(type),
  );
  if (missing.length > 0)
    return {
      problem: `TEMPORAL_NAMESPACE: namespace ${namespace} lacks the search attribute${missing.length > 1 ? 's' : ''} ${missing.map((n) => `${n} (${registration[n]})`).join(', ')} that the flows write; register ${missing.length > 1 ? 'them' : 'it'}: ${searchAttributeCreateCommand(target, missing, registration)}`,
    };
  if (conflicts.length > 0)
    return {
      problem: `TEMPORAL_NAMESPACE: namespace ${namespace} has ${conflicts.map(([n, type]) => `${n} registered as ${IndexedValueType[registered[n]] ?? registered[n]} where the flows write ${type}`).join(', ')}; remove and register again: ${conflicts.map(([n]) => `temporal operator search-attribute remove --address ${address} --namespace ${namespace} --name ${n} --yes`).join(' && ')} && ${searchAttributeCreateCommand(
        target,
        conflicts.map(([n]) => n),
        registration,
      )}`,
    };
  return {};
}
