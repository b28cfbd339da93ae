// Registers the project's custom search attributes on a Temporal namespace: whatever
// SEARCH_ATTRIBUTE_REGISTRATION holds (src/shared/search-attributes.ts), never a second list.
// Used by the one-shot `search-attributes` service in docker-compose.yml and the Kubernetes Job
// (deploy/k8s), both running `node dist/temporal/register-search-attributes.js`. Idempotent: an
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
